"""Is a performance grade fair? One submission scored against the reference
``--scorings`` times on an idle machine and as many times with other grading running,
with and without the fairness measures of gradeline's timing protocol:

- ``fair``: the judge's protocol (``judge.performance``): both programs pinned to
  ``--cpu``, which no one else's grading is given; interleaved round by round,
  warm-up discarded, CI95/mean stopping; the load grades on the other CPUs;
- ``naive``: what a hand-written script does: both programs unpinned (any CPU),
  ``--naive-runs`` runs of the reference, then as many of the submission; the load
  grades on every CPU, the timed one included.

The load is other grading: ``gradeline grade`` of bigsum's C solution, in a loop, one
loop per load CPU (the loop and all it starts pinned there with ``taskset``). The
score is one item, the time ratio at one core mapped linearly from 100 at 0.5 to 0 at
1.5 (a point per 0.01 of ratio: nothing hides a change the way bands do). The
package's correctness data are cut to its sample (each scoring grades them too, and
only the timing is studied).

    .venv/bin/python bench/perf_fairness.py --scorings 10

Writes ``runs.csv`` (one row per scoring) and ``summary.md`` to --out: per protocol and
machine state the coefficient of variation of the time ratio and the spread (max - min)
of the score, and over idle and loaded together (the issue's target with the measures:
spread <= 1 point of 100, CV <= 2 %).
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import yaml

from grader.adapters.sandbox import open_sandbox
from grader.compose.worker import sandbox_config
from grader.core.perfresult import Measurement, Series
from grader.formats.load import load_problem
from grader.formats.problem import Problem
from grader.judge.judge import Judge
from grader.judge.performance import Program, Timing
from grader.settings import load

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent / "gradeline"
ITEM = {"metric": "time_ratio", "cores": 1, "points": 100, "linear": [[0.5, 100], [1.5, 0]]}


class Naive(Timing):
    """A hand-written script's timing: unpinned, the reference's runs, then the
    submission's, no warm-up."""

    runs = 5

    def _at(self, problem: Problem, n: int, cpus: tuple[int, ...], ref: Program,
            sub: Program, work: Path) -> tuple[Measurement, str]:
        spec = problem.performance
        assert spec is not None
        every = tuple(self.cpus)
        times = {}
        for p in (ref, sub):
            times[p.name] = tuple(self._run(problem, p, spec.inputs_at(n), n, every, work,
                                            check=False)[0] for _ in range(self.runs))
        return Measurement(n, every, Series(times["reference"]), Series(times["submission"]),
                           self.facts(every)), ""


def package(scratch: Path, src: Path, ci: float) -> Path:
    """``src`` with its sample as its only test data and the bench's performance item."""
    pkg = scratch / src.name
    shutil.copytree(src, pkg)
    shutil.rmtree(pkg / "data" / "secret")
    (pkg / "data" / "secret").mkdir()
    shutil.copy(pkg / "data/sample/1.in", pkg / "data/secret/1.in")
    shutil.copy(pkg / "data/sample/1.ans", pkg / "data/secret/1.ans")
    gl = yaml.safe_load((pkg / "gradeline.yaml").read_text())
    gl["resources"] = {"cores": 1}
    gl["performance"].update(cores=[1], items=[ITEM], repetitions={
        "min": 3, "max": 10, "ci": ci, "warmup": 1})
    (pkg / "gradeline.yaml").write_text(yaml.safe_dump(gl))
    return pkg


def start_load(cpus: Sequence[int], scratch: Path) -> list[subprocess.Popen[bytes]]:
    """One loop of ``gradeline grade`` per CPU, each in a session of its own."""
    sub = ROOT / "grader/examples/bigsum/submissions/accepted/sum.c"
    loops = []
    for c in cpus:
        loop = (f"while :; do {BIN} grade --cpus {c} {ROOT}/grader/examples/bigsum {sub} "
                ">/dev/null 2>&1; done")
        # the whole loop on its CPU (the command's own Python too, not only its runs)
        loops.append(subprocess.Popen(["taskset", "-c", str(c), "sh", "-c", loop],
                                      start_new_session=True))
    time.sleep(3)  # the loops' first gradings under way
    return loops


