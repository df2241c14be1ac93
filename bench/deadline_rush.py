"""A deadline rush with two-phase grading against every test at hand-in, on the local
Slurm (issue #26's benchmark).

1. **Capacity**: the example course graded in batch mode with the full suite (every
   submission: no dedupe, no compile cache); X_full = submissions / wall time.
2. **Rush**: a deadline-rush trace (arrivals growing toward the deadline) whose mean
   rate is ``--load`` x X_full, replayed twice into `gradeline serve`: once grading
   every test at hand-in, once with a course file (each assignment's visible groups
   only: the Kattis default, sample). Both report the time from hand-in to feedback
   stored (p50, p95).
3. **Bulk**: after the second rush, `gradeline deadline` grades each student's counting
   submission with the full suite as one array job at the course's bulk priority; its
   makespan is the wall time of that command.

With ``--flood N`` it measures a flood instead: the same rush (visible groups only)
three times -- as it is, with one student handing in N times more during its second
half, and with that student held to a hand-in limit (``--flood-limit``, a token
bucket: what the desk refuses never reaches the spool; ``course.handin_limits`` decides, as
the desk does) -- and reports the other students' p50 and p95 from hand-in to
feedback in each.

Run on purpose (minutes), as root with the local cluster and database up::

    SLURM_CONF=/var/lib/gradeline/slurm/slurm.conf .venv/bin/python bench/deadline_rush.py \\
        --count 120 --load 1.5
    SLURM_CONF=... .venv/bin/python bench/deadline_rush.py --count 120 --load 0.7 --flood 200

Writes ``bench/results/deadline/summary.json`` (``flood.json`` with ``--flood``).
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import yaml

from grader.course.handin_limits import allowance
from grader.course.spec import LimitsSpec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve_load import analyse, capacity, fresh_env, gl, replay_into_serve

OUT = Path(__file__).resolve().parent / "results" / "deadline"
EXAMPLES = Path(__file__).resolve().parents[1] / "grader" / "examples"


def course_file(work: Path, name: str) -> Path:
    """Every assignment of the corpus with the Kattis default visibility (sample
    visible) and a deadline already past when the bulk phase runs."""
    p = work / f"{name}.yaml"
    p.write_text(yaml.safe_dump({
        "course": name, "assignments": [
            {"name": a, "package": str(EXAMPLES / a), "deadline": "2000-01-01T00:00:00+00:00"}
            for a in ("bigsum", "meanstd", "spread")]}))
    return p


def rush(work: Path, label: str, trace: Path, course: Path | None) -> dict[str, Any]:
    """The trace replayed into a running serve; its analysis (and environment)."""
    name = f"gl_bench_{label}"
    env = fresh_env(name)
    spool = work / f"spool-{label}"
    extra = ["--course-file", str(course)] if course else []
    replay_into_serve(work, label, trace, env, spool, extra, extra)
    a = analyse(env, OUT / f"{label}.json", None)
    return {"label": label, "env": env, "spool": str(spool), "count": a["count"],
            "response": a["response"], "service_mean_s": a["service"]["mean"]}


FLOODER = "flooder"


def flooded(trace: Path, out: Path, n: int, duration: float,
            limit: LimitsSpec | None) -> int:
    """``trace`` plus ``n`` hand-ins of one student spread over its second half (each
    a copy of an existing submission); with ``limit``, only those the limit takes.
    Returns how many of the flood are in ``out``."""
    rows = list(csv.DictReader(trace.open()))
    t0 = datetime(2026, 12, 1, tzinfo=UTC)
    taken: list[datetime] = []
    extra = []
    for i in range(n):
        at = duration / 2 + (duration / 2) * i / n
        when = t0 + timedelta(seconds=at)
        if limit is not None and not allowance(limit, taken, when).allowed:
            continue
        taken.append(when)
        src = rows[i % len(rows)]
        extra.append({**src, "time": f"{at:.3f}", "student": FLOODER})
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(sorted([*rows, *extra], key=lambda r: float(r["time"])))
    return len(extra)


def others(env: dict[str, str]) -> dict[str, float]:
    """p50 and p95 (s) from hand-in to feedback stored of everyone but the flooder."""
    with psycopg.connect(env["GRADELINE_DB_URL"]) as c:
        rows = [float(r[0]) for r in c.execute(
            "SELECT extract(epoch FROM stored_at - arrived_at) FROM submissions "
            "WHERE student <> %s AND stored_at IS NOT NULL", (FLOODER,)).fetchall()]
    rows.sort()
    return {"count": len(rows), "p50": round(statistics.median(rows), 2),
            "p95": round(rows[int(0.95 * (len(rows) - 1))], 2)}


def flood_main(args: argparse.Namespace, work: Path, trace: Path, duration: float) -> int:
    """The rush as it is, flooded, and flooded under a limit (see the docstring)."""
    per_hour, burst = (float(x) for x in args.flood_limit.split("/"))
    limit = LimitsSpec(per_hour=per_hour, burst=int(burst))
    table = {}
    for label, lim in (("no_flood", None), ("flood", "none"), ("flood_limited", limit)):
        course = course_file(work, f"gl_bench_{label}")  # the course is named as its run
        t = trace
        kept = 0
        if lim is not None:
            t = work / f"{label}.csv"
            kept = flooded(trace, t, args.flood, duration, None if lim == "none" else limit)
        r = rush(work, label, t, course)
        table[label] = {"flood_taken": kept, "others": others(r["env"])}
        print(f"{label}: flood hand-ins taken {kept}; others {table[label]['others']}",
              flush=True)
    summary = {"count": args.count, "load": args.load, "flood": args.flood,
               "limit": {"per_hour": per_hour, "burst": int(burst), "past_limit": "refuse"},
               "rush_duration_s": duration, "runs": table}
    (OUT / "flood.json").write_text(json.dumps(summary, indent=2))
    base = table["no_flood"]["others"]["p95"]
    print("the other students' p95 hand-in to feedback: " + ", ".join(
        f"{k} {v['others']['p95']:.1f} s ({v['others']['p95'] / base:.2f}x)"
        for k, v in table.items()) + f"; written {OUT / 'flood.json'}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=120, help="submissions in the rush")
    ap.add_argument("--load", type=float, default=1.5, help="mean rate, x full capacity")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--flood", type=int, default=0, metavar="N",
                    help="one student hands in N more times in the rush's second half")
    ap.add_argument("--flood-limit", default="12/3", metavar="PER_HOUR/BURST",
                    help="the flood's hand-in limit in its third run (default %(default)s)")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gl-deadline-", dir="/var/tmp") as tmp:
        work = Path(tmp)
        cap = capacity(work, args.count, args.seed)
        x = cap["throughput"]
        duration = args.count / (args.load * x)
        print(f"full-suite capacity (batch mode): {x:.2f}/s; the rush: {args.count} "
              f"submissions over {duration:.1f} s (mean {args.load:g} x capacity)", flush=True)
        trace = work / "rush.csv"
        gl("trace", "gen", "rush", "--corpus", str(work / "course"), "--count",
           str(args.count), "--duration", f"{duration:.2f}", "--seed", str(args.seed),
           "-o", str(trace))
        if args.flood:
            return flood_main(args, work, trace, duration)
        full = rush(work, "rush_full", trace, None)
        course = course_file(work, "gl_bench_rush_two")
        two = rush(work, "rush_two", trace, course)
        t0 = time.monotonic()
        out = gl("deadline", "--course-file", str(course), "--spool", two["spool"],
                 "--executor", "slurm", env=two["env"])
        makespan = time.monotonic() - t0
        print(out.strip(), flush=True)
    graded = sum(int(line.split(" graded now")[0].rsplit(",", 1)[1].split()[0])
                 for line in out.splitlines() if " graded now" in line)
    summary = {"capacity": cap, "load": args.load, "rush_duration_s": duration,
               "every_test": {k: full[k] for k in ("count", "response", "service_mean_s")},
               "two_phase": {k: two[k] for k in ("count", "response", "service_mean_s")},
               "bulk": {"graded": graded, "makespan_s": makespan}}
    (OUT / "summary.json").write_text(json.dumps(summary, indent=2))
    f95, t95 = full["response"]["p95"], two["response"]["p95"]
    print(f"hand-in to feedback, every test: p50 {full['response']['p50']:.1f} s, p95 "
          f"{f95:.1f} s; visible groups only: p50 {two['response']['p50']:.1f} s, p95 "
          f"{t95:.1f} s ({t95 / f95:.2f} of it)")
    print(f"bulk after the deadline: {graded} counting submissions with the full suite in "
          f"{makespan:.1f} s; written {OUT / 'summary.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
