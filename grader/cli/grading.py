"""``gradeline grade | check | batch | examples | corpus``: grading without a spool."""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import replace
from pathlib import Path

from grader.adapters.spool import Spool
from grader.cli.common import Commands
from grader.cli.format import performance_lines, result_table, verdict_table
from grader.compose.context import Context
from grader.core.errors import ConfigError, SubmissionError
from grader.core.export import csv_rows, gradescope, junit_xml
from grader.core.jobs import GradingJob, JudgeFault
from grader.core.submission import load_submission
from grader.core.verdict import EXPECTED_DIRS
from grader.examples import ExamplesConflict, all_example_dirs, copy_examples, example_dirs
from grader.formats.load import load_problem
from grader.formats.problem import Problem
from grader.formats.scoring import fault_result
from grader.measure.corpus import generate_course
from grader.pipeline.batch import grade_manifest
from grader.pipeline.selfcheck import check_packages


def cmd_grade(args: argparse.Namespace, ctx: Context) -> int:
    problem = load_problem(args.assignment)
    cpus = ctx.cpus(args.cpus)
    # it grades here, on these CPUs, whatever a Slurm cluster beside it could give (a
    # multi-node assignment's ranks on this machine)
    ctx.prepare_image(problems={problem.short_name: replace(
        problem, shape=problem.shape.on_one_node())}, local=cpus)
    judge = ctx.judge(cpus, keep_workdirs=args.keep)
    try:
        # grade_job, not grade: whatever goes wrong in grading is a JE (or CE) result
        # with its reason, never a crash of the command
        outcome = judge.grade_job(GradingJob(problem.path, Path(args.submission),
                                             args.language))
    finally:
        judge.close()
    result = outcome.result
    if isinstance(result, JudgeFault):
        try:
            content = load_submission(args.submission).content_hash
        except SubmissionError:
            content = ""
        result = fault_result(problem, str(args.submission), content, args.language, result)
    fmt = "json" if args.json else args.format
    if fmt == "json":
        print(json.dumps(result.to_dict(), indent=2))
    elif fmt == "csv":
        print(csv_rows([(args.student, result)]), end="")
    elif fmt == "gradescope":
        print(json.dumps(gradescope(result), indent=2))
    elif fmt == "junit":
        print(junit_xml([(args.student, result)]), end="")
    else:
        print(result_table(result))
    return 0


def cmd_check(args: argparse.Namespace, ctx: Context) -> int:
    """Grade every example submission against its package's expectations; derive and
    record a missing time limit; exit 1 on any mismatch."""
    cpus = ctx.cpus(args.cpus)
    packages = [Path(a).resolve() for a in args.assignments]
    loadable = _loadable(packages)
    gpus = len(ctx.gpus())  # a GPU assignment without one here is compiled only, and a
    # multi-node one runs its ranks on this machine
    ctx.prepare_image(problems={n: replace(p, shape=replace(
        p.shape.on_one_node(), gpus=min(gpus, p.shape.gpus))) for n, p in loadable.items()},
        local=cpus)
    t0 = time.monotonic()
    with ctx.validator_check(cpus) as fault_of:  # before any grading, its sandbox gone
        faults = {p.path: why for p in loadable.values() if (why := fault_of(p))}
    reports = check_packages(packages, ctx.local_executor(cpus, "checking"),
                             record=not args.no_record, faults=faults, gpus=gpus)
    total = bad = 0
    for rep in reports:
        for o in rep.examples:
            total += 1
            bad += not o.check.ok
            rel = os.path.relpath(o.expectation.path)
            d = o.expectation.path.parent.name
            want = EXPECTED_DIRS[d].value if d in EXPECTED_DIRS else d
            if isinstance(o.result, JudgeFault):
                print(f"ERROR     {rel}: {o.result.reason}")
                continue
            assert o.result is not None
            res = o.result
            print(f"{'ok' if o.check.ok else 'MISMATCH':<9} {rel}: expected {want}, got "
                  f"{res.verdict.value} score {res.score:g}/{res.max_score:g}")
            for why in o.check.problems:
                print(f"          - {why}")
            if res.performance is not None:
                print("\n".join(performance_lines(res.performance, " " * 10)))
        for path, why in rep.skipped:
            print(f"{'skipped':<9} {os.path.relpath(path)}: {why}")
        if rep.time_limit is not None:
            print(f"{rep.problem.short_name}: time limit {rep.time_limit.limit_s:g} s "
                  f"({rep.time_limit.note}); {rep.time_limit_note}")
        for err in rep.errors:
            bad += 1
            print(f"ERROR     {rep.problem.short_name}: {err}")
    print(f"{total} submissions checked in {time.monotonic() - t0:.1f} s on "
          f"{len(cpus)} cpu(s): {total - sum(not o.check.ok for r in reports for o in r.examples)}"
          f" as expected, {bad} mismatched"
          + (f", {sum(len(r.skipped) for r in reports)} skipped (not graded here)"
             if any(r.skipped for r in reports) else ""))
    return 1 if bad else 0


