"""Grade many submissions on this machine: one worker process per CPU, pinned to it.

Workers are processes (not threads) so that each is single-threaded when it forks
sandboxes, and each worker's slot (its CPU) gives it a sandbox uid of its own.
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing as mp
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from grader.adapters.gpus import access as gpu_access
from grader.adapters.metrics.judging import NodeCounter
from grader.adapters.sandbox import SandboxConfig, abort_all, open_sandbox
from grader.core.jobs import GradingJob, JudgeFault, Outcome
from grader.core.samples import ShardSample
from grader.formats.problem import OnReject
from grader.judge.compile_cache import CompileCache
from grader.judge.judge import Judge
from grader.pipeline.shapes import by_shape

Progress = Callable[[int, int], None]
#: what gradeline sends a worker to stop it now (``grader.cli.stopping``)
STOP_SIGNAL = signal.SIGUSR1


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """How a worker builds its judge (picklable: workers are spawned processes).

    :param workroot: scratch space the sandbox uid can traverse.
    :param compile_cache: reuse compiles of comment-only variants.
    :param compile_accel: precompiled headers and the gold linker (see languages.yaml).
    :param on_reject: every group's on_reject (None: each group's own).
    :param runtime_extra: added to every result's ``runtime`` (e.g. the Slurm task).
    """

    sandbox: SandboxConfig
    workroot: Path
    compile_cache: bool = True
    compile_accel: bool = True
    on_reject: OnReject | None = None
    runtime_extra: dict[str, object] = field(default_factory=dict)
    #: the GPUs a worker here may use (a GPU assignment's runs see only these), and
    #: where their device files are
    gpus: tuple[int, ...] = ()
    gpu_devices: Path = Path("/dev")
    #: the nodes of the worker's allocation, and their addresses (an MPI pilot's ranks
    #: span them; a shape of more nodes runs its ranks on this one)
    nodes: int = 1
    peers: tuple[str, ...] = ()

    def judge(self, cpus: int | Sequence[int]) -> Judge:
        """A judge pinned to ``cpus`` (one, or a parallel shape's several), in the slot
        of the first."""
        cpus = [cpus] if isinstance(cpus, int) else list(cpus)
        os.sched_setaffinity(0, cpus)
        cache = CompileCache(self.workroot / "compile-cache") if self.compile_cache else None
        judge = Judge(open_sandbox(self.sandbox, self.workroot, slot=cpus[0], cpus=cpus,
                                   build=False, gpus=gpu_access(list(self.gpus), self.gpu_devices)),
                      self.workroot, cpus, compile_cache=cache, accelerate=self.compile_accel,
                      on_reject=self.on_reject, gpus=self.gpus, nodes=self.nodes,
                      peers=self.peers, counter=NodeCounter())
        judge.extra_runtime.update(self.runtime_extra)
        return judge


_judge: Judge | None = None


def _init(slots: mp.Queue, spec: WorkerSpec, parent: int) -> None:  # type: ignore[type-arg]
    global _judge
    # A Ctrl-C reaches the whole process group: gradeline decides what it stops, and
    # stops a worker with STOP_SIGNAL, which ends the worker's containers, runs and all.
    # SIGTERM keeps its default (Slurm's scancel kills the worker at once; a handler
    # that outlived the runner was a window for a JE result, see 919989a).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(STOP_SIGNAL, _on_stop)
    _judge = spec.judge(slots.get())
    atexit.register(_judge.close)  # the worker's container ends with the worker
    threading.Thread(target=_orphan_watch, args=(parent, _judge), daemon=True).start()


def _on_stop(signum: int, _frame: object) -> None:
    abort_all()
    os._exit(128 + signum)


def _orphan_watch(parent: int, judge: Judge) -> None:
    """End this worker (and its container) when gradeline (pid ``parent``; it may die
    while the worker is still starting) dies without shutting the pool down (a
    crash, kill -9): no grading process may outlive it. Polled, since
    PR_SET_PDEATHSIG fires when the *thread* that started the worker ends."""
    while os.getppid() == parent:
        time.sleep(0.5)
    judge.abort()
    os._exit(1)


def _grade(job: GradingJob) -> Outcome:
    assert _judge is not None, "worker not initialised"
    return _judge.grade_job(job)


def grade_inline(jobs: Iterable[GradingJob], cpus: int | Sequence[int], spec: WorkerSpec
                 ) -> Iterator[Outcome]:
    """Grade in this process with one judge on ``cpus`` (an array task with one core, or
    one of a parallel shape's size: no pool start-up)."""
    judge = spec.judge(cpus)
    try:
        for job in jobs:
            yield judge.grade_job(job)
    finally:
        judge.close()


def grade_many(jobs: Sequence[GradingJob], cpus: Sequence[int], spec: WorkerSpec,
               progress: Progress | None = None) -> Iterator[Outcome]:
    """Yield each job's outcome as it finishes, one pinned worker per CPU."""
    if not jobs:
        return
    ctx = mp.get_context("spawn")
    slots = ctx.Queue()
    for c in cpus:
        slots.put(c)
    with ProcessPoolExecutor(max_workers=len(cpus), mp_context=ctx, initializer=_init,
                             initargs=(slots, spec, os.getpid())) as ex:
        futs = [ex.submit(_grade, job) for job in jobs]
        for n, f in enumerate(as_completed(futs), 1):
            if progress:
                progress(n, len(futs))
            yield f.result()


class LocalExecutor:
    """The Executor port on this machine's CPUs: one pool of pinned workers per core
    count for the executor's life (batches in flight at once share them, so no CPU gets
    two workers and a batch costs no pool start-up). A parallel assignment's jobs
    (``core.shape``) go to workers of its core count, each on that many CPUs of their
    own; while they run, no other worker grades (``_Cores``), so no core is shared.
    Nothing survives a crash of ours, so there is nothing to collect or wait for
    afterwards."""

    def __init__(self, cpus: Sequence[int], spec: WorkerSpec,
                 progress: Progress | None = None) -> None:
        self.cpus, self.spec, self.progress = list(cpus), spec, progress
        self._pools: dict[int, ProcessPoolExecutor] = {}
        self._lock = threading.Lock()
        self._cores = _Cores()

    def _workers(self, cores: int) -> ProcessPoolExecutor:
        with self._lock:
            pool = self._pools.get(cores)
            if pool is None:
                groups = [tuple(self.cpus[i:i + cores])
                          for i in range(0, len(self.cpus) - cores + 1, cores)]
                ctx = mp.get_context("spawn")
                slots = ctx.Queue()
                for g in groups:
                    slots.put(g)
                pool = self._pools[cores] = ProcessPoolExecutor(
                    max_workers=len(groups), mp_context=ctx, initializer=_init,
                    initargs=(slots, self.spec, os.getpid()))
            return pool

    def run(self, jobs: Sequence[GradingJob]) -> Iterator[Outcome]:
        if not jobs:
            return
        by_cores: dict[int, list[GradingJob]] = {}
        for shape, group in by_shape(jobs).items():  # one machine: every rank on it
            by_cores.setdefault(shape.on_one_node().cores, []).extend(group)
        done, total = 0, len(jobs)
        for cores, group in sorted(by_cores.items()):
            if cores > len(self.cpus):
                for job in group:
                    done += 1
                    yield Outcome(job.key, JudgeFault(
                        f"the assignment needs {cores} cores; this machine gives gradeline "
                        f"{len(self.cpus)} (--cpus): nothing was graded"))
                continue
            with self._cores.hold(wide=cores > 1):
                futs = [self._workers(cores).submit(_grade, job) for job in group]
                for f in as_completed(futs):
                    done += 1
                    if self.progress:
                        self.progress(done, total)
                    yield f.result()

    def close(self) -> None:
        """Stop the workers (their containers end with them)."""
        with self._lock:
            for pool in self._pools.values():
                pool.shutdown()
            self._pools.clear()

    def collected(self) -> Iterator[Outcome]:
        return iter(())

    def wait_active(self) -> None:
        return None

    def samples(self) -> list[ShardSample]:
        return []


class _Cores:
    """Who grades now: any number of one-core batches, or one parallel group alone (its
    workers hold several CPUs each, which one-core workers would share)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._narrow = 0
        self._wide = False

    @contextlib.contextmanager
    def hold(self, *, wide: bool) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._wide and (not wide or not self._narrow))
            if wide:
                self._wide = True
            else:
                self._narrow += 1
        try:
            yield
        finally:
            with self._cond:
                if wide:
                    self._wide = False
                else:
                    self._narrow -= 1
                self._cond.notify_all()
