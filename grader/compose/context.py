"""What a command needs, wired from the settings and its options: CPUs, the sandbox and
its images, the spool, the assignments, the course, the database, the read side's
store and the executor (``grader.compose`` says which source decides what)."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader.adapters import gpus as gpu_devices
from grader.adapters.metrics.judging import NodeCounter
from grader.adapters.private_dirs import shared_dir_problem
from grader.adapters.sandbox import SandboxConfig, choose_runtime, open_sandbox
from grader.adapters.sandbox.assignment_image import ensure_assignment_images
from grader.adapters.scheduler.base import SchedulerError
from grader.adapters.scheduler.slurm import SlurmCLI, detect_scheduler, local_cluster_conf
from grader.adapters.spool import Spool
from grader.adapters.store.connections import Connections, recreate_database
from grader.adapters.store.postgres import Store
from grader.adapters.store.server import LocalServer, database_url
from grader.compose import worker
from grader.compose.options import Options
from grader.core.cpuset import CpuSet
from grader.core.errors import ConfigError, GradelineError, RefusedError
from grader.core.shape import Capacity, refusal
from grader.course.load import Course, load_course
from grader.course.spec import BulkSpec, SlurmSpec
from grader.course.visibility import visible_groups
from grader.examples import example_dirs
from grader.formats.load import load_problem
from grader.formats.problem import Problem
from grader.judge.compile_cache import CompileCache
from grader.judge.judge import Judge
from grader.pipeline.local_executor import LocalExecutor, Progress, WorkerSpec
from grader.pipeline.ports import ExecutorFactory
from grader.pipeline.slurm.submit.arrays import ArraySpec, SlurmExecutor
from grader.pipeline.slurm.submit.pool import PilotFactory, PilotPool
from grader.pipeline.slurm.tickets import PilotSpec
from grader.settings import Settings
from grader.views.ports import ReadsOpener

log = logging.getLogger("gradeline")

#: a bulk array task's length: short, so live feedback waits for a core at most this long
BULK_TASK_S = 10.0
#: a progress line for a label (done, total) -> None
ProgressMaker = Callable[[str], Progress]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Context:
    """The settings and options of one invocation, and the wiring of adapters from them
    (the order in which the sources decide: ``grader.compose``).

    :param state_dir: ``--state-dir``, else the settings' state directory.
    :param progress: makes a live progress line for a label (the command line's), or
        None for none.
    :param say: where the wiring says what it chose (the executor, its charges).
    """

    settings: Settings
    state_dir: Path
    options: Options = field(default_factory=Options)
    progress: ProgressMaker | None = None
    say: Callable[[str], None] = _stderr

    def refuse_shared_state(self) -> None:
        """Refuse a state dir (images, the local database, work dirs) that another
        account could change.

        :raises ConfigError: with the remedy.
        """
        problem = shared_dir_problem(self.state_dir)
        if problem:
            raise ConfigError(f"state dir {self.state_dir}: {problem[0]}: {problem[1]} "
                              "(or set GRADELINE_STATE_DIR)")

    # -- machine -----------------------------------------------------------------
    def cpus(self, text: str | None) -> CpuSet:
        """``--cpus`` (e.g. 0-3), or every CPU this process may use."""
        if not text:
            return CpuSet.allowed()
        try:
            return CpuSet.parse(text)
        except ValueError as e:
            raise GradelineError(f"--cpus: {e}") from e

    def gpus(self) -> list[int]:
        """The GPUs a grading here may use (the Slurm job's, else every one present)."""
        slurm = self.settings.slurm
        return gpu_devices.allowed(slurm.job_gpus, in_job=slurm.job_id is not None,
                                   dev=self.settings.gpu_devices)

    # -- grading -----------------------------------------------------------------
    @property
    def sandbox_config(self) -> SandboxConfig:
        return worker.sandbox_config(self.settings, self.state_dir)

    @property
    def workroot(self) -> Path:
        return worker.workroot(self.state_dir)

    def worker(self) -> WorkerSpec:
        return worker.worker_spec(self.settings, self.state_dir)

    def prepare_image(self, runtime: str | None = None,
                      problems: Mapping[str, Problem] | None = None, *,
                      local: CpuSet | None = None, waiting: Spool | None = None) -> None:
        """Build the grading image once, up front (workers only look it up), and the
        images of ``problems`` that grade on one of their own; for ``runtime`` instead of
        the settings' one when given (an experiment varies it). First, refuse
        ``problems`` whose shape the executor cannot give (``check_placement``;
        ``local``: they grade on these CPUs of this machine; ``waiting``: without a
        course file, only the packages with submissions waiting in this spool are held
        to it, the others said once).

        :raises ImageError: before anything is graded, when an image is missing and
            cannot be built here (it names the command that builds it).
        :raises ConfigError: when an assignment asks for more cores, nodes or GPUs
            than the place it grades on has.
        """
        if problems:
            self.check_placement(problems, local, waiting)
        cfg = self.sandbox_config
        if runtime is not None:
            cfg = replace(cfg, runtime=runtime)
        open_sandbox(cfg, self.workroot, build=True).close()
        if problems:
            ensure_assignment_images(
                cfg.images(), cfg.definition_path, choose_runtime(cfg.runtime)[0],
                sorted(problems.items()), self.workroot / ".autograders", self.say)

    def check_placement(self, problems: Mapping[str, Problem],
                        local: CpuSet | None = None, waiting: Spool | None = None) -> None:
        """:raises ConfigError: naming each assignment whose shape (``core.shape``) no
        allocation of the executor can give -- the Slurm partition's largest node and
        its GPUs, or this machine's CPUs (``local``, or when no Slurm grades) -- before
        anything is graded. Without a course file, a package root is a collection of
        packages: only those with submissions ``waiting`` are refused; the others are
        said once, for when their submissions come."""
        shaped = {n: p.shape for n, p in problems.items() if not p.shape.serial}
        if not shaped:
            return
        sched = self.scheduler() if local is None and self.slurm_available() else None
        cpus = local if local is not None else CpuSet.allowed()
        try:
            cap = replace(sched.capacity(self.options.partition),
                          ranks_as_job_user=os.geteuid() != 0) if sched is not None else \
                Capacity(1, len(cpus), len(self.gpus()),
                         "this machine (the CPUs gradeline may use)", multi_node=False)
        except SchedulerError as e:
            raise ConfigError(f"cannot tell what Slurm can give these assignments: {e}") \
                from None
        why = {n: r for n, sh in sorted(shaped.items()) if (r := refusal(sh, cap))}
        if waiting is not None and self.course_file() is None:
            held = {m.assignment for e in waiting.new_entries()
                    if (m := e.meta_or_none()) is not None}
            for n in [n for n in why if n not in held]:
                self.say(f"note: {n} cannot be graded here ({why.pop(n)})")
        if why:
            raise ConfigError("; ".join(f"{n}: {r}" for n, r in why.items()) +
                              ". Nothing was graded")

    def judge(self, cpus: CpuSet, *, keep_workdirs: bool = False) -> Judge:
        cache = CompileCache(self.workroot / "compile-cache") \
            if self.settings.compile_cache else None
        return Judge(open_sandbox(self.sandbox_config, self.workroot, slot=cpus.first,
                                  cpus=cpus), self.workroot, cpus, keep_workdirs=keep_workdirs,
                     compile_cache=cache, accelerate=self.settings.compile_accel,
                     on_reject=self.settings.on_reject, counter=NodeCounter())

    @contextlib.contextmanager
    def validator_check(self, cpus: CpuSet) -> Iterator[Callable[[Problem], str | None]]:
        """A check that compiles a package's custom output validator (or interactor) in
        the grading image, as grading would and before it (the image prepared first),
        and says why it does not compile, or None; its sandbox ends with the block."""
        judges: list[Judge] = []

        def fault(problem: Problem) -> str | None:
            if problem.validator_dir is None:
                return None
            if not judges:
                judges.append(self.judge(cpus))
            return judges[0].validator_fault(problem)

        try:
            yield fault
        finally:
            for j in judges:
                j.close()

    def local_executor(self, cpus: CpuSet, label: str = "grading") -> LocalExecutor:
        return LocalExecutor(cpus, self.worker(), self._progress(label))

    def scheduler(self) -> SlurmCLI | None:
        """The Slurm that answers here (the site's, else the local cluster's), or None."""
        return detect_scheduler(local_cluster_conf(self.state_dir, self.settings.slurm_conf))

    def _progress(self, label: str) -> Progress | None:
        return self.progress(label) if self.progress is not None else None

    def slurm_available(self) -> bool:
        """Whether grading goes through Slurm (--executor, else a controller answers)."""
        if (self.options.executor or self.settings.executor) == "local":
            return False
        return self.scheduler() is not None

    def executor_factory(self, cpus: CpuSet, *,
                         serving: bool = False, bulk: BulkSpec | None = None
                         ) -> ExecutorFactory:
        """Slurm arrays when a controller answers (or --executor slurm), else local.
        ``serving``: batches overlap, so no progress bar, and an array frees its slot
        as soon as every outcome is in. ``bulk``: work behind live feedback (after the
        deadline, regrades): one array job per batch at the course's lower priority."""
        o = self.options
        choice = o.executor or self.settings.executor
        progress = None if serving else self._progress("grading")
        course = self.course_file()
        charge = course.slurm if course is not None else SlurmSpec()
        if choice in ("auto", "slurm"):
            sched = self.scheduler()
            if sched is not None:
                spec = ArraySpec(cpus_per_task=o.cpus_per_task, shard_size=o.shard_size,
                                 throttle=o.throttle, partition=o.partition,
                                 retries=o.retries, early_return=serving,
                                 account=charge.account, qos=charge.qos)
                if bulk is not None:
                    spec = replace(spec, nice=bulk.nice, qos=bulk.qos,
                                   partition=bulk.partition or spec.partition,
                                   target_task_s=BULK_TASK_S)
                    self.say(f"executor: Slurm ({sched.name}), one array job at nice "
                             f"{bulk.nice}" + (f", QOS {bulk.qos}" if bulk.qos else "")
                             + _charged(charge))
                    return lambda batch: SlurmExecutor(sched, batch, spec, progress)
                if o.dispatch == "pilots":
                    pilots = PilotSpec(pilots=o.pilots or sched.total_cpus(),
                                       idle_s=o.pilot_idle_s, minutes=o.pilot_minutes,
                                       partition=o.partition, ticket_size=o.shard_size,
                                       account=charge.account, qos=charge.qos)
                    self.say(f"executor: Slurm ({sched.name}), up to {pilots.pilots} pilot "
                             "tasks pulling work" + _charged(charge))
                    return PilotFactory(PilotPool(sched, self.spool().pilots,
                                                  pilots), progress)
                self.say(f"executor: Slurm ({sched.name}), one array job per batch"
                         + _charged(charge))
                return lambda batch: SlurmExecutor(sched, batch, spec, progress)
            if choice == "slurm":
                raise GradelineError("--executor slurm: no Slurm controller answers (start one "
                                     "with slurm/local-cluster.sh start, or set SLURM_CONF)")
            self.say("executor: local (no Slurm controller answers)")
        else:
            self.say("executor: local")
        executor = LocalExecutor(cpus, self.worker(), progress)
        return lambda _batch: executor

    # -- course ------------------------------------------------------------------
    def spool_path(self) -> Path:
        """Where the spool is: ``--spool``, else the settings', else ``./spool``."""
        return Path(self.options.spool or self.settings.spool or "spool").resolve()

    def spool(self, *, create: bool = False) -> Spool:
        """The spool; ``create``: made where there is none, and said (only the commands
        that hand submissions in and the services that take them make one; every other
        command refuses a path without a spool: ``Spool``)."""
        root = self.spool_path()
        made = create and not root.exists()
        spool = Spool(root, create=create)
        if made:
            self.say(f"made a new spool at {root}")
        return spool

    def course_file(self) -> Course | None:
        """The course file of ``--course-file`` or $GRADELINE_COURSE_FILE, if any."""
        path = self.options.course_file or self.settings.course_file
        return load_course(path) if path else None

    def course_required(self, why: str = "") -> Course:
        """The course file, or an error saying how to give one (and ``why`` it is needed)."""
        course = self.course_file()
        if course is None:
            raise GradelineError(f"no course file{why}: give --course-file or set "
                                 "GRADELINE_COURSE_FILE")
        return course

    def course(self) -> str:
        named = self.course_file()
        given = self.options.course
        if named is not None and given and given != named.name:
            raise GradelineError(f"--course {given} but the course file is for "
                                 f"{named.name}")
        return str(given or (named.name if named else None) or self.settings.course
                   or "default")

    def problems(self, *, live: bool = False) -> dict[str, Problem]:
        """Assignment packages by name: the course file's, or every dir with a
        problem.yaml under the roots. ``live``: what grading at hand-in runs -- with a
        course file, only each assignment's visible groups (the rest after the
        deadline: ``gradeline deadline``)."""
        course = self.course_file()
        if course is not None:
            out = {}
            for a in course.ordered():
                p = load_problem(a.package)
                shown = visible_groups([g.name for g in p.groups], a.visibility)
                out[a.name] = p.restricted(sorted(shown)) \
                    if live and shown != {g.name for g in p.groups} else p
            return out
        found = {name: load_problem(path) for name, path in self._packages().items()}
        if not found:
            raise GradelineError(f"no assignment packages (*/problem.yaml) under "
                                 f"{[str(r) for r in self._roots()]}")
        return found

    def _roots(self) -> list[Path]:
        return list(self.options.assignments) or list(self.settings.assignments) or \
            [example_dirs()[0].parent]

    def _packages(self) -> dict[str, Path]:
        """Package directories by name under the roots (without a course file)."""
        return {py.parent.name: py.parent for root in self._roots()
                for py in sorted(root.resolve().glob("*/problem.yaml"))}

    def assignment_known(self, name: str) -> None:
        """:raises RefusedError: when no course file or package root has ``name``."""
        course = self.course_file()
        known = list(course.assignments) if course is not None else list(self._packages())
        if name not in known:
            raise RefusedError(f"no assignment {name!r} (there are: "
                               f"{', '.join(sorted(known)) or 'none'})")

    # -- database ----------------------------------------------------------------
    def local_server(self) -> LocalServer:
        return LocalServer(self.state_dir)

    def db_url(self, *, start: bool = True) -> str:
        return database_url(self.state_dir, self.settings.db_url, start=start)

    def store(self, *, start: bool = True) -> Store:
        return Store(self.db_url(start=start))

    def fresh_database(self, name: str) -> str:
        """An empty database ``name`` (dropped first) on the server of ``db_url``: its URL."""
        return recreate_database(self.db_url(), name)

    @functools.cached_property
    def _connections(self) -> Connections:
        return Connections(self.db_url(), keep=16)

    def reads(self) -> ReadsOpener:
        """The read side's store: connections kept open between requests (a desk at a
        deadline answers hundreds a second), each checked before it is lent again."""
        return functools.partial(Store, self._connections)


def _charged(charge: SlurmSpec) -> str:
    """How the executor line names the course's account and live QOS."""
    return "".join(f", {k} {v}" for k, v in (("account", charge.account),
                                              ("live QOS", charge.qos)) if v)
