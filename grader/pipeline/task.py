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
4. when asked, counts hardware events on its exclusive cores around the whole
   shard (everything counted there is this shard's work) into
   ``shard-<i>.metrics.jsonl``.

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

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from grader import faults
from grader.adapters.metrics.base import MetricsSource, counting
from grader.core.jobs import GradingJob, Outcome
from grader.core.samples import ShardSample
from grader.cpuset import CpuSet
from grader.pipeline.local_executor import WorkerSpec, grade_inline, grade_many
from grader.pipeline.shards import Shard
from grader.settings import SlurmTask

OK, SUBMISSION_FAULT, OUR_FAULT = 0, 1, 2

#: Grades jobs, yielding each outcome as it finishes.
Grade = Callable[[Sequence[GradingJob]], Iterator[Outcome]]


def local_grading(cpus: CpuSet, spec: WorkerSpec, slurm: SlurmTask) -> Grade:
    """One judge per core of the task (in this process when it has one core), every
    result recording the Slurm task it was graded in."""
    spec = replace(spec, runtime_extra={**spec.runtime_extra, "slurm": slurm.record()})
    if len(cpus) == 1:
        return lambda jobs: grade_inline(jobs, cpus.first, spec)
    return lambda jobs: grade_many(jobs, cpus, spec)


def run_shard(shard: Shard, *, cpus: CpuSet, grade: Grade, slurm: SlurmTask,
              metrics: MetricsSource | None = None,
              say: Callable[[str], None] = print) -> int:
    """Grade what ``shard`` still lacks; returns the exit status above."""
    try:
        jobs = shard.jobs()
        done = {o.key for o in shard.read_outcomes()[0]}
    except (OSError, ValueError, KeyError, TypeError) as e:
        say(f"{shard.name}: cannot read the shard: {e!r}")
        return OUR_FAULT
    todo = [j for j in jobs if j.key not in done]
    faults.point("shard-start", shard.name)
    say(f"{shard.name}: {len(todo)} of {len(jobs)} to grade on cpus {cpus} "
        f"{slurm.record()}")
    status = OK
    with counting(metrics, cpus, shard.metrics.with_suffix(".counters")) as samples:
        for outcome in grade(todo):
            shard.record(outcome)
            if outcome.fault is not None:
                cause = outcome.fault.cause
                status = max(status, SUBMISSION_FAULT if cause == "submission" else OUR_FAULT)
                say(f"{shard.name}: {outcome.key}: {cause} fault: {outcome.fault.reason}")
    shard.record_samples([ShardSample(s, len(todo), slurm.node, slurm.array_job_id,
                                      slurm.array_task_id) for s in samples])
    return status
