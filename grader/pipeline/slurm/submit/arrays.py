"""Grading a batch as ONE Slurm array job: shards of K submissions, one array task
per shard, each task on whole cores of its own (layout: ``slurm.shards``).

A task that is requeued (node lost) or retried skips what its outcome file
already holds. A re-run of `gradeline run` first waits for arrays still active,
then collects every outcome file, so nothing is graded twice and nothing is lost.
What no retry could finish ends as a judge fault (JE), never a hung run.
"""

from __future__ import annotations

import logging
import math
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.adapters.scheduler.base import Scheduler, SchedulerError
from grader.adapters.scheduler.script import ArrayRequest, array_script
from grader.core.jobs import GradingJob, JudgeFault, Outcome
from grader.core.samples import ShardSample
from grader.core.shape import Shape
from grader.formats.load import load_problem
from grader.pipeline.shapes import by_shape
from grader.pipeline.slurm.shards import ArrayDir, batch_outcomes, batch_samples

log = logging.getLogger(__name__)

TARGET_TASK_S = 60.0  # shard size K is chosen so a task runs about this long


def estimate_cost_s(problem_dir: Path) -> float:
    """Rough seconds to grade one submission: compile plus every test."""
    return 0.6 + 0.05 * len(load_problem(problem_dir).cases)


