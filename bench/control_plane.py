"""The control plane's ceiling: spool -> serve -> tickets -> pilots -> PostgreSQL with
grading that costs nothing.

Pilots grade with ``GRADELINE_NULL_GRADING=1`` (no container, nothing run: every job
recorded AC without tests), so a submission's response time (hand-in to result stored)
is what gradeline adds around grading. The local cluster is restarted with its cores
oversubscribed (``slurm/local-cluster.sh start 2 --oversubscribe K``: up to K pilots
share each core) so ``--pilots`` pilots run on this machine's cores; it is restored
to the plain two-node cluster at the end.

Per offered rate: a fresh database, a running ``serve`` (pilots dispatch), a warm-up
burst that brings every pilot up, then a Poisson stream of ``--seconds`` of arrivals
(``trace replay --mode open``); throughput and response percentiles of the stream
(``trace analyse --since``), and the CPU seconds each part of the control plane spent
meanwhile (serve, PostgreSQL, the pilots, slurmctld/slurmd, the replaying client),
per submission: what saturates first is the part whose CPU share grows to fill the
machine. The simulator (``plan predict``, with the lightest run's measured delays and
control-plane CPU per submission as ``--host-cpu``) predicts each rate's throughput
and p95 beside the measurement.

Run on purpose (minutes), as root with the database up::

    .venv/bin/python bench/control_plane.py --rates 50,100,200,300 --pilots 64

Writes ``bench/results/control_plane/summary.json`` and ``summary.txt``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchlib import BIN, cpu_by_part, gl

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "results" / "control_plane"
CLUSTER = REPO / "slurm" / "local-cluster.sh"
CONF = Path(os.environ.get("GRADELINE_STATE_DIR", "/var/lib/gradeline")) / "slurm" / "slurm.conf"
#: which part of the control plane a process is, by its command line
PARTS = (("pilots", "grader.cli.task"), ("serve", " serve "), ("replay", " trace replay"),
         ("postgres", "postgres"), ("slurm", "slurmctld"), ("slurm", "slurmd"))


def _children_cpu() -> float:
    """CPU seconds of this process's ended children (the replaying client)."""
    t = os.times()
    return t.children_user + t.children_system


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine since boot."""
    v = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = v[3] + v[4]
    return float(sum(v) - idle), float(sum(v))


def wait_drained(spool: Path, limit_s: float) -> None:
    deadline = time.monotonic() + limit_s
    while any((spool / d).is_dir() and any((spool / d).iterdir()) for d in ("new", "cur")):
        if time.monotonic() > deadline:
            sys.exit(f"{spool}: not drained after {limit_s:g} s")
        time.sleep(0.2)


def one_rate(work: Path, rate: float, seconds: float, pilots: int, seed: int,
             serve_args: list[str]) -> dict[str, Any]:
    """Warm the pilots, offer ``rate``/s for ``seconds``; the stream's analysis."""
    label = f"rate{rate:g}"
    name = f"gl_cp_{label}".replace(".", "_")
    url = gl("db", "fresh", name).strip().splitlines()[-1]
    env = {**os.environ, "GRADELINE_DB_URL": url, "GRADELINE_COURSE": name,
           "GRADELINE_NULL_GRADING": "1", "SLURM_CONF": str(CONF)}
    spool = work / f"spool-{label}"
    count = max(1, round(rate * seconds))
    trace, warm = work / f"{label}.csv", work / f"{label}-warm.csv"
    corpus = str(work / "course")
    gl("trace", "gen", "poisson", "--corpus", corpus, "--count", str(count), "--rate",
       f"{rate:g}", "--seed", str(seed), "-o", str(trace), env=env)
    gl("trace", "gen", "poisson", "--corpus", corpus, "--count", str(4 * pilots), "--rate",
       "1000", "--seed", str(seed + 1000), "-o", str(warm), env=env)
    log = (work / f"serve-{label}.log").open("w")
    serve = subprocess.Popen(
        [str(BIN), "serve", "--spool", str(spool), "--executor", "slurm", "--dispatch",
         "pilots", "--pilots", str(pilots), "--pilot-idle", "600", "--no-dedupe",
         "--per-student", "0", "--report", "5", *serve_args],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        gl("trace", "replay", str(warm), "--mode", "open", "--spool", str(spool), env=env)
        wait_drained(spool, 600)
        time.sleep(2)
        since = dt.datetime.now(dt.UTC).isoformat()
        cpu0, busy0, kids0 = cpu_by_part(PARTS), machine_busy(), _children_cpu()
        t0 = time.monotonic()
        gl("trace", "replay", str(trace), "--mode", "open", "--spool", str(spool), env=env)
        wait_drained(spool, 600 + 10 * seconds)
        wall = time.monotonic() - t0
        cpu1, busy1 = cpu_by_part(PARTS), machine_busy()
        cpu1["replay"] = cpu1.get("replay", 0.0) + _children_cpu() - kids0  # it has ended
    finally:
        os.killpg(serve.pid, signal.SIGTERM)
        serve.wait(timeout=600)
        log.close()
        subprocess.run(["scancel", "--name", "gradeline-pilot"], env=env, check=False)
    out = work / f"{label}.json"
    gl("trace", "analyse", "--since", since, "--offered", f"{rate:g}", "--json", str(out),
       env=env)
    a = json.loads(out.read_text())
    cpu = {k: max(0.0, cpu1.get(k, 0.0) - cpu0.get(k, 0.0)) for k in {*cpu0, *cpu1}}
    demands = work / f"{label}-demands.json"
    gl("plan", "demands", "--spool", str(spool), "--since", since, "-o", str(demands), env=env)
    return {"rate": rate, "count": a["count"], "db": url, "course": name,
            "throughput": a["throughput"], "response": a["response"], "wall_s": wall,
            "cpu_s_per_submission": {k: v / max(1, a["count"]) for k, v in sorted(cpu.items())},
            "machine_busy": (busy1[0] - busy0[0]) / max(1.0, busy1[1] - busy0[1]),
            "machine_cpu_s_per_submission": (busy1[0] - busy0[0]) / os.sysconf("SC_CLK_TCK")
            / max(1, a["count"]),
            "trace": str(trace), "demands": str(demands)}


def predict(run: dict[str, Any], base: dict[str, Any], pilots: int, host_cpu: float
            ) -> dict[str, Any]:
    """The simulator's throughput and p95 for ``run``'s trace, from ``base``'s delays."""
    out = Path(run["trace"]).with_suffix(".predict.json")
    gl("plan", "predict", "--trace", run["trace"], "--demands", base["demands"], "--nodes",
       "1", "--cores", str(pilots), "--host-cpu", f"{host_cpu:.6f}", "--host-cores",
       str(os.cpu_count() or 1), "--json", str(out))
    return dict(json.loads(out.read_text()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rates", default="50,100,200,300", help="offered rates (/s)")
    ap.add_argument("--seconds", type=float, default=20.0, help="arrivals per rate (s)")
    ap.add_argument("--pilots", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--serve-args", default="",
                    help="more options for serve, e.g. '--submit-interval 0.25'")
    ap.add_argument("--out", type=Path, default=OUT, help="where the summary goes")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root: the local cluster is restarted with oversubscribed cores")
    out_dir: Path = args.out
    out_dir.mkdir(parents=True, exist_ok=True)
    share = max(1, -(-args.pilots // 2))
    subprocess.run([str(CLUSTER), "start", "2", "--oversubscribe", str(share)], check=True)
    runs: list[dict[str, Any]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="gl-control-plane-", dir="/var/tmp") as tmp:
            work = Path(tmp)
            gl("corpus", str(work / "course"), "--count", "240", "--seed", str(args.seed))
            for i, rate in enumerate(float(r) for r in args.rates.split(",")):
                r = one_rate(work, rate, args.seconds, args.pilots, args.seed + i,
                             args.serve_args.split())
                runs.append(r)
                print(f"offered {rate:g}/s: X {r['throughput']:.1f}/s, response p50 "
                      f"{r['response']['p50']:.2f} p95 {r['response']['p95']:.2f} s, machine "
                      f"busy {r['machine_busy']:.0%}, CPU ms/submission " + ", ".join(
                          f"{k} {v * 1000:.1f}" for k, v in
                          r["cpu_s_per_submission"].items()), flush=True)
            # the lightest run's CPU per submission of the whole machine (serve, the
            # database, pilots, Slurm, the client, the kernel): the simulator's control
            # plane on this machine's cores
            base = runs[0]
            host = base["machine_cpu_s_per_submission"]
            for r in runs:
                p = predict(r, base, args.pilots, host)["prediction"]
                r["predicted"] = p
                print(f"simulator at {r['rate']:g}/s: X {p['throughput']:.1f}/s, response "
                      f"p50 {p['p50']:.2f} p95 {p['p95']:.2f} s (measured X "
                      f"{r['throughput']:.1f}/s, p95 {r['response']['p95']:.2f} s)", flush=True)
    finally:
        subprocess.run([str(CLUSTER), "start", "2"], check=False)
    (out_dir / "summary.json").write_text(json.dumps(
        {"pilots": args.pilots, "serve_args": args.serve_args, "runs": runs}, indent=1))
    (out_dir / "summary.txt").write_text(table(runs, args.pilots))
    print(table(runs, args.pilots))
    return 0


def table(runs: list[dict[str, Any]], pilots: int) -> str:
    """The README's table: measured and simulated, per offered rate."""
    parts = sorted({k for r in runs for k in r["cpu_s_per_submission"]})
    lines = [f"control plane, {pilots} pilots, null grading, {os.cpu_count()} cores; CPU ms "
             "per submission by part; simulator: plan predict --host-cpu (the lightest "
             "run's machine CPU per submission) --host-cores " + str(os.cpu_count()), "",
             "offered/s  X/s    p50 s  p95 s  busy  " + "  ".join(f"{p:>8}" for p in parts)
             + "  sim X/s  sim p95 s"]
    for r in runs:
        p = r.get("predicted", {})
        lines.append(
            f"{r['rate']:9.0f}  {r['throughput']:5.1f}  {r['response']['p50']:5.2f}  "
            f"{r['response']['p95']:5.2f}  {r['machine_busy']:4.0%}  "
            + "  ".join(f"{r['cpu_s_per_submission'].get(k, 0) * 1000:8.1f}" for k in parts)
            + f"  {p.get('throughput', float('nan')):7.1f}  {p.get('p95', float('nan')):9.2f}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
