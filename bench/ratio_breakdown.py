"""Where the pipeline/bare gap goes, in one round: the bare loop timed per
submission, then one pipeline run (no work avoidance, as bench/pipeline_ratio.sh),
and per assignment and language the core-seconds of each: compiling (gradeline: the
whole sandbox round trip), the tests (gradeline: the runner's wall time of each test,
then validation), gradeline's per-run overhead (the rest of each grading: requests,
namespaces, cgroups, work dirs), then the fixed costs around the gradings (first
grading after the command's start, its end after the last one, gaps in the pilots).

    .venv/bin/python bench/ratio_breakdown.py [--runtime apptainer|bwrap] [--count N]

The bare loop's own costs outside its two timed parts (bash, mktemp, find, the time
limit computed per submission) are not in its columns: its wall time is.
Needs: root, the local Slurm cluster (slurm/local-cluster.sh start), g++.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
G = str(ROOT / ".venv/bin/gradeline")
LANG = {"c": "c", "cpp": "cpp", "cc": "cpp", "py": "python3"}


def sh(*argv: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}).stdout.strip()


def bare(work: Path, jobs: Path) -> tuple[float, dict[tuple[str, str], list[float]]]:
    """The bare loop (as bench/pipeline_ratio.sh): wall seconds, and per (assignment,
    language) [submissions, compile s, tests s]."""
    log = work / "bare.log"
    t0 = time.monotonic()
    with jobs.open() as f:
        subprocess.run(["xargs", "-P", str(os.cpu_count() or 1), "-L", "1",
                        str(ROOT / "grader/measure/bare_one.sh")], stdin=f, check=True,
                       stderr=subprocess.DEVNULL, env={**os.environ, "BARE_LOG": str(log)})
    wall = time.monotonic() - t0
    problem_of = {src: prob.rsplit("/", 1)[1]
                  for prob, src in (line.split() for line in jobs.read_text().splitlines())}
    by: dict[tuple[str, str], list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for line in log.read_text().splitlines():
        src, start, compiled, end = line.split()
        row = by[(problem_of[src], LANG[src.rsplit(".", 1)[1]])]
        row[0] += 1
        if compiled == "-":
            row[1] += float(end) - float(start)
        else:
            row[1] += float(compiled) - float(start)
            row[2] += float(end) - float(compiled)
    return wall, by


def pipeline(work: Path, count: int, seed: int, runtime: str) -> tuple[float, str, float]:
    """One `gradeline run` through Slurm: wall seconds, its database, its start."""
    url = sh(G, "db", "fresh", "gradeline_breakdown")
    env = {"GRADELINE_DB_URL": url}
    sh(G, "corpus", str(work / "course"), "--count", str(count), "--seed", str(seed),
       "--submit-to", str(work / "spool"), "--course", "breakdown", env=env)
    start = time.time()
    t0 = time.monotonic()
    sh(G, "run", "--spool", str(work / "spool"), "--course", "breakdown", "--executor",
       "slurm", "--no-dedupe", env={**env, "GRADELINE_RUNTIME": runtime,
                                    "GRADELINE_COMPILE_CACHE": "0",
                                    "GRADELINE_COMPILE_ACCEL": "0"})
    return time.monotonic() - t0, url, start


QUERY = """
select r.record->>'problem', r.record->>'language', r.record->'timing',
       r.record->'runtime'->'slurm'->>'slurmd_nodename',
       extract(epoch from s.started_at), extract(epoch from s.finished_at),
       (select coalesce(sum((t->>'wall_time_s')::float), 0)
          from jsonb_array_elements(r.record->'tests') t
         where t->>'termination' in ('wall-time', 'memory'))
  from results r join submissions s on s.id = r.submission_id"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runtime", default="apptainer", choices=("apptainer", "bwrap"))
    ap.add_argument("--count", type=int, default=240)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gl-breakdown-", dir="/var/tmp") as tmp:
        work = Path(tmp)
        sh(G, "corpus", str(work / "course"), "--count", str(a.count), "--seed", str(a.seed))
        examples = Path(sh(G, "examples").splitlines()[0]).parent
        rows = (work / "course/manifest.csv").read_text().splitlines()[1:]
        jobs = work / "jobs.txt"
        jobs.write_text("".join(f"{examples / f[2]} {work / 'course' / f[5]}\n"
                                for f in (r.split(",") for r in rows)))
        print(f"course: {a.count} submissions (seed {a.seed}), {os.cpu_count()} cpus, "
              f"gradeline under {a.runtime}", flush=True)
        bare_wall, b = bare(work, jobs)
        pipe_wall, url, start = pipeline(work, a.count, a.seed, a.runtime)
        with psycopg.connect(url) as conn:
            got = conn.execute(QUERY).fetchall()
    g: dict[tuple[str, str], list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0,
                                                                             0.0, 0.0, 0.0])
    spans: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)
    for prob, lang, timing, node, s, e, limited in got:
        row = g[(prob, lang)]
        row[0] += 1
        row[1] += timing.get("compile_s", 0.0)
        row[2] += timing.get("run_s", 0.0)
        row[3] += timing.get("validate_s", 0.0)
        row[4] += timing.get("total_s", 0.0)
        row[5] += limited
        spans[node or "?"].append((float(s), float(e)))
    head = (f"{'assignment/language':22} {'n':>4} {'compile s':>17} {'tests s':>17} "
            f"{'gradeline only s':>26}")
    print(f"\nbare loop {bare_wall:.1f} s, pipeline {pipe_wall:.1f} s: ratio "
          f"{bare_wall / pipe_wall:.3f}\n\n{head}\n{'':22} {'':>4} {'bare':>8} "
          f"{'gl':>8} {'bare':>8} {'gl':>8} {'validate':>8} {'overhead':>8} "
          f"{'limits':>8}")
    tot = [0.0] * 7
    for k in sorted(set(b) | set(g)):
        bb, gg = b[k], g[k]
        overhead = gg[4] - gg[1] - gg[2] - gg[3]
        vals = (bb[1], gg[1], bb[2], gg[2], gg[3], overhead, gg[5])
        tot = [x + y for x, y in zip(tot, vals, strict=True)]
        print(f"{k[0] + '/' + k[1]:22} {int(gg[0] or bb[0]):4} "
              + " ".join(f"{v:8.2f}" for v in vals))
    print(f"{'total':22} {'':4} " + " ".join(f"{v:8.2f}" for v in tot))
    print("(gl tests: the runner's wall time of each test; limits: the part of it in "
          "tests ended at the wall-time or memory limit)")
    first = min(s for v in spans.values() for s, _ in v)
    last = max(e for v in spans.values() for _, e in v)
    print(f"\nfixed: first grading {first - start:.2f} s after `gradeline run`, the "
          f"command ended {start + pipe_wall - last:.2f} s after the last one")
    for node, v in sorted(spans.items()):
        v.sort()
        busy = sum(e - s for s, e in v)
        gaps = sum(max(0.0, v[i + 1][0] - v[i][1]) for i in range(len(v) - 1))
        print(f"pilot on {node}: {len(v)} gradings, busy {busy:.1f} s, gaps between "
              f"them {gaps:.2f} s, first {v[0][0] - start:.2f} s, last ended "
              f"{v[-1][1] - start:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
