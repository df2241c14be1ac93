"""Validate ``gradeline plan predict`` against real replays on this machine.

For each core count (pilots on the local Slurm's one-core nodes): a served run at light
load measures the pipeline's own delays and how grading while serving compares with
batch grading; then, for each offered load, a batch run of the course measures every
submission's grading time (``plan demands``) right before a Poisson stream at that load
is replayed into ``serve``, and the simulator predicts the replay from the trace and
those two measurements alone. (The batch right before each replay: this VM's speed
drifts by several per cent within an hour, and at 80% load a 5% error in the service
rate is a 25% error in the waiting time; ``--bracket`` adds a batch run after each
replay and predicts from the mean of the two.) Bounds: mean response within 10%, p95 within
20%.

Run on purpose (about 70 minutes), as root with the database up::

    SLURM_CONF=/var/lib/gradeline/slurm/slurm.conf .venv/bin/python bench/plan_validate.py \
        --cores 1,2 --loads 0.5,0.7,1.2 --reps 2

Everything measured stays in ``--work`` (default /var/tmp/gl-plan): ``--repredict``
runs the predictions again from it without replaying anything (the model changed, the
measurements did not), and ``--also WORK`` adds the replays of other runs (more core
counts, more replays) to the same table. The simulator's parameters come from the batch run (grading
times) and the light-load calibration run (pipeline delays, pickups) only, never from
the runs it is validated against.

Grading after an idle pilot picked the work up costs more than in the batch run (the
cold factor of ``plan demands --against``, measured by the calibration run); back-to-back
grading is what the batch run measured. When the pilots take every CPU, serve's own CPU
per submission beyond ``gradeline run``'s (measured by the calibration run) competes with
them: ``--host-cpu``. Each load is replayed ``--reps`` times (its own trace, its own
batch run right before); the same trace replayed three times at 0.7 load here gave mean
responses 5.76, 6.56 and 6.80 s, so a single replay is no 10% yardstick.

Writes ``bench/results/plan/validation.csv`` and prints the table.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import serve_load as sl

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "plan"


def children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def batch(work: Path, tag: str, count: int, seed: int, pilots: int
          ) -> tuple[Path, float, float]:
    """Every submission of the course graded once: their grading times (the same
    seeded corpus as the traces', so their content hashes match), the capacity, and
    the CPU seconds of `gradeline run` itself."""
    env = sl.fresh_env(f"gl_plan_{tag}_batch")
    spool = work / f"spool-{tag}-batch"
    sl.gl("corpus", str(work / f"course-{tag}"), "--count", str(count), "--seed", str(seed),
          "--submit-to", str(spool), "--course", env["GRADELINE_COURSE"], env=env)
    t0, c0 = time.monotonic(), children_cpu()
    sl.gl("run", "--spool", str(spool), "--executor", "slurm", "--no-dedupe", "--pilots",
          str(pilots), env=env)
    wall, cpu = time.monotonic() - t0, children_cpu() - c0
    out = work / f"demands-{tag}.json"
    sl.gl("plan", "demands", "-o", str(out), env=env)
    return out, count / wall, cpu


def bracketed(before: Path, after: Path, out: Path) -> Path:
    """The demands of two batch runs, one before and one after a replay: each
    submission's grading time their mean (this VM's speed drifts within minutes; the
    replay ran between the two), the per-assignment distributions both runs' times;
    the pipeline's delays from the run before."""
    a, b = json.loads(before.read_text()), json.loads(after.read_text())
    merged = dict(a)
    merged["by_content"] = {h: (t + b["by_content"].get(h, t)) / 2
                            for h, t in a["by_content"].items()}
    merged["service"] = {k: v + b["service"].get(k, []) for k, v in a["service"].items()}
    merged.pop("summary", None)
    out.write_text(json.dumps(merged))
    return out


