"""Grading wired, one call each: the pipeline of ``gradeline run``, the pipelines of
bulk work behind live feedback (after a deadline, regrades), and the serving stack of
``gradeline serve`` as a context manager -- the store's connections kept open, the
pipeline, the server, its Prometheus metrics and the after-deadline watcher, started
in that order and closed in the reverse one."""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from grader.adapters import prometheus
from grader.adapters.store.connections import Connections
from grader.adapters.store.postgres import Store
from grader.compose.context import Context
from grader.core.cpuset import CpuSet
from grader.core.errors import GradelineError
from grader.course.spec import BulkSpec
from grader.formats.problem import Problem
from grader.pipeline.deadline import DeadlineWatcher, after_deadline
from grader.pipeline.ondemand import measure_waiting
from grader.pipeline.ports import Executor, StoreOpener
from grader.pipeline.run import Pipeline
from grader.pipeline.serve import ServePolicy, Server
from grader.views.observe import Observer

log = logging.getLogger("gradeline")
#: a pipeline for a set of assignment packages (one phase of a regrade, say)
Pipelines = Callable[[Mapping[str, Problem]], Pipeline]


def _close(factory: object) -> None:
    close = getattr(factory, "close", None)
    if callable(close):
        close()  # pilots with no work left are cancelled


def _close_all(executors: Mapping[int, Executor]) -> None:
    for ex in list(executors.values()):
        _close(ex)


@contextlib.contextmanager
def run_pipeline(ctx: Context, cpus: str | None, *, dedupe: bool = True
                 ) -> Iterator[Pipeline]:
    """``gradeline run``'s pipeline: the spool (refused first, before any work), the
    packages' live phase, the image prepared, a store opened per run -- or none while
    the database is away (results wait in the spool for the next run) -- and the
    executor closed after the block."""
    spool = ctx.spool()
    cpu_set = ctx.cpus(cpus)
    problems = ctx.problems(live=True)
    ctx.prepare_image(problems=problems, waiting=spool)
    opener: StoreOpener | None
    try:
        opener = functools.partial(Store, ctx.db_url())  # the pipeline opens it, per run
    except GradelineError as e:
        log.error("%s -- grading anyway; results wait in the spool for the next run", e)
        opener = None
    factory = ctx.executor_factory(cpu_set)
    try:
        yield Pipeline(spool, problems, open_store=opener, executor=factory, dedupe=dedupe)
    finally:
        _close(factory)


def bulk_pipelines(ctx: Context, cpus: CpuSet, bulk: BulkSpec, *,
                   serving: bool = False) -> Pipelines:
    """Pipelines for work behind live feedback (the after-deadline phase, regrades):
    one executor for all of them, at the course's bulk priority on Slurm; no store of
    their own (the caller hands theirs to what they run)."""
    factory = ctx.executor_factory(cpus, serving=serving, bulk=bulk)
    return lambda problems: Pipeline(ctx.spool(), problems, open_store=None,
                                     executor=factory)


@dataclass(frozen=True, slots=True)
class ServeSetup:
    """What ``gradeline serve`` was asked for (its flags, typed).

    :param metrics: (host, port) of the Prometheus endpoint, or None for none.
    :param deadline_every_s: with a course file, on Slurm: the after-deadline pass this
        often (0: never).
    """

    policy: ServePolicy = field(default_factory=ServePolicy)
    cpus: str | None = None
    dedupe: bool = True
    metrics: tuple[str, int] | None = None
    deadline_every_s: float = 60.0


@dataclass(frozen=True, slots=True)
class Serving:
    """A serving stack, running: ``server.serve()`` it, ``server.stop()`` it."""

    server: Server
    pipe: Pipeline


@contextlib.contextmanager
def serving(ctx: Context, setup: ServeSetup) -> Iterator[Serving]:
    """The serving stack (see the module docstring); what it chose is said through
    ``ctx.say``. Serving without a database would leave students without results: the
    database must answer."""
    spool = ctx.spool(create=True)  # the service a course's hand-ins go to makes it
    cpus = ctx.cpus(setup.cpus)
    problems = ctx.problems(live=True)
    ctx.prepare_image(problems=problems, waiting=spool)
    url = ctx.db_url()
    factory = ctx.executor_factory(cpus, serving=True)
    closeable: dict[int, Executor] = {}  # the local pool (one for all batches)

    def executor(batch: Path) -> Executor:
        ex = factory(batch)
        if callable(getattr(ex, "close", None)):
            closeable[id(ex)] = ex
        return ex

    stores = Connections(url)  # kept open between batches
    with contextlib.ExitStack() as done:
        done.callback(stores.close)
        done.callback(_close, factory)
        done.callback(_close_all, closeable)
        pipe = Pipeline(spool, problems, open_store=functools.partial(Store, stores),
                        executor=executor, dedupe=setup.dedupe)
        server = Server(pipe, setup.policy, say=ctx.say)
        p = setup.policy
        ctx.say(f"serve: watching {spool.root} (batches of <= {p.batch_max}, "
                f"<= {p.in_flight} in flight, <= {p.per_student or 'any'} per student)")
        watcher = _deadline_watcher(ctx, cpus, url, setup.deadline_every_s)
        if setup.metrics is not None:
            host, port = setup.metrics
            observer = Observer(server, spool, ctx.course(), functools.partial(Store, url),
                                getattr(factory, "pool", None))
            metrics = prometheus.serve(observer.state, host, port)
            done.callback(metrics.shutdown)
            ctx.say(f"serve: Prometheus metrics on http://{host}:{port}/metrics")
        if watcher is not None:
            done.callback(watcher.stop)
            watcher.start()
        yield Serving(server, pipe)


def _deadline_watcher(ctx: Context, cpus: CpuSet, url: str, every_s: float
                      ) -> DeadlineWatcher | None:
    """With a course file and Slurm: the after-deadline pass (and the performance
    measurements students asked for) every ``every_s`` seconds, as bulk arrays at the
    course's priority (local workers would share the serving workers' cores and sandbox
    slots: there, run ``gradeline deadline``)."""
    course = ctx.course_file()
    if course is None or not every_s:
        return None
    if not ctx.slurm_available():
        ctx.say("serve: no Slurm: the after-deadline phase (and performance on demand) is "
                "not run from serve here; run gradeline deadline once the deadline has "
                "passed (and for the measurements students ask for)")
        return None
    full = ctx.problems()
    bulk = bulk_pipelines(ctx, cpus, course.bulk, serving=True)(full)

    def run_once(now: datetime) -> None:
        current = ctx.course_file()  # a moved deadline or a new extension applies
        assert current is not None
        due = [a.name for a in current.ordered() if a.deadline <= now and a.name in full]
        asked = any(a.on_demand for a in current.assignments.values())
        if not due and not asked:
            return
        with Store(url) as store:
            m = measure_waiting(bulk, current, full, store) if asked else None
            if m is not None and m.done:
                ctx.say(f"serve: performance on demand: {m.measured} measured, {m.failed} "
                        f"not measured, {m.refunded} refunded")
            for name in due:
                d = after_deadline(bulk, current, name, full[name], store, now)
                if d.graded_now:
                    ctx.say(f"serve: after the deadline of {name}: {d.graded_now} counting "
                            "submission(s) graded with the full suite")

    return DeadlineWatcher(run_once, every_s)

