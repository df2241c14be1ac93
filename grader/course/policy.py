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

Team work (``course.teams``) is graded once per team, on the team's submissions, and
the grade goes to every member (each row a member's own). Lateness is charged as the
assignment's ``teams: charge`` says: ``every_member`` -- each member's lateness from
their own deadline, covered from their own grace days; ``poorest_member`` -- the team's
lateness from the earliest of its members' deadlines, covered by at most the grace days
of the member with fewest left, and the same days taken from every member's pool.
Changes by hand (``course.grade_changes``) come last: a submission's adjusted points,
then a member's own override.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from grader.course.grade_changes import GradeChange, adjusted, latest, override
from grader.course.load import Assignment, Course
from grader.course.spec import LatePolicy
from grader.course.teams import Owner, Teams

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
    team: str = ""  # the team graded as one (none: alone)
    changes: tuple[str, ...] = ()  # changes by hand that count (``grade_changes``)


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
                 max_points: Mapping[str, float] | None = None, *,
                 teams: Teams | None = None, changes: Sequence[GradeChange] = ()
                 ) -> list[Grade]:
    """Every student's grade for every assignment (students: the roster's, anyone who
    submitted, every team member), grace days spent in deadline order.

    :param teams: the course's teams (``course.teams``): a team assignment is graded
        once per team, its grade given to each member, lateness charged as the
        assignment's ``teams: charge`` says.
    :param changes: grades changed by hand (``course.grade_changes``), in the order
        they were made; the latest for each target counts.
    """
    teams = teams or Teams()
    counted = latest(changes)
    by: dict[tuple[str, Owner], list[Attempt]] = {}
    for t in attempts:
        a = course.assignments.get(t.assignment)
        if a is not None:
            by.setdefault((a.name, _owner(a, teams, t)), []).append(t)
    students = sorted(set(course.students) | {s for (_, (kind, s)) in by if kind == "student"}
                      | {s for a in course.assignments.values() if a.teams
                         for s in teams.students(a.name)})
    pools = dict.fromkeys(students, course.late_days)
    out: list[Grade] = []
    for a in course.ordered():
        done: set[str] = set()
        for student in students:
            if student in done:
                continue
            owner = teams.graded_as(a.name, student) if a.teams else ("student", student)
            members = teams.members(a.name, owner[1]) if owner[0] == "team" else (student,)
            together = a.teams is not None and a.teams.charge == "poorest_member"
            group = members if together else (student,)
            due = min(course.deadline(m, a.name) for m in group)
            g, used = _grade_one(course, a, student, by.get((a.name, owner), []),
                                 min(pools[m] for m in group), due,
                                 (max_points or {}).get(a.name), counted)
            for m in group:
                pools[m] -= used
                out.append(_member(replace(g, student=m, team=owner[1]
                                           if owner[0] == "team" else ""), a, counted,
                                   (max_points or {}).get(a.name)))
            done.update(group)
    order = {a.name: i for i, a in enumerate(course.ordered())}
    return sorted(out, key=lambda g: (g.student, order[g.assignment]))


def _owner(a: Assignment, teams: Teams, t: Attempt) -> Owner:
    return teams.owner(a.name, t.student, t.submitted_at) if a.teams else ("student", t.student)


def _grade_one(course: Course, a: Assignment, student: str, attempts: Sequence[Attempt],
               pool: int, due: datetime, package_max: float | None,
               changes: Sequence[GradeChange]) -> tuple[Grade, int]:
    """(grade, grace days taken) of one student (or team, as one) for one assignment,
    lateness counted from ``due``."""
    if not attempts:
        return Grade(student, a.name, "missing", raw=0.0, final=0.0,
                     points=0.0 if (a.points or package_max) else None), 0
    t = counting(course, a, attempts)
    if t is None:
        return Grade(student, a.name, "too late", raw=0.0, final=0.0,
                     points=0.0 if (a.points or package_max) else None), 0
    late = max(t.submitted_at - due, timedelta(0))
    need = math.ceil(late / DAY)
    cap = need if a.late_days is None else min(need, a.late_days)
    used = max(0, min(cap, pool))
    pct = penalty(late - used * DAY, a.late)
    if t.score is None:
        return Grade(student, a.name, "pending", t.spool_id, t.submitted_at, late, used,
                     pct), used
    raw, made = adjusted(t.score, t.spool_id, changes)
    final = raw * (1 - pct / 100)
    scale = a.points or package_max
    return Grade(student, a.name, "final", t.spool_id, t.submitted_at, late, used, pct,
                 raw, final, final * scale if scale else None,
                 changes=tuple(c.note() for c in made)), used


def _member(g: Grade, a: Assignment, changes: Sequence[GradeChange],
            package_max: float | None) -> Grade:
    """A member's grade with their own override, where staff made one."""
    ov = override(a.name, g.student, changes)
    if ov is None or ov.out_of <= 0:
        return g
    final = min(1.0, max(0.0, ov.after / ov.out_of))
    scale = a.points or package_max
    return replace(g, status="final", final=final, points=final * scale if scale else None,
                   changes=(*g.changes, ov.note()))
