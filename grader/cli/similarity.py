"""``gradeline similarity ASSIGNMENT``: the similarity report after a deadline (JPlag in
a batch job per language), shown on the staff pages."""

from __future__ import annotations

import argparse
import sys

from grader.adapters import jplag
from grader.cli.common import Commands, spool_options
from grader.compose.context import Context
from grader.core.errors import GradelineError
from grader.course.similarity_pairs import DEFAULT_THRESHOLD
from grader.pipeline.similarity_jobs import Runner, make_report, slurm_runner


def cmd_similarity(args: argparse.Namespace, ctx: Context) -> int:
    course = ctx.course_required(" (the report compares counting submissions)")
    course.assignment(args.assignment)
    problem = ctx.problems()[args.assignment]
    lib = jplag.ensure(ctx.state_dir)
    runner: Runner = jplag.run
    sched = None if args.executor == "local" else ctx.scheduler()
    if sched is not None:
        runner = slurm_runner(sched, course.bulk, args.assignment,
                              account=course.slurm.account)
        print(f"similarity: one Slurm job per language at nice {course.bulk.nice}",
              file=sys.stderr)
    elif args.executor == "slurm":
        raise GradelineError("--executor slurm: no Slurm controller answers")
    with ctx.store() as store:
        report = make_report(course, args.assignment, problem, ctx.spool(), store, lib,
                             runner, threshold=args.threshold, min_tokens=args.min_tokens)
    for p in report.pairs:
        print(f"{p.similarity:.2f}\t{p.a}\t{p.b}\t{p.language}")
    for why in report.skipped:
        print(f"left out: {why}", file=sys.stderr)
    print(f"{len(report.pairs)} pair(s) of {report.students} students at or above "
          f"{args.threshold:g} ({report.tool or 'nothing compared'}); staff page: "
          f"/a/{args.assignment}/similarity", file=sys.stderr)
    return 0


def register(sub: Commands) -> None:
    s = sub.add_parser("similarity", help="after the deadline: pairs of students whose "
                                          "counting submissions are alike (JPlag)")
    s.add_argument("assignment")
    spool_options(s)
    s.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD,
                   help="list pairs at least this similar (0..1, default %(default)s)")
    s.add_argument("--min-tokens", type=int, default=9,
                   help="shortest match JPlag counts, in tokens (default %(default)s)")
    s.add_argument("--executor", choices=["auto", "local", "slurm"], default="auto",
                   help="a Slurm job at the course's bulk priority when a controller "
                        "answers (auto), or here")
    s.set_defaults(func=cmd_similarity)
