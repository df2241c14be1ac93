"""The body of one Slurm array task: grade one shard on this task's cores.

Theory of operation
-------------------
Slurm starts the task on cores it owns alone (``task/affinity`` pins the
process there; ``CpuSet.allowed()`` reads them back). The task

1. reads its jobs (``shard-<i>.json``) and the outcomes it already has
   (``shard-<i>.jsonl``): a requeued or retried task grades only the rest;
2. passes the fault point ``shard-start`` (where tests kill it);
3. grades every remaining job with one judge per core (in this process when it
   has one core: no pool start-up), appending each outcome with fsync as it
   finishes, so the submitting side streams them and a crash loses nothing
   already graded;
3b. a one-core task that has finished its own shard steals from shards no task
   has claimed yet (from their ends, at most one shard's worth: its time limit
   was set for one shard): every job is claimed first (``Shard.claim``, O_EXCL;
   a task claims its own shard when it starts), so none is graded twice, and the
   last pending tasks find their work done instead of running alone. Array
   tasks cost about a second each to start (Python, the container, Slurm), so
   fewer, larger shards plus stealing beat many small shards (measured in the
   runtime issue's note);
4. when asked, counts hardware events on its exclusive cores around the whole
   shard (everything counted there is this shard's work) into
   ``shard-<i>.metrics.jsonl``, always with the node monitor's summary of the shard
   (busy share of each of its cores, context switches/s, peak memory used; source
   ``monitor``), which reaches the metrics table with the counters.

It never imports the database driver: compute nodes need none (``make lint``
checks this with an import contract).

Exit status (isolate's contract)
--------------------------------
0   every job has a verdict;
1   every job has an outcome, but some submissions could not be graded as given
    (no source of an accepted language, unreadable files): recorded as CE with
    the reason -- the submissions' fault;
>=2 our fault: a judge fault was recorded (JE), or the shard could not be
    read; Slurm shows the task FAILED, and the submitting side retries every
    job that has no outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

from grader import faults
from grader.adapters.metrics.base import MetricsSource, counting
from grader.adapters.procfs import Monitor
from grader.core.cpuset import CpuSet
from grader.core.jobs import GradingJob, Outcome
from grader.core.samples import ShardSample
from grader.pipeline.local_executor import WorkerSpec, grade_inline, grade_many
from grader.pipeline.shapes import by_shape
from grader.pipeline.slurm.shards import Shard
from grader.settings import SlurmTask

#: the node monitor's sampling period around a shard (its busy share, context switches
#: and memory go to the metrics table with the shard's counters, source "monitor")
MONITOR_INTERVAL_S = 0.5

OK, SUBMISSION_FAULT, OUR_FAULT = 0, 1, 2

#: Grades jobs, yielding each outcome as it finishes. One-core graders take the jobs
#: lazily (a job is claimed only when its turn comes); others take them all at once.
Grade = Callable[[Iterable[GradingJob]], Iterator[Outcome]]


def local_grading(cpus: CpuSet, spec: WorkerSpec, slurm: SlurmTask) -> Grade:
    """One judge per core of the task (in this process when it has one core, or when its
    jobs' shape takes all its cores), every result recording the Slurm task it was
    graded in."""
    spec = replace(spec, runtime_extra={**spec.runtime_extra, "slurm": slurm.record()})
    if len(cpus) == 1:
        return lambda jobs: grade_inline(jobs, cpus.first, spec)

    def grade(jobs: Iterable[GradingJob]) -> Iterator[Outcome]:
        todo = list(jobs)
        shapes = list(by_shape(todo))
        if len(shapes) == 1 and shapes[0].cores == len(cpus):  # a parallel shape's task
            return grade_inline(todo, list(cpus), spec)
        return grade_many(todo, cpus, spec)

    return grade


def persistent_grading(cpus: CpuSet, spec: WorkerSpec, slurm: SlurmTask
                       ) -> tuple[Grade, Callable[[], None]]:
    """One judge (one container start) for many shards on the pilot's cores (one, or
    a parallel shape's several: every run gets them all); and the call that ends it."""
    spec = replace(spec, runtime_extra={**spec.runtime_extra, "slurm": slurm.record()})
    judge = spec.judge(list(cpus))
    judge.warm()  # while the pilot waits for its first ticket
    return (lambda jobs: (judge.grade_job(j) for j in jobs)), judge.close


def run_shard(shard: Shard, *, cpus: CpuSet, grade: Grade, slurm: SlurmTask,
              metrics: MetricsSource | None = None, steal: bool = True,
              say: Callable[[str], None] = print) -> int:
    """Grade what ``shard`` still lacks; returns the exit status above."""
    try:
        jobs = shard.jobs()
        done = shard.graded_here()
    except (OSError, ValueError, KeyError, TypeError) as e:
        say(f"{shard.name}: cannot read the shard: {e!r}")
        return OUR_FAULT
    # Its own jobs are claimed before anything else: a running task keeps its shard;
    # what idle tasks steal is the shards of tasks that have not started (pending, or
    # on a node that died before them).
    todo = [j for j in jobs if j.key not in done and shard.claim(j)]
    faults.point("shard-start", shard.name)
    say(f"{shard.name}: {len(todo)} of {len(jobs)} to grade on cpus {cpus} "
        f"{slurm.record()}")
    status = OK
    graded = 0

    def claimed() -> Iterator[GradingJob]:
        yield from todo
        budget = len(jobs)  # at most one more shard's worth: the time limit was set for K
        if steal and len(cpus) == 1:
            for other in shard.siblings():
                try:
                    theirs = other.jobs()
                except (OSError, ValueError, KeyError, TypeError):
                    continue
                for j in reversed(theirs):
                    if budget > 0 and j.key not in done and shard.claim(j):
                        say(f"{shard.name}: took {j.key} from {other.name}")
                        budget -= 1
                        yield j

    with counting(metrics, cpus, shard.metrics.with_suffix(".counters")) as samples, \
            Monitor(MONITOR_INTERVAL_S, cpus=cpus) as mon:
        for outcome in grade(claimed()):
            graded += 1
            shard.record(outcome)
            if outcome.fault is not None:
                cause = outcome.fault.cause
                status = max(status, SUBMISSION_FAULT if cause == "submission" else OUR_FAULT)
                say(f"{shard.name}: {outcome.key}: {cause} fault: {outcome.fault.reason}")
    shard.record_samples([ShardSample(s, graded, slurm.node, slurm.array_job_id,
                                      slurm.array_task_id) for s in [*samples, *mon.samples()]])
    return status
