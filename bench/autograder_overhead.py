"""Per-submission cost of a Gradescope autograder run (or of a unit-test assignment's
test runs) three ways, on one CPU and one image, interleaved round by round (the ratios
are taken within a round, so a noisy moment hits all three):

- ``bare``: run_autograder in one container started once per round, without gl-runner:
  the tree copied to /autograder, then run -- the autograder's own cost;
- ``gradeline``: the judge, as a pilot grades (a fresh tree, gl-runner's isolated run,
  results.json read and checked);
- ``container``: one container started per submission (``apptainer exec`` with the
  tree bound at /autograder), the way Gradescope and Otter-Grader run autograders
  (a Docker container each).

    .venv/bin/python bench/autograder_overhead.py --cpu 1 --rounds 5 --per-round 10 \\
        --package grader/examples/wordfreq --out bench/results/autograder

For a unit-test assignment (``type: unittest``) each way runs what the judge runs: the
test command once per visibility, over that visibility's test files.

    .venv/bin/python bench/autograder_overhead.py --cpu 1 --rounds 5 --per-round 10 \\
        --package grader/examples/stats --out bench/results/autograder/stats

Writes ``runs.csv`` (one row per run), ``summary.txt`` and ``overhead.png`` to --out
(``--replot`` draws them again from ``runs.csv``).
Needs Apptainer (the container-per-submission way is Apptainer's ``exec``) and, for a
package whose image is its own, that image built.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from grader.adapters.sandbox import open_sandbox
from grader.adapters.sandbox.assignment_image import assignment_image_path
from grader.compose.worker import sandbox_config
from grader.core.submission import load_submission
from grader.core.verdict import Verdict
from grader.formats.gradescope.autograder import load_setup, open_autograder
from grader.formats.load import load_problem
from grader.judge.gradescope import metadata
from grader.judge.judge import Judge
from grader.settings import load

ROOT = Path(__file__).resolve().parent.parent
METHODS = ("bare", "gradeline", "container")
CONTAINER = ["--silent", "exec", "--containall", "--cleanenv", "--no-home", "--net",
             "--network", "none"]
LOOP = """for i in $(seq 1 "$1"); do
  t0=$(date +%s%N)
  rm -rf /autograder/* && cp -a /gl/bench/tree/. /autograder/
  (cd /autograder && ./run_autograder >/dev/null 2>&1)
  t1=$(date +%s%N)
  echo $((t1 - t0))
done
"""


def tree(dest: Path, ag_root: Path, run_autograder: Path, submission: Path, problem) -> Path:
    """The /autograder tree of one submission, as the judge makes it."""
    shutil.copytree(ag_root, dest / "source")
    shutil.copyfile(run_autograder, dest / "run_autograder")
    (dest / "run_autograder").chmod(0o755)
    sub = load_submission(submission)
    (dest / "submission").mkdir()
    sub.copy_to(dest / "submission")
    (dest / "results").mkdir()
    (dest / "submission_metadata.json").write_text(json.dumps(metadata(problem, "bench")))
    return dest


UNIT_LOOP = """for i in $(seq 1 "$1"); do
  t0=$(date +%s%N)
  for vis in /gl/bench/tree/*/; do
    rm -rf /autograder/* && cp -a "$vis". /autograder/
    (cd /autograder/submission && GRADELINE_REPORTS=/autograder/results \\
       sh -c "$(cat /gl/bench/command)" >/dev/null 2>&1)
  done
  t1=$(date +%s%N)
  echo $((t1 - t0))
done
"""


def unit_tree(dest: Path, problem, submission: Path) -> Path:
    """Per visibility run, the /autograder tree the judge makes (the tests copied in,
    where the judge binds them read-only)."""
    ut = problem.unit_tests
    files = ut.files_of()
    for vis in ut.runs():
        sub_dir = dest / vis / "submission"
        sub_dir.mkdir(parents=True)
        load_submission(submission).copy_to(sub_dir)
        for rel in files[""] + files[vis]:
            (sub_dir / ut.tests_at / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ut.tests / rel, sub_dir / ut.tests_at / rel)
        (dest / vis / "results").mkdir()
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--package", default=str(ROOT / "grader/examples/wordfreq"))
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--per-round", type=int, default=10)
    ap.add_argument("--out", default=str(ROOT / "bench/results/autograder"))
    ap.add_argument("--replot", action="store_true",
                    help="summarise and draw --out's runs.csv again, running nothing")
    args = ap.parse_args()
    if args.replot:
        with (Path(args.out) / "runs.csv").open() as f:
            rows = [(int(r["round"]), r["method"], int(r["run"]), float(r["seconds"]))
                    for r in csv.DictReader(f)]
        args.rounds = 1 + max(r[0] for r in rows)
        args.per_round = 1 + max(r[2] for r in rows)
        report(rows, args)
        return
    settings = load()
    config = sandbox_config(settings)
    apptainer = shutil.which("apptainer")
    if apptainer is None:
        raise SystemExit("needs apptainer (the container-per-submission way is its exec)")
    problem = load_problem(args.package)
    scratch = Path(tempfile.mkdtemp(prefix="gl-agbench-", dir="/var/tmp"))
    scratch.chmod(0o755)
    base = config.images().ensure(config.definition_path, "apptainer").path
    unit = problem.unit_tests
    if unit is not None:
        ag = load_setup(unit.setup) if unit.setup else None
    else:
        ag = open_autograder(problem.autograder, scratch / "unpacked")
    sif = base if problem.autograder_image == "base" or ag is None else \
        assignment_image_path(base, ag.digest)
    if not sif.exists():
        raise SystemExit(f"{sif} is not built: gradeline image build --assignment {args.package}")
    submission = Path(args.package) / "submissions" / "accepted"
    if unit is not None:  # a single file or directory of it
        submission = sorted(submission.iterdir())[0]

    def make_tree(dest: Path) -> Path:
        if unit is not None:
            return unit_tree(dest, problem, submission)
        return tree(dest, ag.root, ag.run_autograder, submission, problem)
    sandbox = open_sandbox(config, scratch / "gl", slot=args.cpu, cpus=[args.cpu])
    judge = Judge(sandbox, scratch / "gl" / "work", [args.cpu])
    bare_dir = scratch / "bare"
    make_tree(bare_dir / "tree")
    (bare_dir / "loop.sh").write_text(UNIT_LOOP if unit else LOOP)
    if unit is not None:
        (bare_dir / "command").write_text(unit.command)
    each = ("for vis in /autograder/*/; do (cd \"$vis\"submission && GRADELINE_REPORTS="
            "\"$vis\"results sh -c \"$0\") || true; done") if unit else \
        "cd /autograder && ./run_autograder"
    rows: list[tuple[int, str, int, float]] = []
    pin = ["taskset", "-c", str(args.cpu)]
    judge.grade(problem, submission)  # warm: the container, the page cache
    try:
        for rnd in range(args.rounds):
            out = subprocess.run([*pin, apptainer, *CONTAINER, "--writable-tmpfs", "--bind",
                                  f"{bare_dir}:/gl/bench", str(sif), "bash",
                                  "/gl/bench/loop.sh", str(args.per_round)],
                                 capture_output=True, text=True, check=True).stdout
            rows += [(rnd, "bare", i, int(ns) / 1e9)
                     for i, ns in enumerate(out.split())]
            for i in range(args.per_round):
                t0 = time.monotonic()
                r = judge.grade(problem, submission)
                rows.append((rnd, "gradeline", i, time.monotonic() - t0))
                assert r.verdict is Verdict.AC, r.message
            for i in range(args.per_round):
                d = make_tree(Path(tempfile.mkdtemp(dir=scratch)))
                t0 = time.monotonic()
                subprocess.run([*pin, apptainer, *CONTAINER, "--bind", f"{d}:/autograder",
                                str(sif), "/bin/sh", "-c", each,
                                *([unit.command] if unit else [])],
                               capture_output=True, check=True)
                rows.append((rnd, "container", i, time.monotonic() - t0))
                shutil.rmtree(d)
    finally:
        judge.close()
        shutil.rmtree(scratch, ignore_errors=True)
    report(rows, args)


