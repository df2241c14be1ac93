"""Grading a batch as ONE Slurm array job: shards of K submissions, one array task
per shard, each task on whole cores of its own.

Layout under the batch directory (on a file system the compute nodes share):

    array-<n>/shard-<i>.json    the submissions of task i (problem, sources, language)
    array-<n>/shard-<i>.jsonl   its outcomes, appended and fsync'd one per line
    array-<n>/job.sbatch        the batch script; array-<n>/job.json its job id
    array-<n>/logs/<i>.log      task output

A task that is requeued (node lost) or retried skips what its .jsonl already
holds. A re-run of `gradeline run` first waits for arrays still active, then
collects every .jsonl, so nothing is graded twice and nothing is lost. What no
retry could finish ends as JE (never a hung run).
"""

from __future__ import annotations

import json
import logging
import math
import shlex
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.pool import Graded
from grader.problem import load_problem
from grader.result import SubmissionResult
from grader.scheduler import Scheduler, SchedulerError

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
    poll_s: float = 0.5


def _script(array_dir: Path, n_tasks: int, spec: ArraySpec, minutes: int, name: str) -> str:
    gradeline = Path(sys.executable).parent / "gradeline"
    throttle = f"%{spec.throttle}" if spec.throttle else ""
    lines = [
        "#!/bin/bash",
        f"#SBATCH --job-name=gradeline-{name}",
        f"#SBATCH --array=0-{n_tasks - 1}{throttle}",
        "#SBATCH --ntasks=1",
        f"#SBATCH --cpus-per-task={spec.cpus_per_task}",
        "#SBATCH --hint=nomultithread",
        f"#SBATCH --time={minutes}",
        "#SBATCH --requeue",
        f"#SBATCH --output={array_dir}/logs/%a.log",
        "#SBATCH --open-mode=append",
    ]
    if spec.partition:
        lines.append(f"#SBATCH --partition={spec.partition}")
    lines += [
        "# One shard of the batch: grades its submissions on this task's cores.",
        f"exec {shlex.quote(str(gradeline))} shard-run "
        f"{shlex.quote(str(array_dir))}/shard-$SLURM_ARRAY_TASK_ID.json",
    ]
    return "\n".join(lines) + "\n"


def read_outcomes(path: Path, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """Complete lines of a shard's .jsonl from ``offset``; returns them and the new offset."""
    if not path.exists():
        return [], offset
    with path.open("rb") as f:
        f.seek(offset)
        data = f.read()
    end = data.rfind(b"\n") + 1
    out = []
    for line in data[:end].split(b"\n"):
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError:
                log.warning("%s: skipping a torn line", path)
    return out, offset + end


def _graded(o: dict[str, Any]) -> Graded:
    res = o["result"]
    result: SubmissionResult | str = SubmissionResult.from_dict(res) if isinstance(res, dict) \
        else str(res)
    return Graded(o["submission"], result, o.get("started_at", ""), o.get("finished_at", ""))


class SlurmExecutor:
    """Runs (problem, sources, language) jobs as array tasks; yields outcomes as they land."""

    def __init__(self, scheduler: Scheduler, batch_dir: Path, spec: ArraySpec = ArraySpec(),
                 progress: Callable[[int, int], None] | None = None) -> None:
        self.scheduler = scheduler
        self.batch_dir = batch_dir
        self.spec = spec
        self.progress = progress
        self.job_ids: list[str] = []

    def _arrays(self) -> list[Path]:
        return sorted(self.batch_dir.glob("array-*"), key=lambda p: int(p.name.split("-")[1]))

    def collected(self) -> Iterator[Graded]:
        """Outcomes already on disk from earlier arrays (after a crash of the caller)."""
        for a in self._arrays():
            for shard in sorted(a.glob("shard-*.jsonl")):
                for o in read_outcomes(shard)[0]:
                    yield _graded(o)

    def wait_active(self) -> None:
        """Wait for arrays an earlier run submitted that are still pending or running."""
        for a in self._arrays():
            meta = a / "job.json"
            if meta.exists():
                job = json.loads(meta.read_text())["job_id"]
                self._wait(job)

    def run(self, jobs: Sequence[tuple[Path, Path, str | None]]) -> Iterator[Graded]:
        if not jobs:
            return
        done: set[str] = set()
        pending = list(jobs)
        for attempt in range(self.spec.retries + 1):
            if not pending:
                break
            yield from self._run_once(pending, done, len(jobs), attempt)
            pending = [j for j in pending if str(j[1]) not in done]
            if pending:
                log.warning("%d submissions unfinished after array attempt %d", len(pending),
                            attempt + 1)
        for _p, src, _l in pending:
            yield Graded(str(src), f"not graded after {self.spec.retries + 1} array attempts "
                                   "(tasks failed or timed out); judge error", "", "")

    def _run_once(self, jobs: Sequence[tuple[Path, Path, str | None]], done: set[str],
                  total: int, attempt: int) -> Iterator[Graded]:
        costs = {str(p): estimate_cost_s(p) for p in {p for p, _, _ in jobs}}
        k = self.spec.shard_size or shard_size([costs[str(p)] for p, _, _ in jobs],
                                               self.spec.cpus_per_task,
                                               self.scheduler.total_cpus())
        shards = [list(jobs[i:i + k]) for i in range(0, len(jobs), k)]
        limit = max(1, self.scheduler.max_array_size() - 1)
        for chunk_start in range(0, len(shards), limit):
            chunk = shards[chunk_start:chunk_start + limit]
            array_dir = self.batch_dir / f"array-{len(self._arrays())}"
            (array_dir / "logs").mkdir(parents=True)
            for i, shard in enumerate(chunk):  # renumbered from 0 in every chunk
                (array_dir / f"shard-{i}.json").write_text(json.dumps(
                    [{"problem": str(p), "submission": str(s), "language": lang}
                     for p, s, lang in shard]))
            est = max(costs[str(p)] for p, _, _ in jobs) * k / self.spec.cpus_per_task
            minutes = self.spec.time_limit_min or max(5, math.ceil(3 * est / 60) + 2)
            script = array_dir / "job.sbatch"
            script.write_text(_script(array_dir, len(chunk), self.spec, minutes,
                                      f"{self.batch_dir.name}-{attempt}"))
            job_id = self.scheduler.submit(script)
            (array_dir / "job.json").write_text(json.dumps(
                {"job_id": job_id, "tasks": len(chunk), "shard_size": k,
                 "submitted_at": time.time()}))
            self.job_ids.append(job_id)
            log.info("submitted array job %s: %d tasks of <= %d submissions", job_id, len(chunk),
                     k)
            yield from self._collect(job_id, array_dir, len(chunk), done, total)

    def _collect(self, job_id: str, array_dir: Path, n_tasks: int, done: set[str],
                 total: int) -> Iterator[Graded]:
        offsets = [0] * n_tasks

        def sweep() -> Iterator[Graded]:
            """Outcomes appended since the last sweep, each submission once."""
            for i in range(n_tasks):
                outs, offsets[i] = read_outcomes(array_dir / f"shard-{i}.jsonl", offsets[i])
                for o in outs:
                    if o["submission"] not in done:
                        done.add(o["submission"])
                        yield _graded(o)
                        if self.progress:
                            self.progress(len(done), total)

        last_check = 0.0
        while True:
            yield from sweep()
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
