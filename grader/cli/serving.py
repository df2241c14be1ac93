"""``gradeline submit | run | serve | regrade``: a course's spool graded, once, continuously
or again."""

from __future__ import annotations

import argparse
import functools
import json
import logging
import signal
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from grader.adapters import prometheus
from grader.adapters.spool import Spool
from grader.adapters.store.connections import Connections
from grader.adapters.store.postgres import Store
from grader.cli.common import spool_options
from grader.cli.format import verdict_table
from grader.compose.context import Context
from grader.core.cpuset import CpuSet
from grader.core.errors import GradelineError
from grader.core.jobs import now_iso
from grader.course.spec import BulkSpec
from grader.course.staffview import RegradeChange, RegradePreview, regrade_changes
from grader.formats.problem import Problem
from grader.pipeline.deadline import DeadlineWatcher, after_deadline
from grader.pipeline.ports import StoreOpener
from grader.pipeline.regrade import grade_again, preview, regrade
from grader.pipeline.run import Pipeline
from grader.pipeline.serve import ARRAYS_SUBMIT_INTERVAL_S, ServePolicy, Server, submit_interval
from grader.pipeline.slurm.tickets import PilotSpec
from grader.views.observe import Observer
from grader.views.staff_pages import preview_path

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
    spool = ctx.spool()  # first: a path without a spool is refused before any work
    cpus = ctx.cpus(args.cpus)
    problems = ctx.problems(live=True)
    ctx.prepare_image(problems=problems)
    opener: StoreOpener | None
    try:
        url = ctx.db_url()
        opener = functools.partial(Store, url)  # the pipeline opens it, per run
    except GradelineError as e:
        log.error("%s -- grading anyway; results wait in the spool for the next run", e)
        opener = None
    factory = ctx.executor_factory(cpus)
    try:
        return _run(args, Pipeline(spool, problems, open_store=opener,
                                   executor=factory, dedupe=not args.no_dedupe))
    finally:
        if hasattr(factory, "close"):
            factory.close()  # pilots with no work left are cancelled


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
    spool = ctx.spool(create=True)  # the service a course's hand-ins go to makes it
    cpus = ctx.cpus(args.cpus)
    problems = ctx.problems(live=True)
    ctx.prepare_image(problems=problems)
    url = ctx.db_url()  # serving without a database would leave students without results
    factory = ctx.executor_factory(cpus, serving=True)
    closeable: dict[int, Any] = {}  # the local pool (one for all batches); arrays need none

    def executor(batch: Path) -> Any:
        ex = factory(batch)
        if hasattr(ex, "close"):
            closeable[id(ex)] = ex
        return ex

    stores = Connections(url)  # kept open between batches
    pipe = Pipeline(spool, problems, open_store=functools.partial(Store, stores),
                    executor=executor, dedupe=not args.no_dedupe)
    server = Server(pipe, ServePolicy(
        batch_max=args.batch_max, in_flight=args.in_flight,
        submit_interval_s=submit_interval(args.submit_interval, args.executor != "local"
                                          and args.dispatch == "arrays"),
        per_student=args.per_student or None,
        idle_exit=args.exit_when_idle, report_s=args.report),
        say=lambda m: print(m, file=sys.stderr, flush=True))
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: server.stop())
    print(f"serve: watching {pipe.spool.root} (batches of <= {args.batch_max}, "
          f"<= {args.in_flight} in flight, <= {args.per_student or 'any'} per student)",
          file=sys.stderr, flush=True)
    watcher = _deadline_watcher(args, ctx, cpus, url)
    metrics = None
    if args.metrics_port:
        observer = Observer(server, pipe.spool, ctx.course(), functools.partial(Store, url),
                            getattr(factory, "pool", None))
        metrics = prometheus.serve(observer.state, args.metrics_host, args.metrics_port)
        print(f"serve: Prometheus metrics on http://{args.metrics_host}:{args.metrics_port}"
              "/metrics", file=sys.stderr, flush=True)
    try:
        if watcher is not None:
            watcher.start()
        s = server.serve()
    finally:
        if metrics is not None:
            metrics.shutdown()
        if watcher is not None:
            watcher.stop()
        for ex in closeable.values():
            ex.close()
        if hasattr(factory, "close"):
            factory.close()  # pilots with no work left are cancelled
        stores.close()
    t = s.total
    print(verdict_table(t.verdicts, t.scores))
    print(f"served {s.batches} batches: graded {t.graded}, reused {t.reused} identical, "
          f"quarantined {t.quarantined}, stored {t.stored} new results in {t.elapsed_s:.1f} s"
          + (f"; {s.failed_batches} batch attempts failed (see the log)"
             if s.failed_batches else ""))
    left = [b for b in pipe.spool.batches() if not pipe.spool.busy(b)]  # not another's
    if left:
        print(f"NOT FINISHED (database or Slurm unavailable?): batches "
              f"{', '.join(b.name for b in left)} -- serve again to finish them")
    return 1 if left else 0


