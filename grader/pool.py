"""Grade many submissions in parallel: one worker process per CPU, each pinned to it.

Workers are processes (not threads) so that each is single-threaded when it
forks sandboxes, and each gets its own sandbox uid (its CPU slot).
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from grader.errors import GradelineError
from grader.judge import Judge
from grader.problem import Problem, load_problem
from grader.result import SubmissionResult


@dataclass(frozen=True, slots=True)
class Graded:
    """One outcome: the result, or the text of the error that prevented one."""

    submission: str
    result: SubmissionResult | str
    started_at: str
    finished_at: str


_judge: Judge | None = None
_problems: dict[str, Problem] = {}


def _init(slots: mp.Queue, workroot: str) -> None:  # type: ignore[type-arg]
    global _judge
    from grader.sandbox import open_sandbox

    cpu = slots.get()
    os.sched_setaffinity(0, [cpu])
    _judge = Judge(open_sandbox([cpu], build=False), Path(workroot), [cpu])


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _grade(problem_dir: str, submission: str, language: str | None) -> Graded:
    assert _judge is not None
    started = _now()
    try:
        if problem_dir not in _problems:
            _problems[problem_dir] = load_problem(problem_dir)
        result: SubmissionResult | str = _judge.grade(_problems[problem_dir], submission,
                                                      language)
    except GradelineError as e:
        result = str(e)
    return Graded(submission, result, started, _now())


def grade_inline(jobs: Sequence[tuple[Path, Path, str | None]], cpu: int, workroot: Path
                 ) -> Iterator[Graded]:
    """Grade in this process on one CPU (an array task with one core: no pool start-up)."""
    global _judge
    from grader.sandbox import open_sandbox

    os.sched_setaffinity(0, [cpu])
    _judge = Judge(open_sandbox([cpu], build=False), workroot, [cpu])
    for p, s, lang in jobs:
        yield _grade(str(p), str(s), lang)


class LocalExecutor:
    """One pinned worker process per CPU on this machine."""

    def __init__(self, cpus: Sequence[int], workroot: Path,
                 progress: Callable[[int, int], None] | None = None) -> None:
        self.cpus, self.workroot, self.progress = list(cpus), workroot, progress

    def run(self, jobs: Sequence[tuple[Path, Path, str | None]]) -> Iterator[Graded]:
        return grade_many(jobs, self.cpus, self.workroot, self.progress) if jobs else iter(())

    def collected(self) -> Iterator[Graded]:
        return iter(())

    def wait_active(self) -> None:
        return None


def grade_many(jobs: Sequence[tuple[Path, Path, str | None]], cpus: Sequence[int],
               workroot: Path,
               progress: Callable[[int, int], None] | None = None
               ) -> Iterator[Graded]:
    """Yield each submission's outcome as it finishes.

    :param jobs: (problem dir, submission path, language or None).
    """
    ctx = mp.get_context("spawn")
    slots = ctx.Queue()
    for c in cpus:
        slots.put(c)
    with ProcessPoolExecutor(max_workers=len(cpus), mp_context=ctx, initializer=_init,
                             initargs=(slots, str(workroot))) as ex:
        futs = [ex.submit(_grade, str(p), str(s), lang) for p, s, lang in jobs]
        for n, f in enumerate(as_completed(futs), 1):
            if progress:
                progress(n, len(futs))
            yield f.result()
