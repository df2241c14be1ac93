"""``gradeline submit | run | serve | regrade``: a course's spool graded, once, continuously
or again."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from pathlib import Path

from grader.cli.common import Commands, spool_options
from grader.cli.format import verdict_table
from grader.compose import grading
from grader.compose.context import Context
from grader.core.errors import GradelineError
from grader.course.spec import BulkSpec
from grader.course.staffview import RegradePreview
from grader.pipeline.regrade import preview_course, regrade_course
from grader.pipeline.run import Pipeline
from grader.pipeline.serve import ARRAYS_SUBMIT_INTERVAL_S, ServePolicy, submit_interval
from grader.pipeline.slurm.tickets import PilotSpec

log = logging.getLogger("gradeline")
SERVE = ServePolicy()  # the defaults
PILOT = PilotSpec()


def dispatch_options(sp: argparse.ArgumentParser) -> None:
    """How work reaches Slurm: pilots or one array per batch (run and serve alike)."""
    sp.add_argument("--dispatch", choices=["pilots", "arrays"], default="pilots",
                    help="Slurm: pilots (default): long-lived array tasks, one core each, "
                         "pull the batches' work (one container start and no Slurm "
                         "dispatch per shard); arrays: one job array per batch")
    sp.add_argument("--pilots", type=int,
                    help="pilot tasks at most, one core each (default: the partition's CPUs)")
    sp.add_argument("--pilot-idle", type=float, default=PILOT.idle_s,
                    help="a pilot leaves after this long without work (default %(default)s s)")
    sp.add_argument("--pilot-minutes", type=int, default=PILOT.minutes,
                    help="each pilot's time limit in minutes (default %(default)s)")


def cmd_run(args: argparse.Namespace, ctx: Context) -> int:
    """Intake + grading + store of everything in the spool."""
    with grading.run_pipeline(ctx, args.cpus, dedupe=not args.no_dedupe) as pipe:
        return _run(args, pipe)


def _run(args: argparse.Namespace, pipe: Pipeline) -> int:
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


def cmd_serve(args: argparse.Namespace, ctx: Context) -> int:
    """Grade continuously as submissions arrive (SIGTERM or Ctrl-C drains and stops)."""
    setup = grading.ServeSetup(
        ServePolicy(batch_max=args.batch_max, in_flight=args.in_flight,
                    submit_interval_s=submit_interval(
                        args.submit_interval,
                        args.executor != "local" and args.dispatch == "arrays"),
                    per_student=args.per_student or None, idle_exit=args.exit_when_idle,
                    report_s=args.report),
        cpus=args.cpus, dedupe=not args.no_dedupe,
        metrics=(args.metrics_host, args.metrics_port) if args.metrics_port else None,
        deadline_every_s=args.deadline_every)
    with grading.serving(ctx, setup) as running:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: running.server.stop())
        s = running.server.serve()
    t = s.total
    print(verdict_table(t.verdicts, t.scores))
    print(f"served {s.batches} batches: graded {t.graded}, reused {t.reused} identical, "
          f"quarantined {t.quarantined}, stored {t.stored} new results in {t.elapsed_s:.1f} s"
          + (f"; {s.failed_batches} batch attempts failed (see the log)"
             if s.failed_batches else ""))
    spool = running.pipe.spool
    left = [b for b in spool.batches() if not spool.busy(b)]  # not another's
    if left:
        print(f"NOT FINISHED (database or Slurm unavailable?): batches "
              f"{', '.join(b.name for b in left)} -- serve again to finish them")
    return 1 if left else 0


def cmd_regrade(args: argparse.Namespace, ctx: Context) -> int:
    """Regrade what a changed package affects (or, ``--judge-errors``, what ended in a
    judge error); with a course file both phases apart (visible-phase results with the
    visible groups, full results with the suite)."""
    phases = [ctx.problems()]
    if ctx.course_file() is not None:
        phases.insert(0, ctx.problems(live=True))
    if args.assignment is None and not args.judge_errors:
        raise GradelineError("--assignment: which assignment's package changed?")
    if args.preview and args.judge_errors:
        raise GradelineError("--preview shows what a changed package would change; "
                             "--judge-errors grades the same package again: one or the other")
    names = [args.assignment] if args.assignment else sorted(phases[0])
    if names[0] not in phases[0]:
        raise GradelineError(f"unknown assignment {args.assignment!r}")
    ctx.spool()  # a path without a spool is refused before any work
    if args.judge_errors and not args.assignment:  # only those held to their shape
        with ctx.store() as store:
            names = [n for n in names if any(store.judge_errors(ctx.course(), n, ps[n].version)
                                             for ps in phases if n in ps)]
        if not names:
            print("no judge errors to grade again")
            return 0
    course = ctx.course_file()
    cpus = ctx.cpus(args.cpus)
    ctx.prepare_image(problems={n: phases[-1][n] for n in names})
    pipes = grading.bulk_pipelines(ctx, cpus, course.bulk if course else BulkSpec())
    with ctx.store() as store:
        if args.preview:
            return _previewed(preview_course(pipes, phases, args.assignment, ctx.course(),
                                             store))
        n = regrade_course(pipes, phases, names, ctx.course(), store,
                           judge_errors=args.judge_errors)
    if args.judge_errors:
        print(f"regraded {n} judge errors of {', '.join(names)}; each judge error is "
              "replaced by its new result")
    else:
        print(f"regraded {n} submissions of {args.assignment}; earlier results kept as "
              "superseded")
    return 0


def _previewed(p: RegradePreview) -> int:
    moved = [c for c in p.changes if c.changed]
    for c in moved:
        print(f"{c.student}\t{c.id}\t{c.old_verdict} {c.old_score or 0.0:g} -> "
              f"{c.new_verdict} {c.new_score:g}")
    print(f"a regrade would change {len(moved)} of {len(p.changes)} submissions of "
          f"{p.assignment} (nothing stored; staff page: /a/{p.assignment}/preview; apply: "
          f"gradeline regrade --assignment {p.assignment})", file=sys.stderr)
    return 0


def register(sub: Commands) -> None:
    _register_grading(sub)
    _register_regrade(sub)


def _register_grading(sub: Commands) -> None:
    """Grading: run (a batch), serve (continuously)."""
    r = sub.add_parser("run", help="grade everything in the spool and store the results")
    spool_options(r)
    r.add_argument("--cpus", help="CPUs to use, one worker each (default: all allowed)")
    r.add_argument("--batch-size", type=int, help="claim at most this many new submissions")
    r.add_argument("--executor", choices=["auto", "local", "slurm"],
                   help="auto (default): Slurm when a controller answers, else local")
    r.add_argument("--cpus-per-task", type=int, default=1, help="whole cores per array task")
    r.add_argument("--shard-size", type=int, help="submissions per array task, or per pilot "
                                                   "ticket (default: from the batch size)")
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
    dispatch_options(r)
    r.set_defaults(func=cmd_run)

    sv = sub.add_parser("serve", help="grade continuously as submissions arrive "
                                      "(SIGTERM drains and stops)")
    spool_options(sv)
    sv.add_argument("--cpus", help="CPUs to use (local executor), one worker each")
    sv.add_argument("--executor", choices=["auto", "local", "slurm"],
                    help="auto (default): Slurm when a controller answers, else local")
    sv.add_argument("--batch-max", type=int, default=SERVE.batch_max,
                    help="submissions per micro-batch at most (default %(default)s)")
    sv.add_argument("--in-flight", type=int, default=SERVE.in_flight,
                    help="batches in flight at once at most (default %(default)s)")
    sv.add_argument("--submit-interval", type=float,
                    help=f"seconds between two new batches at least (default "
                         f"{SERVE.submit_interval_s}; {ARRAYS_SUBMIT_INTERVAL_S} with "
                         f"--dispatch arrays)")
    sv.add_argument("--per-student", type=int, default=SERVE.per_student,
                    help="submissions of one student per batch at most; 0: no cap "
                         "(default %(default)s)")
    sv.add_argument("--exit-when-idle", action="store_true",
                    help="stop once nothing waits and nothing is in flight")
    sv.add_argument("--report", type=float, default=SERVE.report_s,
                    help="seconds between progress lines (0: none; default %(default)s)")
    dispatch_options(sv)
    sv.add_argument("--cpus-per-task", type=int, default=1,
                    help="--dispatch arrays: whole cores per array task")
    sv.add_argument("--shard-size", type=int, help="--dispatch arrays: submissions per task")
    sv.add_argument("--throttle", type=int, help="at most this many array tasks at once")
    sv.add_argument("--partition", help="Slurm partition")
    sv.add_argument("--retries", type=int, default=2,
                    help="resubmissions of unfinished shards before they are recorded as JE")
    sv.add_argument("--no-dedupe", action="store_true",
                    help="grade identical submissions again (for measurements)")
    sv.add_argument("--metrics-port", type=int, default=0, metavar="PORT",
                    help="answer Prometheus scrapes on PORT (/metrics; default: off)")
    sv.add_argument("--metrics-host", default="127.0.0.1",
                    help="address for --metrics-port (default %(default)s)")
    sv.add_argument("--deadline-every", type=float, default=60.0, metavar="SECONDS",
                    help="with a course file, on Slurm: run the after-deadline phase this "
                         "often (0: never; default %(default)s)")
    sv.set_defaults(func=cmd_serve)


def _register_regrade(sub: Commands) -> None:
    """Grading again what a changed package or a judge error affects."""
    rg = sub.add_parser("regrade", help="regrade what a changed assignment package affects")
    spool_options(rg)
    rg.add_argument("--assignment", help="the assignment whose package changed (with "
                                          "--judge-errors: default every one)")
    rg.add_argument("--judge-errors", action="store_true",
                    help="grade again what ended in a judge error (our fault: a node's "
                         "runtime, the database), with the same package")
    rg.add_argument("--cpus", help="CPUs for local grading (no Slurm)")
    rg.add_argument("--preview", action="store_true",
                    help="grade with the changed package but store nothing: print (and "
                         "show on the staff page) which verdicts and scores would change")
    rg.add_argument("--executor", choices=["auto", "local", "slurm"],
                    help="Slurm (at the course's bulk priority) when a controller answers")
    rg.add_argument("--cpus-per-task", type=int, default=1)
    rg.add_argument("--shard-size", type=int)
    rg.add_argument("--throttle", type=int)
    rg.add_argument("--partition")
    rg.add_argument("--retries", type=int, default=2)
    rg.set_defaults(func=cmd_regrade)