def _deadline_watcher(args: argparse.Namespace, ctx: Context, cpus: CpuSet, url: str
                      ) -> DeadlineWatcher | None:
    """With a course file and Slurm: the after-deadline pass every --deadline-every
    seconds, as bulk arrays at the course's priority (local workers would share the
    serving workers' cores and sandbox slots: there, run ``gradeline deadline``)."""
    course = ctx.course_file()
    if course is None or not args.deadline_every:
        return None
    if not ctx.slurm_available():
        print("serve: no Slurm: the after-deadline phase is not run from serve here; run "
              "gradeline deadline once the deadline has passed", file=sys.stderr)
        return None
    full = ctx.problems()
    bulk = Pipeline(ctx.spool(), full, open_store=None,
                    executor=ctx.executor_factory(cpus, serving=True, bulk=course.bulk))

    def run_once(now: datetime) -> None:
        current = ctx.course_file()  # a moved deadline or a new extension applies
        assert current is not None
        due = [a.name for a in current.ordered() if a.deadline <= now and a.name in full]
        if not due:
            return
        with Store(url) as store:
            for name in due:
                d = after_deadline(bulk, current, name, full[name], store, now)
                if d.graded_now:
                    print(f"serve: after the deadline of {name}: {d.graded_now} counting "
                          "submission(s) graded with the full suite", file=sys.stderr,
                          flush=True)

    return DeadlineWatcher(run_once, args.deadline_every)


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
    course = ctx.course_file()
    cpus = ctx.cpus(args.cpus)
    ctx.prepare_image(problems={n: phases[-1][n] for n in names})
    factory = ctx.executor_factory(cpus, bulk=course.bulk if course else BulkSpec())
    n, changes, name = 0, [], ctx.course()
    with ctx.store() as store:
        for assignment in names:
            seen: set[str] = set()
            for problems in phases:
                problem = problems[assignment]
                if problem.version in seen:  # every group visible: one phase
                    continue
                seen.add(problem.version)
                pipe = Pipeline(ctx.spool(), problems, open_store=None, executor=factory)
                if args.judge_errors:
                    n += grade_again(pipe, problem, store, store.judge_errors(
                        name, assignment, problem.version), prefix="je")
                elif args.preview:
                    ids = store.outdated(name, assignment, problem.version)
                    changes += regrade_changes(store.rows(name, assignment=assignment),
                                               preview(pipe, problem, store, ids))
                else:
                    n += regrade(pipe, problem, name, store)
    if args.preview:
        return _previewed(ctx.spool(), args.assignment, phases[-1][args.assignment],
                          changes)
    if args.judge_errors:
        print(f"regraded {n} judge errors of {', '.join(names)}; each judge error is "
              "replaced by its new result")
    else:
        print(f"regraded {n} submissions of {args.assignment}; earlier results kept as "
              "superseded")
    return 0


def _previewed(spool: Spool, assignment: str, problem: Problem,
               changes: list[RegradeChange]) -> int:
    path = preview_path(spool, assignment)
    path.parent.mkdir(parents=True, exist_ok=True)
    preview = RegradePreview(assignment, problem.version, now_iso(), tuple(changes))
    path.write_text(json.dumps(preview.to_json(), indent=1))
    moved = [c for c in changes if c.changed]
    for c in moved:
        print(f"{c.student}\t{c.id}\t{c.old_verdict} {c.old_score or 0.0:g} -> "
              f"{c.new_verdict} {c.new_score:g}")
    print(f"a regrade would change {len(moved)} of {len(changes)} submissions of "
          f"{assignment} (nothing stored; staff page: /a/{assignment}/preview; apply: "
          f"gradeline regrade --assignment {assignment})", file=sys.stderr)
    return 0


def register(sub: Any) -> None:
    _register_grading(sub)
    _register_regrade(sub)


def _register_grading(sub: Any) -> None:
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


def _register_regrade(sub: Any) -> None:
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
