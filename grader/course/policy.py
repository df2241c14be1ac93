"""Final grades from a course's rules: which submission counts, how late it was, the
grace days it took from the student's pool, the penalty, the grade. Pure: it reads
attempts (what the store knows) and the course, so a changed deadline or extension is
a new computation, never a regrade.

Which submission counts:

* ``last``: the student's latest submission accepted (on time, or late within
  ``max_late``);
* ``best``: the accepted submission with the highest visible-phase score after its
  late penalty (before the deadline only the visible groups have run, so that is the
  score there is to compare; ties go to the later one);
* ``chosen``: the one the student chose, if accepted; else ``last``.

Lateness is counted from the student's own deadline (extensions applied). Late days
begun are covered from the student's pool of grace days, assignment by assignment in
deadline order (at most ``late_days`` of the assignment's own); what is left costs
``penalty_per_day`` per day begun plus ``penalty_per_hour`` per hour begun, at most
``cap`` percent.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from grader.course.load import Assignment, Course
from grader.course.spec import LatePolicy

DAY = timedelta(days=1)
HOUR = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class Attempt:
    """One submission of a student to an assignment, with what is known of its scores."""

    spool_id: str
    student: str
    assignment: str
    submitted_at: datetime  # aware
    visible_score: float | None = None  # fraction of the visible groups' points
    score: float | None = None  # fraction of the full suite's points (after grading)
    chosen: bool = False


@dataclass(frozen=True, slots=True)
class Grade:
    """One student's grade for one assignment."""

    student: str
    assignment: str
    status: str  # final | pending (full suite not graded yet) | missing | too late
    spool_id: str | None = None
    submitted_at: datetime | None = None
    late: timedelta = timedelta(0)
    grace_days: int = 0  # taken from the pool for this assignment
    penalty_pct: float = 0.0
    raw: float | None = None  # fraction of the full suite's points
    final: float | None = None  # after the penalty, fraction
    points: float | None = None  # final x the assignment's points


def penalty(late: timedelta, policy: LatePolicy) -> float:
    """Percent deducted for ``late`` (already past the grace days)."""
    if late <= timedelta(0):
        return 0.0
    days, hours = math.ceil(late / DAY), math.ceil(late / HOUR)
    return min(policy.cap, policy.penalty_per_day * days + policy.penalty_per_hour * hours)


def lateness(course: Course, a: Assignment, attempt: Attempt) -> timedelta:
    return max(attempt.submitted_at - course.deadline(attempt.student, a.name), timedelta(0))


def accepted(course: Course, a: Assignment, attempt: Attempt) -> bool:
    limit = a.late.max_late
    return limit is None or lateness(course, a, attempt) <= limit


def counting(course: Course, a: Assignment, attempts: Sequence[Attempt]) -> Attempt | None:
    """The submission that counts for one student (see the module docstring)."""
    ok = sorted((t for t in attempts if accepted(course, a, t)),
                key=lambda t: (t.submitted_at, t.spool_id))
    if not ok:
        return None
    if a.counts == "chosen":
        chosen = [t for t in ok if t.chosen]
        return chosen[-1] if chosen else ok[-1]
    if a.counts == "best":
        def value(t: Attempt) -> float:
            vis = t.visible_score if t.visible_score is not None else -1.0
            return vis * (1 - penalty(lateness(course, a, t), a.late) / 100)

        return max(reversed(ok), key=value)  # max keeps the first of equals: the latest
    return ok[-1]


def grade_course(course: Course, attempts: Iterable[Attempt],
                 max_points: Mapping[str, float] | None = None) -> list[Grade]:
    """Every student's grade for every assignment (students: the roster's, and anyone
    who submitted), grace days spent in deadline order."""
    by: dict[tuple[str, str], list[Attempt]] = {}
    for t in attempts:
        if t.assignment in course.assignments:
            by.setdefault((t.student, t.assignment), []).append(t)
    students = sorted(set(course.students) | {s for s, _ in by})
    out: list[Grade] = []
    for student in students:
        pool = course.late_days
        for a in course.ordered():
            g, used = _grade_one(course, a, student, by.get((student, a.name), []), pool,
                                 (max_points or {}).get(a.name))
            pool -= used
            out.append(g)
    return out


def _grade_one(course: Course, a: Assignment, student: str, attempts: Sequence[Attempt],
               pool: int, package_max: float | None) -> tuple[Grade, int]:
    """(grade, grace days taken) of one student for one assignment."""
    if not attempts:
        return Grade(student, a.name, "missing", raw=0.0, final=0.0,
                     points=0.0 if (a.points or package_max) else None), 0
    t = counting(course, a, attempts)
    if t is None:
        return Grade(student, a.name, "too late", raw=0.0, final=0.0,
                     points=0.0 if (a.points or package_max) else None), 0
    late = lateness(course, a, t)
    need = math.ceil(late / DAY)
    cap = need if a.late_days is None else min(need, a.late_days)
    used = max(0, min(cap, pool))
    pct = penalty(late - used * DAY, a.late)
    if t.score is None:
        return Grade(student, a.name, "pending", t.spool_id, t.submitted_at, late, used,
                     pct), used
    final = t.score * (1 - pct / 100)
    scale = a.points or package_max
    return Grade(student, a.name, "final", t.spool_id, t.submitted_at, late, used, pct,
                 t.score, final, final * scale if scale else None), used