def stop_load(loops: Sequence[subprocess.Popen[bytes]]) -> None:
    for p in loops:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait()


def scorings(judge: Judge, problem: Problem, submission: Path, count: int, protocol: str,
             state: str, writer: csv.DictWriter[str]) -> None:
    for k in range(count):
        r = judge.grade(problem, submission)
        perf = r.performance
        assert perf is not None and not perf.gate, (r.verdict, perf)
        m = perf.measurements[0]
        writer.writerow({
            "protocol": protocol, "state": state, "k": k,
            "ratio": round(perf.items[0].figure or 0, 6), "score": perf.points,
            "ref_median_s": round(m.reference.median_s, 6),
            "sub_median_s": round(m.submission.median_s, 6), "runs": m.submission.runs,
            "load": os.getloadavg()[0], "not_in_force": " ".join(perf.not_in_force)})
        print(f"{protocol:5} {state:6} {k}: ratio {perf.items[0].figure:.4f} score "
              f"{perf.points:.2f} ({m.submission.runs} runs)", flush=True)


def summarise(rows: list[dict[str, str]]) -> str:
    out = ["| protocol | machine | scorings | time ratio: mean | CV | score: min | max | "
           "spread |", "|---|---|---|---|---|---|---|---|"]
    for protocol in ("fair", "naive"):
        for state in ("idle", "loaded", "both"):
            sel = [r for r in rows if r["protocol"] == protocol
                   and state in ("both", r["state"])]
            if len(sel) < 2:
                continue
            ratio = [float(r["ratio"]) for r in sel]
            score = [float(r["score"]) for r in sel]
            cv = statistics.stdev(ratio) / statistics.fmean(ratio)
            out.append(f"| {protocol} | {state} | {len(sel)} | {statistics.fmean(ratio):.4f} "
                       f"| {100 * cv:.2f} % | {min(score):.2f} | {max(score):.2f} | "
                       f"{max(score) - min(score):.2f} |")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--package", default=str(ROOT / "grader/examples/primecount"))
    ap.add_argument("--submission", default="submissions/accepted/serial.c")
    ap.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)),
                    help="the timed CPU (default: the last); the load takes the others")
    ap.add_argument("--scorings", type=int, default=10)
    ap.add_argument("--naive-runs", type=int, default=5)
    ap.add_argument("--ci", type=float, default=0.02, help="the fair protocol's CI95/mean")
    ap.add_argument("--out", default=str(ROOT / "bench/results/perf_fairness"))
    args = ap.parse_args()
    every = sorted(os.sched_getaffinity(0))
    others = [c for c in every if c != args.cpu]
    scratch = Path(tempfile.mkdtemp(prefix="gl-perffair-", dir="/var/tmp"))
    scratch.chmod(0o755)
    problem = load_problem(package(scratch, Path(args.package), args.ci))
    submission = Path(args.package) / args.submission
    config = sandbox_config(load())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    Naive.runs = args.naive_runs
    with (out / "runs.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, ["protocol", "state", "k", "ratio", "score",
                                    "ref_median_s", "sub_median_s", "runs", "load",
                                    "not_in_force"])
        writer.writeheader()
        for protocol in ("fair", "naive"):
            cpus = [args.cpu] if protocol == "fair" else every
            work = scratch / protocol
            box = open_sandbox(config, work, slot=100 + args.cpu, cpus=cpus)  # not the load's
            judge = Judge(box, work, cpus)
            if protocol == "naive":
                t = judge.perf
                judge.perf = Naive(t.sandbox, t.validators, t.workroot, cpus, t.compile,
                                     t.facts)
            try:
                for state in ("idle", "loaded"):
                    loops = start_load(others if protocol == "fair" else every, scratch) \
                        if state == "loaded" else []
                    try:
                        scorings(judge, problem, submission, args.scorings, protocol, state,
                                 writer)
                    finally:
                        stop_load(loops)
            finally:
                judge.close()
    with (out / "runs.csv").open() as f:
        table = summarise(list(csv.DictReader(f)))
    (out / "summary.md").write_text(table)
    print(table)
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
