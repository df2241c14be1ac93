"""``gradeline submit | run | status | results | regrade``: a course's spool and store."""

from __future__ import annotations

import argparse
import functools
import json
import logging
from pathlib import Path
from typing import Any

from grader.adapters.store.postgres import Store
from grader.cli.common import Context, spool_options
from grader.cli.format import state_table, verdict_table
from grader.core.errors import GradelineError
from grader.core.export import csv_rows, gradescope, junit_xml
from grader.pipeline.ports import StoreOpener
from grader.pipeline.regrade import regrade
from grader.pipeline.run import Pipeline
from grader.pipeline.status import STATES, course_status

log = logging.getLogger("gradeline")


def cmd_submit(args: argparse.Namespace, ctx: Context) -> int:
    e = ctx.spool(args).submit(course=ctx.course(args), assignment=args.assignment,
                               student=args.student, path=Path(args.path))
    print(e.id)
    return 0


def cmd_run(args: argparse.Namespace, ctx: Context) -> int:
    """Intake + grading + store of everything in the spool."""
    cpus = ctx.cpus(args.cpus)
    problems = ctx.problems(args)
    ctx.prepare_image()
    opener: StoreOpener | None
    try:
        url = ctx.db_url()
        opener = functools.partial(Store, url)  # the pipeline opens it, per run
    except GradelineError as e:
        log.error("%s -- grading anyway; results wait in the spool for the next run", e)
        opener = None
    pipe = Pipeline(ctx.spool(args), problems, open_store=opener,
                    executor=ctx.executor_factory(args, cpus), dedupe=not args.no_dedupe)
    if args.stage == "intake":  # claim a batch; print its name (empty: nothing waited)
        name = pipe.claim(args.batch_size) or ""
        if args.batch_file:
            Path(args.batch_file).write_text(name + "\n")
        print(name)
        return 0
    if args.stage in ("grade", "ingest"):
        if not args.batch:
            raise GradelineError(f"--stage {args.stage} needs --batch NAME")
        s = pipe.stage(args.batch, ingest=args.stage == "ingest")
    else:
        s = pipe.run(args.batch_size)
    print(verdict_table(s.verdicts, s.scores))
    print(f"graded {s.graded}, reused {s.reused} identical, quarantined {s.quarantined}, "
          f"stored {s.stored} new results in {s.elapsed_s:.1f} s")
    if s.pending_batches:
        print(f"NOT STORED YET (database unavailable): batches {', '.join(s.pending_batches)}"
              " -- run again when it is back")
        return 1
    return 0


def cmd_status(args: argparse.Namespace, ctx: Context) -> int:
    spool = ctx.spool(args)
    course = ctx.course(args)
    note = ""
    stored = None
    try:
        with ctx.store(start=False) as store:
            stored = store.status(course)
    except GradelineError as e:
        note = f"(database unavailable: {e})"
    st = course_status(spool, stored)
    print(f"course {course}, spool {spool.root} {note}")
    print(state_table(st.counts, STATES))
    if st.reasons:
        print("quarantined:")
        for a, sid, code, msg in st.reasons:
            print(f"  {a:<12} {sid}: {code}: {msg}")
    return 0


def cmd_results(args: argparse.Namespace, ctx: Context) -> int:
    with ctx.store() as store:
        rows = store.current_results(ctx.course(args), args.assignment)
    if args.format == "csv":
        print(csv_rows(rows), end="")
    elif args.format == "junit":
        print(junit_xml(rows), end="")
    else:
        print(json.dumps({st: gradescope(r) for st, r in rows}, indent=2))
    return 0


def cmd_regrade(args: argparse.Namespace, ctx: Context) -> int:
    problems = ctx.problems(args)
    if args.assignment not in problems:
        raise GradelineError(f"unknown assignment {args.assignment!r}")
    cpus = ctx.cpus(args.cpus)
    ctx.prepare_image()
    executor = ctx.local_executor(cpus, "regrading")
    pipe = Pipeline(ctx.spool(args), problems, open_store=None,
                    executor=lambda _batch: executor)
    with ctx.store() as store:
        n = regrade(pipe, problems[args.assignment], ctx.course(args), store)
    print(f"regraded {n} submissions of {args.assignment}; earlier results kept as superseded")
    return 0


def register(sub: Any) -> None:
    s = sub.add_parser("submit", help="put a submission into the spool (atomically)")
    s.add_argument("assignment")
    s.add_argument("student")
    s.add_argument("path", help="source file, directory or archive")
    spool_options(s)
    s.set_defaults(func=cmd_submit)

    r = sub.add_parser("run", help="grade everything in the spool and store the results")
    spool_options(r)
    r.add_argument("--cpus", help="CPUs to use, one worker each (default: all allowed)")
    r.add_argument("--batch-size", type=int, help="claim at most this many new submissions")
    r.add_argument("--executor", choices=["auto", "local", "slurm"],
                   help="auto (default): Slurm when a controller answers, else local")
    r.add_argument("--cpus-per-task", type=int, default=1, help="whole cores per array task")
    r.add_argument("--shard-size", type=int, help="submissions per array task "
                                                   "(default: about a minute of work)")
    r.add_argument("--throttle", type=int, help="at most this many array tasks at once (%%T)")
    r.add_argument("--partition", help="Slurm partition")
    r.add_argument("--stage", choices=["all", "intake", "grade", "ingest"], default="all",
                   help="one workflow stage (the Snakefile's rules); default all of them")
    r.add_argument("--batch", help="the batch of --stage grade/ingest")
    r.add_argument("--batch-file", help="--stage intake: also write the batch name here")
    r.add_argument("--no-dedupe", action="store_true",
                   help="grade identical submissions again (for measurements)")
    r.add_argument("--retries", type=int, default=2,
                   help="resubmissions of unfinished shards before they are recorded as JE")
    r.set_defaults(func=cmd_run)

    st = sub.add_parser("status", help="per assignment: new, claimed, graded, quarantined")
    spool_options(st)
    st.set_defaults(func=cmd_status)

    rs = sub.add_parser("results", help="export the current results of an assignment")
    spool_options(rs)
    rs.add_argument("--assignment", required=True)
    rs.add_argument("--format", choices=["csv", "gradescope", "junit"], default="csv")
    rs.set_defaults(func=cmd_results)

    rg = sub.add_parser("regrade", help="regrade what a changed assignment package affects")
    spool_options(rg)
    rg.add_argument("--assignment", required=True)
    rg.add_argument("--cpus")
    rg.set_defaults(func=cmd_regrade)