def served(work: Path, tag: str, rate: float, count: int, seed: int, pilots: int,
           against: Path | None = None) -> dict[str, Any]:
    """A Poisson stream into serve; its analysis, its trace, serve's CPU seconds."""
    env = sl.fresh_env(f"gl_plan_{tag}")
    spool = work / f"spool-{tag}"
    trace = work / f"{tag}.csv"
    sl.gl("trace", "gen", "poisson", "--corpus", str(work / "course"), "--count", str(count),
          "--rate", f"{rate:.4f}", "--seed", str(seed), "-o", str(trace), env=env)
    log = (work / f"serve-{tag}.log").open("w")
    serve = subprocess.Popen([str(sl.BIN), "serve", "--spool", str(spool), "--executor",
                              "slurm", "--no-dedupe", "--pilots", str(pilots)], env=env, stdout=log,
                             stderr=subprocess.STDOUT, start_new_session=True)
    try:
        sl.gl("trace", "replay", str(trace), "--mode", "open", "--spool", str(spool), env=env)
        deadline = time.monotonic() + 1800
        while any((spool / d).exists() and any((spool / d).iterdir()) for d in ("new", "cur")):
            if time.monotonic() > deadline:
                sys.exit(f"{tag}: not finished after 30 min; see {log.name}")
            time.sleep(0.5)
    finally:
        serve.send_signal(signal.SIGTERM)
        _, _, ru = os.wait4(serve.pid, 0)
        log.close()
    a = sl.analyse(env, work / f"{tag}.json", rate)
    dem = work / f"demands-{tag}.json"
    sl.gl("plan", "demands", "-o", str(dem), *(["--against", str(against)] if against else []),
          env=env)
    return {"analysis": a, "trace": trace, "demands": dem,
            "serve_cpu_s": ru.ru_utime + ru.ru_stime}


def predict(trace: Path, demands: Path, overheads: Path, nodes: int, host_cpu: float,
            out: Path) -> dict[str, Any]:
    sl.gl("plan", "predict", "--trace", str(trace), "--demands", str(demands), "--overheads",
          str(overheads), "--nodes", str(nodes), "--cores", "1", "--host-cpu",
          f"{host_cpu:.4f}", "--replications", "20", "--json", str(out))
    return dict(json.loads(out.read_text())["prediction"])