def _over_rounds(med: dict[tuple[int, str], float], method: str, rounds: int) -> float:
    return statistics.median(med[r, method] for r in range(rounds))


def report(rows: list[tuple[int, str, int, float]], args: argparse.Namespace) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "runs.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["round", "method", "run", "seconds"])
        w.writerows((r, m, i, f"{s:.6f}") for r, m, i, s in rows)
    med = {(r, m): statistics.median(s for rr, mm, _, s in rows if (rr, mm) == (r, m))
           for r in range(args.rounds) for m in METHODS}
    g_over_b = [med[r, "gradeline"] / med[r, "bare"] for r in range(args.rounds)]
    c_over_g = [med[r, "container"] / med[r, "gradeline"] for r in range(args.rounds)]
    lines = [f"package {Path(args.package).name}, cpu {args.cpu}, {args.rounds} rounds x "
             f"{args.per_round} runs per method",
             *(f"{m:<10} median {_over_rounds(med, m, args.rounds) * 1e3:8.1f} ms per "
               "submission" for m in METHODS),
             f"gradeline / bare       {statistics.median(g_over_b):.3f} (per round: "
             + " ".join(f"{x:.3f}" for x in g_over_b) + ")",
             f"container / gradeline  {statistics.median(c_over_g):.3f} (per round: "
             + " ".join(f"{x:.3f}" for x in c_over_g) + ")"]
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.5, 3.5))
    data = [[s * 1e3 for _, m, _, s in rows if m == meth] for meth in METHODS]
    ax.boxplot(data, tick_labels=["bare", "gradeline", "a container each"],
               showfliers=False)
    ax.set_ylabel("ms per submission")
    ax.set_title(f"{Path(args.package).name}: one submission's grading, three ways")
    fig.tight_layout()
    fig.savefig(out / "overhead.png", dpi=120)


if __name__ == "__main__":
    main()
