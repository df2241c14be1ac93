"""The after-deadline phase: once a student's own deadline has passed, the submission
that counts for them (``course.policy``) is graded with the full suite, if it has not
been yet. It is idempotent: run again later (a late submission within ``max_late``
may become the counting one, an extension moves a deadline), it grades only what still
lacks a full result. The caller gives the executor, at the course's bulk priority."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from grader.core.errors import GradelineError
from grader.course.load import Course
from grader.course.policy import Attempt, counting
from grader.formats.problem import Problem
from grader.pipeline.ports import ResultStore
from grader.pipeline.regrade import grade_again
from grader.pipeline.run import Pipeline

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DeadlineSummary:
    """What one pass did for one assignment."""

    assignment: str
    due: int  # students whose deadline has passed and who submitted
    graded_before: int  # of them, counting submissions that had their full result
    graded_now: int  # full results stored by this pass
    waiting: int  # students whose own deadline (an extension) has not passed yet


def to_grade(course: Course, assignment: str, attempts: list[Attempt], now: datetime
             ) -> tuple[list[str], int, int, int]:
    """(spool ids to grade fully, students due, already graded, still waiting)."""
    a = course.assignments[assignment]
    by: dict[str, list[Attempt]] = {}
    for t in attempts:
        if t.assignment == assignment:
            by.setdefault(t.student, []).append(t)
    todo: list[str] = []
    due = done = waiting = 0
    for student, tries in sorted(by.items()):
        if course.deadline(student, assignment) > now:
            waiting += 1
            continue
        counts = counting(course, a, tries)
        if counts is None:
            continue
        due += 1
        if counts.score is None:
            todo.append(counts.spool_id)
        else:
            done += 1
    return todo, due, done, waiting


def after_deadline(pipe: Pipeline, course: Course, assignment: str, problem: Problem,
                   store: ResultStore, now: datetime) -> DeadlineSummary:
    """Grade fully the counting submissions of the students who are due."""
    store.migrate()
    todo, due, done, waiting = to_grade(course, assignment, store.attempts(course.name), now)
    graded = grade_again(pipe, problem, store, todo, prefix="d", assignment=assignment) \
        if todo else 0
    return DeadlineSummary(assignment, due, done, graded, waiting)


class DeadlineWatcher:
    """Runs the after-deadline pass beside ``serve``: every ``every_s`` seconds
    ``run_once(now)`` (which reloads the course file, so a moved deadline or a new
    extension applies) in a thread of its own, so the serve loop never waits for bulk
    work. A failed pass is logged and tried again at the next tick."""

    def __init__(self, run_once: Callable[[datetime], None], every_s: float = 60.0) -> None:
        self.run_once, self.every_s = run_once, every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="deadline", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop ticking; a pass in progress finishes in the background (its bulk work is
        graded again by the next serve's pass if it is cut short)."""
        self._stop.set()
        self._thread.join(timeout_s)

    def _loop(self) -> None:
        while True:
            try:
                self.run_once(datetime.now(UTC))
            except (GradelineError, OSError) as e:
                log.error("after-deadline pass failed: %s; trying again in %g s", e,
                          self.every_s)
            if self._stop.wait(self.every_s):
                return