def host_cpu(cal_serve_s: float, run_cpu_s: float, count: int, pilots: int) -> float:
    """serve's CPU per submission beyond `gradeline run`'s (which the batch grading
    times already carry), as the simulator's host work -- only when the pilots take
    every CPU of the machine; with a CPU to spare the serving side runs there."""
    if pilots < (os.cpu_count() or 1):
        return 0.0
    return max(0.0, (cal_serve_s - run_cpu_s) / count)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cores", default="1,2", help="core counts (pilots)")
    ap.add_argument("--loads", default="0.5,0.8,1.2", help="offered loads, x batch capacity")
    ap.add_argument("--calibrate", type=float, default=0.3, help="the light load (x capacity)")
    ap.add_argument("--reps", type=int, default=2,
                    help="replays per load, each its own trace and batch run before it")
    ap.add_argument("--bracket", action="store_true",
                    help="a batch run after each replay too; predict from the mean of the "
                         "runs before and after it")
    ap.add_argument("--count", type=int, default=160)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--work", default="/var/tmp/gl-plan", help="measurements kept here")
    ap.add_argument("--repredict", action="store_true",
                    help="predict again from --work's measurements; replay nothing")
    ap.add_argument("--also", action="append", default=[], metavar="WORK",
                    help="with --repredict: add the replays measured in another --work "
                         "(a run for more core counts or replays), all in one table")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    work = Path(args.work)
    meta_path = work / "validation.json"
    if args.repredict:
        meta = json.loads(meta_path.read_text())
        for other in args.also:
            meta["runs"] += json.loads((Path(other) / "validation.json").read_text())["runs"]
    else:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        sl.gl("corpus", str(work / "course"), "--count", str(args.count), "--seed",
              str(args.seed))
        meta = {"command": " ".join(sys.argv), "bracket": args.bracket, "runs": []}
        for nodes in (int(n) for n in args.cores.split(",")):
            demands, cap, run_cpu = batch(work, f"n{nodes}", args.count, args.seed, nodes)
            print(f"{nodes} core(s): batch capacity {cap:.2f}/s, gradeline run's own CPU "
                  f"{run_cpu / args.count * 1000:.0f} ms per submission", flush=True)
            cal = served(work, f"n{nodes}_cal", args.calibrate * cap, args.count,
                         args.seed + 1, nodes, against=demands)
            host = host_cpu(cal["serve_cpu_s"], run_cpu, args.count, nodes)
            print(f"  calibration at {args.calibrate} x: serve CPU "
                  f"{cal['serve_cpu_s'] / args.count * 1000:.0f} ms per submission, host work "
                  f"{host * 1000:.0f} ms", flush=True)
            for i, load in enumerate(float(x) for x in args.loads.split(",")):
                for rep in range(args.reps):
                    tag = f"n{nodes}_l{load:g}_r{rep}".replace(".", "_")
                    demands, now_cap, _ = batch(work, f"{tag}_b", args.count, args.seed, nodes)
                    m = served(work, tag, load * cap, args.count,
                               args.seed + 10 + i + 100 * rep, nodes)
                    after, before = "", demands
                    if args.bracket:
                        later, after_cap, _ = batch(work, f"{tag}_a", args.count, args.seed,
                                                    nodes)
                        demands = bracketed(demands, later, work / f"demands-{tag}_ab.json")
                        after = f", after {after_cap:.2f}/s"
                    print(f"  load {load} #{rep}: batch capacity just before {now_cap:.2f}/s"
                          f"{after}, mean response {m['analysis']['response']['mean']:.2f} s",
                          flush=True)
                    meta["runs"].append({
                        "cores": nodes, "load": load, "rep": rep, "offered_per_s": load * cap,
                        "tag": tag, "trace": str(m["trace"]), "demands": str(demands),
                        "demands_before": str(before),
                        "overheads": str(cal["demands"]), "host_cpu_s": host,
                        "measured": m["analysis"]["response"]})
                    meta_path.write_text(json.dumps(meta, indent=1))
    groups: dict[tuple[int, float], list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for run in meta["runs"]:
        p = predict(Path(run["trace"]), Path(run["demands"]), Path(run["overheads"]),
                    run["cores"], run["host_cpu_s"],
                    Path(run["demands"]).parent / f"pred-{run['tag']}.json")
        groups.setdefault((run["cores"], run["load"]), []).append((run, p))
    rows: list[dict[str, Any]] = []
    for (cores, load), runs in groups.items():
        n = len(runs)
        mm = sum(r["measured"]["mean"] for r, _ in runs) / n
        pm = sum(p["mean"] for _, p in runs) / n
        m95 = sum(r["measured"]["p95"] for r, _ in runs) / n
        p95 = sum(p["p95"] for _, p in runs) / n
        means = [r["measured"]["mean"] for r, _ in runs]
        row = {"cores": cores, "load": load, "replays": n,
               "offered_per_s": round(runs[0][0]["offered_per_s"], 3),
               "measured_mean_s": round(mm, 2), "predicted_mean_s": round(pm, 2),
               "mean_error": round(pm / mm - 1, 3),
               "replay_means_s": " ".join(f"{x:.2f}" for x in means),
               "measured_p95_s": round(m95, 2), "predicted_p95_s": round(p95, 2),
               "p95_error": round(p95 / m95 - 1, 3),
               "host_cpu_ms": round(runs[0][0]["host_cpu_s"] * 1000, 1)}
        rows.append(row)
        print(f"  {cores} core(s), load {load} ({n} replays: {row['replay_means_s']}): mean "
              f"{row['measured_mean_s']} vs {row['predicted_mean_s']} ({row['mean_error']:+.1%}),"
              f" p95 {row['measured_p95_s']} vs {row['predicted_p95_s']} "
              f"({row['p95_error']:+.1%})", flush=True)
    with (OUT / "validation.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    shutil.copy(Path(meta["runs"][0]["demands"]), OUT / "demands.json")
    ok = all(abs(r["mean_error"]) <= 0.10 and abs(r["p95_error"]) <= 0.20 for r in rows)
    print(f"written {OUT / 'validation.csv'}: "
          f"{'within' if ok else 'NOT within'} mean 10% / p95 20% everywhere")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
