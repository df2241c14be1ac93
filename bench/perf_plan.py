"""Does ``gradeline plan performance`` predict the performance phase? The reference is
timed against itself once (as the command does), the plan predicts the phase for
``--students`` submissions on one allocation, then that many submissions are graded
one after another on the same CPUs and the time their performance tests took is
summed (``timing.performance_s`` of each record): the replay.

    .venv/bin/python bench/perf_plan.py --students 6

The submissions are the package's accepted ones in turn (the plan's ``--ratio`` is
their mean time ratio, read from the replay's own records, so the check is of the
protocol's cost model, not of a guess about students). Prints and writes
``plan.md`` to --out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from grader.formats.load import load_problem
from grader.planning.perfplan import PerfDemand, fixed_cost, predict

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent / "gradeline"


def grade(pkg: Path, sub: Path, cpus: str) -> dict[str, object]:
    r = subprocess.run([str(BIN), "grade", "--json", "--cpus", cpus, str(pkg), str(sub)],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--package", default=str(ROOT / "grader/examples/primecount"))
    ap.add_argument("--students", type=int, default=6)
    ap.add_argument("--cpus", default="0-1")
    ap.add_argument("--out", default=str(ROOT / "bench/results/perf_fairness"))
    args = ap.parse_args()
    pkg = Path(args.package)
    problem = load_problem(pkg)
    spec = problem.performance
    assert spec is not None
    own = grade(pkg, spec.reference, args.cpus)
    ref = own["performance"]
    demands = [PerfDemand(m["cores"], m["reference"]["median_s"], m["reference"]["runs"])
               for m in ref["measurements"]]  # type: ignore[index]
    fixed = fixed_cost(spec, demands, own["timing"]["performance_s"])  # type: ignore[index]
    subs = sorted((pkg / "submissions" / "accepted").iterdir())
    took, ratios = [], []
    for k in range(args.students):
        rec = grade(pkg, subs[k % len(subs)], args.cpus)
        took.append(rec["timing"]["performance_s"])  # type: ignore[index]
        ratios.extend(i["figure"] for i in rec["performance"]["items"]  # type: ignore[index]
                      if i["metric"] == "time_ratio")
        print(f"{subs[k % len(subs)].name}: {took[-1]:.2f} s", flush=True)
    ratio = statistics.fmean(ratios) if ratios else 1.0
    plan = predict(spec, demands, students=args.students, shape_cores=problem.shape.cores,
                   cores=problem.shape.cores, ratio=ratio, time_limit_s=problem.limits.wall_s,
                   fixed_s=fixed)
    actual = sum(took)
    err = plan.finish_s / actual - 1
    text = (f"| students | time ratio | predicted (s) | replayed (s) | error |\n"
            f"|---|---|---|---|---|\n| {args.students} | {ratio:.3f} | {plan.finish_s:.1f} | "
            f"{actual:.1f} | {100 * err:+.1f} % |\n")
    print(plan.describe())
    print(text)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "plan.md").write_text(text)


if __name__ == "__main__":
    main()