def shard_size(costs: Sequence[float], cpus_per_task: int, total_cpus: int = 1,
               target_s: float = TARGET_TASK_S) -> int:
    """K such that one task (its CPUs working in parallel) runs about ``target_s``, but
    small enough that a small batch still gives every core about four tasks (tasks
    differ in length; with too few of them the last ones run alone)."""
    if not costs:
        return 1
    mean = sum(costs) / len(costs)
    by_time = math.floor(target_s * cpus_per_task / mean)
    slots = max(1, total_cpus // cpus_per_task)
    by_balance = math.ceil(len(costs) / (4 * slots))
    return max(1, min(by_time, by_balance))


@dataclass(frozen=True, slots=True)
class ArraySpec:
    """How array tasks are requested."""

    cpus_per_task: int = 1
    shard_size: int | None = None  # None: chosen from the cost estimate
    throttle: int | None = None  # %T: at most T tasks at once
    retries: int = 2  # resubmissions of unfinished shards before they become JE
    time_limit_min: int | None = None  # None: from the estimate
    partition: str | None = None
    nice: int | None = None  # bulk work (after the deadline, regrades) behind live feedback
    qos: str | None = None
    account: str | None = None  # the course's Slurm account
    #: about how long one task runs; bulk work keeps it short, so that a core it holds
    #: is soon free for live feedback (Slurm does not preempt a running task)
    target_task_s: float = TARGET_TASK_S
    poll_s: float = 0.5
    #: stop watching an array once every submission has its outcome, before the
    #: controller reports its tasks ended (serve: frees the in-flight slot at once;
    #: counter samples written after the last outcome are then not collected)
    early_return: bool = False


def task_command(array_dir: Path) -> list[str]:
    """What each array task runs: the lean task entry, with this interpreter (the
    venv's, on the shared file system), not the full command line."""
    return [sys.executable, "-m", "grader.cli.task", str(array_dir)]


class SlurmExecutor:
    """The Executor port on Slurm: jobs become array tasks; outcomes stream back."""

    def __init__(self, scheduler: Scheduler, batch_dir: Path, spec: ArraySpec = ArraySpec(),
                 progress: Callable[[int, int], None] | None = None) -> None:
        self.scheduler = scheduler
        self.batch_dir = batch_dir
        self.spec = spec
        self.progress = progress
        self.job_ids: list[str] = []

    def collected(self) -> Iterator[Outcome]:
        """Outcomes already on disk from earlier arrays (after a crash of the caller)."""
        return batch_outcomes(self.batch_dir)

    def samples(self) -> list[ShardSample]:
        return batch_samples(self.batch_dir)

    def wait_active(self) -> None:
        """Wait for arrays an earlier run submitted that are still pending or running."""
        for a in ArrayDir.all(self.batch_dir):
            job = a.job()
            if job is not None:
                self._wait(str(job["job_id"]))

    def run(self, jobs: Sequence[GradingJob]) -> Iterator[Outcome]:
        if not jobs:
            return
        done: set[str] = set()
        pending = list(jobs)
        for attempt in range(self.spec.retries + 1):
            if not pending:
                break
            yield from self._run_once(pending, done, len(jobs), attempt)
            pending = [j for j in pending if j.key not in done]
            if pending:
                log.warning("%d submissions unfinished after array attempt %d", len(pending),
                            attempt + 1)
        for job in pending:
            yield Outcome(job.key, JudgeFault(f"not graded after {self.spec.retries + 1} array "
                                              "attempts (tasks failed or timed out)"))

    def _run_once(self, jobs: Sequence[GradingJob], done: set[str], total: int,
                  attempt: int) -> Iterator[Outcome]:
        for shape, group in by_shape(jobs).items():  # a parallel shape: arrays of its size
            yield from self._arrays(shape, group, done, total, attempt)

    def _arrays(self, shape: Shape, jobs: Sequence[GradingJob], done: set[str], total: int,
                attempt: int) -> Iterator[Outcome]:
        cpus_per_task = self.spec.cpus_per_task if shape.serial else shape.cpus
        costs = {p: estimate_cost_s(p) for p in {j.problem for j in jobs}}
        k = self.spec.shard_size or shard_size([costs[j.problem] for j in jobs],
                                               cpus_per_task,
                                               self.scheduler.total_cpus(),
                                               self.spec.target_task_s)
        shards = [list(jobs[i:i + k]) for i in range(0, len(jobs), k)]
        limit = max(1, self.scheduler.max_array_size() - 1)
        for chunk_start in range(0, len(shards), limit):
            chunk = shards[chunk_start:chunk_start + limit]
            array = ArrayDir.create(self.batch_dir)
            for i, shard in enumerate(chunk):  # renumbered from 0 in every chunk
                array.shard(i).write_jobs(shard)
            est = max(costs.values()) * k / (1 if not shape.serial else cpus_per_task)
            minutes = self.spec.time_limit_min or max(5, math.ceil(3 * est / 60) + 2)
            request = ArrayRequest(
                name=f"gradeline-{self.batch_dir.name}-{attempt}", tasks=len(chunk),
                cpus_per_task=cpus_per_task, minutes=minutes,
                output=array.log_pattern, throttle=self.spec.throttle,
                partition=self.spec.partition, nice=self.spec.nice, qos=self.spec.qos,
                account=self.spec.account)
            if not shape.serial:
                request = request.for_shape(shape)
            array.script.write_text(array_script(request, task_command(array.path)))
            job_id = self.scheduler.submit(array.script)
            array.save_job(job_id, len(chunk), k)
            self.job_ids.append(job_id)
            log.info("submitted array job %s: %d tasks of <= %d submissions", job_id, len(chunk),
                     k)
            yield from self._collect(job_id, array, len(chunk), done, total,
                                     {j.key for shard in chunk for j in shard})

    def _collect(self, job_id: str, array: ArrayDir, n_tasks: int, done: set[str],
                 total: int, keys: set[str]) -> Iterator[Outcome]:
        """Stream the array's outcomes until it ends (or, with ``early_return``, until
        every one of ``keys`` has its outcome: its tasks are then only exiting)."""
        offsets = [0] * n_tasks

        def sweep() -> Iterator[Outcome]:
            """Outcomes appended since the last sweep, each submission once."""
            for i in range(n_tasks):
                outs, offsets[i] = array.shard(i).read_outcomes(offsets[i])
                for o in outs:
                    if o.key not in done:
                        done.add(o.key)
                        yield o
                        if self.progress:
                            self.progress(len(done), total)

        last_check = 0.0
        while True:
            yield from sweep()
            if self.spec.early_return and keys <= done:
                return
            now = time.monotonic()
            if now - last_check >= 2.0:
                last_check = now
                if self._finished(job_id, n_tasks):
                    yield from sweep()  # lines written just before the end
                    return
            time.sleep(self.spec.poll_s)

    def _finished(self, job_id: str, n_tasks: int) -> bool:
        try:
            tasks = self.scheduler.tasks(job_id)
        except SchedulerError as e:
            log.warning("cannot query job %s: %s", job_id, e)
            return False
        if not tasks:
            return True  # purged from the controller: long finished
        return len(tasks) >= n_tasks and all(t.final for t in tasks.values())

    def _wait(self, job_id: str) -> None:
        while True:
            try:
                tasks = self.scheduler.tasks(job_id)
            except SchedulerError:
                return
            if not tasks or all(t.final for t in tasks.values()):
                return
            time.sleep(2.0)
