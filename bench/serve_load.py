"""`gradeline serve` under load on the local Slurm, against batch mode.

1. **Capacity**: the course's submissions all in the spool, one `gradeline run`
   (batch mode, every submission graded: no dedupe, no compile cache); capacity
   X_batch = submissions / wall time.
2. **Saturation**: the same number of submissions arriving as a Poisson stream at
   ``--saturate`` x X_batch into a running `serve`; its throughput (first arrival to
   last result stored) over X_batch must be >= 0.95.
3. **70% load**: a Poisson stream at 0.7 x X_batch into `serve`; p95 feedback latency
   (arrival to result stored) must be <= 3 x mean service time + 10 s.
4. **Sweep** (``--sweep``): more offered loads, for the throughput and p95 curves
   against offered load and their knee, in the HTML report.

Run on purpose (minutes), as root with the local cluster and database up::

    SLURM_CONF=/var/lib/gradeline/slurm/slurm.conf .venv/bin/python bench/serve_load.py \
        --count 240 --sweep 0.3,0.5,0.9,1.2

Writes ``bench/results/serve/summary.json``, one analysis JSON per run and the report
(``report/index.html``, checked in headless Chromium).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchlib import BIN, gl

OUT = Path(__file__).resolve().parent / "results" / "serve"


def fresh_env(name: str) -> dict[str, str]:
    """A scratch database (nothing an earlier run stored is reused) and no compile
    cache: every submission costs its full grading."""
    url = gl("db", "fresh", name).strip().splitlines()[-1]
    return {**os.environ, "GRADELINE_DB_URL": url, "GRADELINE_COMPILE_CACHE": "0",
            "GRADELINE_COURSE": name}


def capacity(work: Path, count: int, seed: int) -> dict[str, Any]:
    env = fresh_env("gl_bench_batch")
    spool = work / "spool-batch"
    gl("corpus", str(work / "course"), "--count", str(count), "--seed", str(seed),
       "--submit-to", str(spool), "--course", "gl_bench_batch", env=env)
    t0 = time.monotonic()
    gl("run", "--spool", str(spool), "--executor", "slurm", "--no-dedupe", env=env)
    wall = time.monotonic() - t0
    a = analyse(env, work / "batch.json", None)
    return {"count": count, "wall_s": wall, "throughput": count / wall,
            "mean_service_s": a["service"]["mean"]}


def analyse(env: dict[str, str], out: Path, offered: float | None) -> dict[str, Any]:
    args = ["trace", "analyse", "--cores", str(os.cpu_count() or 1), "--json", str(out)]
    if offered is not None:
        args += ["--offered", f"{offered:.4f}"]
    gl(*args, env=env)
    return dict(json.loads(out.read_text()))


def replay_into_serve(work: Path, label: str, trace: Path, env: dict[str, str], spool: Path,
                      serve_args: list[str], replay_args: list[str]) -> None:
    """Replay ``trace`` (open arrivals) into a running ``serve`` on Slurm; return once
    the spool is empty and the server has drained (its log: ``serve-<label>.log``)."""
    log = (work / f"serve-{label}.log").open("w")
    serve = subprocess.Popen([str(BIN), "serve", "--spool", str(spool), "--executor", "slurm",
                              "--no-dedupe", "--report", "5", *serve_args],
                             env=env, stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True)
    try:
        gl("trace", "replay", str(trace), "--mode", "open", "--spool", str(spool),
           *replay_args, env=env)
        deadline = time.monotonic() + 1800
        while any((spool / d).exists() and any((spool / d).iterdir()) for d in ("new", "cur")):
            if time.monotonic() > deadline:
                sys.exit(f"{label}: not finished after 30 min; see {log.name}")
            time.sleep(0.5)
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=600)
        log.close()


def serve_run(work: Path, label: str, rate: float, count: int, seed: int,
              dispatch: str) -> dict[str, Any]:
    """A Poisson stream at ``rate`` into a running `serve`; its analysis."""
    name = f"gl_bench_{label}"
    env = fresh_env(name)
    spool = work / f"spool-{label}"
    trace = work / f"{label}.csv"
    gl("trace", "gen", "poisson", "--corpus", str(work / "course"), "--count", str(count),
       "--rate", f"{rate:.4f}", "--seed", str(seed), "-o", str(trace), env=env)
    replay_into_serve(work, label, trace, env, spool, ["--dispatch", dispatch], [])
    a = analyse(env, OUT / f"{label}.json", rate)
    return {"label": label, "dispatch": dispatch, "db": env["GRADELINE_DB_URL"],
            "course": name, "offered": rate, "count": a["count"],
            "throughput": a["throughput"], "response": a["response"],
            "service_mean_s": a["service"]["mean"], "queueing": a["queueing"],
            "utilization": a["utilization"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=240, help="submissions per run")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--saturate", type=float, default=2.0,
                    help="offered load of the saturation run, x capacity")
    ap.add_argument("--sweep", default="", help="more offered loads, x capacity (e.g. 0.3,0.9)")
    ap.add_argument("--dispatch", default="pilots",
                    help="serve's dispatch modes to measure, comma-separated (pilots,arrays); "
                         "the first is judged against the targets")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gl-serve-load-", dir="/var/tmp") as tmp:
        work = Path(tmp)
        cap = capacity(work, args.count, args.seed)
        x = cap["throughput"]
        print(f"capacity (batch mode): {args.count} submissions in {cap['wall_s']:.1f} s = "
              f"{x:.2f}/s; mean service {cap['mean_service_s']:.2f} s", flush=True)
        runs = []
        loads = [0.7, args.saturate] + [float(v) for v in args.sweep.split(",") if v]
        for i, load in enumerate(loads):
            for mode in args.dispatch.split(","):
                label = f"{mode}_load{load:g}".replace(".", "_")
                r = serve_run(work, label, load * x, args.count, args.seed + i, mode)
                r["load"] = load
                runs.append(r)
                print(f"serve ({mode}) at {load:.2f} x capacity ({load * x:.2f}/s): X "
                      f"{r['throughput']:.2f}/s ({r['throughput'] / x:.2f} of batch), response "
                      f"p50 {r['response']['p50']:.1f} p95 {r['response']['p95']:.1f} s, mean "
                      f"service {r['service_mean_s']:.2f} s", flush=True)
    first = args.dispatch.split(",")[0]
    mine = [r for r in runs if r["dispatch"] == first]
    at70, sat = mine[0], mine[1]
    bound = 3 * at70["service_mean_s"] + 10
    summary = {
        "capacity": cap, "runs": runs,
        "p95_at_70": at70["response"]["p95"], "p95_bound": bound,
        "p95_ok": at70["response"]["p95"] <= bound,
        "saturation_ratio": sat["throughput"] / x,
        "saturation_ok": sat["throughput"] / x >= 0.95,
    }
    (OUT / "summary.json").write_text(json.dumps(summary, indent=2))
    extra: list[str] = []
    for r in mine[1:]:
        extra += ["--add", str(OUT / f"{r['label']}.json")]
    gl("trace", "analyse", "--cores", str(os.cpu_count() or 1), "--offered",
       f"{at70['offered']:.4f}", "--report", str(OUT / "report"), "--check", *extra,
       env={**os.environ, "GRADELINE_DB_URL": at70["db"], "GRADELINE_COURSE": at70["course"]})
    print(f"p95 at 70% load {summary['p95_at_70']:.1f} s (bound 3 x {at70['service_mean_s']:.2f}"
          f" + 10 = {bound:.1f} s): {'met' if summary['p95_ok'] else 'NOT met'}")
    print(f"serve / batch throughput under saturation: {summary['saturation_ratio']:.2f} "
          f"({'met' if summary['saturation_ok'] else 'NOT met'})")
    print(f"written: {OUT / 'summary.json'}")
    return 0 if summary["p95_ok"] and summary["saturation_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