def _loadable(packages: list[Path]) -> dict[str, Problem]:
    """The packages that load (a defective one is reported by the check itself)."""
    out = {}
    for path in packages:
        try:
            out[path.name] = load_problem(path, require_time_limit=False)
        except ConfigError:
            continue
    return out


def cmd_batch(args: argparse.Namespace, ctx: Context) -> int:
    """Grade every submission of a manifest (see ``gradeline corpus``)."""
    manifest = Path(args.manifest).resolve()
    search = [Path(d).resolve() for d in args.assignments] or \
        [d.parent for d in example_dirs()]
    cpus = ctx.cpus(args.cpus)
    ctx.prepare_image()
    out = Path(args.out) if args.out else manifest.parent / "results.jsonl"
    s = grade_manifest(manifest, search, ctx.local_executor(cpus), out,
                       dedupe_on=not args.no_dedupe)
    print(verdict_table(s.verdicts, s.scores, extra=["error"]))
    print(f"{s.submissions} submissions: {s.graded} graded, {s.reused} identical ones reused, "
          f"in {s.elapsed_s:.1f} s on {len(cpus)} cpu(s) "
          f"({s.graded / max(s.elapsed_s, 1e-9):.2f} graded/s); {s.mismatched} differ from "
          f"the manifest's expected verdict; results in {out}")
    return 0


def cmd_examples(args: argparse.Namespace, ctx: Context) -> int:
    try:
        dirs = copy_examples(Path(args.dest)) if args.dest else all_example_dirs()
    except ExamplesConflict as e:
        raise ConfigError(str(e)) from None
    for d in dirs:
        print(d)
    return 0


def cmd_corpus(args: argparse.Namespace, ctx: Context) -> int:
    dest = Path(args.dest)
    manifest = generate_course(dest, count=args.count, seed=args.seed)
    print(f"wrote {len(manifest)} submissions to {args.dest} (manifest.csv)")
    if args.submit_to:
        if not Path(args.submit_to).exists():
            ctx.say(f"made a new spool at {Path(args.submit_to).resolve()}")
        spool = Spool(Path(args.submit_to), create=True)
        for e in manifest:
            spool.submit(course=args.course or "default", assignment=e.assignment,
                         student=e.student, path=dest / e.path, submitted_at=e.submitted_at)
        print(f"submitted them to the spool {args.submit_to}")
    return 0


def register(sub: Commands) -> None:
    g = sub.add_parser("grade", help="grade one submission")
    g.add_argument("assignment", help="problem package directory")
    g.add_argument("submission", help="source file or directory")
    g.add_argument("--json", action="store_true", help="print the result JSON")
    g.add_argument("--format", choices=["table", "json", "csv", "gradescope", "junit"],
                   default="table")
    g.add_argument("--language", help="language id (default: detected from file names)")
    g.add_argument("--student", default="-", help="student id for csv/junit exports")
    g.add_argument("--cpus", help="CPUs to pin to, e.g. 0 or 0-3 (default: all allowed)")
    g.add_argument("--keep", action="store_true", help="keep the work directory")
    g.set_defaults(func=cmd_grade)

    c = sub.add_parser("check", help="grade a package's example submissions against "
                                     "submissions/<dir>/ and submissions.yaml; derive a "
                                     "missing time limit")
    c.add_argument("assignments", nargs="+")
    c.add_argument("--cpus", help="CPUs to use, one worker each (default: all allowed)")
    c.add_argument("--no-record", action="store_true",
                   help="derive a missing time limit but do not write .timelimit")
    c.set_defaults(func=cmd_check)

    b = sub.add_parser("batch", help="grade all submissions of a manifest.csv")
    b.add_argument("manifest")
    b.add_argument("--assignments", action="append", default=[],
                   help="directory holding the assignment packages (default: bundled)")
    b.add_argument("--out", help="results JSONL (default: beside the manifest)")
    b.add_argument("--cpus", help="CPUs to use, one worker each (default: all allowed)")
    b.add_argument("--no-dedupe", action="store_true",
                   help="grade identical submissions again instead of reusing the result")
    b.set_defaults(func=cmd_batch)

    x = sub.add_parser("examples", help="list bundled assignments, or copy them to DEST")
    x.add_argument("dest", nargs="?")
    x.set_defaults(func=cmd_examples)

    k = sub.add_parser("corpus", help="generate a deterministic course of submissions")
    k.add_argument("dest")
    k.add_argument("--count", type=int, default=240)
    k.add_argument("--seed", type=int, default=1)
    k.add_argument("--submit-to", metavar="SPOOL", help="also submit every one to this spool")
    k.add_argument("--course", help="course name for --submit-to")
    k.set_defaults(func=cmd_corpus)

