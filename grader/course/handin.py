"""One rule for every hand-in door -- the desk (and the LTI and OnDemand pages through
it), a drop directory, an LMS's download, staff's ``gradeline submit``: whether a
hand-in is taken, deferred or refused, and why, in the same words whichever door it
came through, so that no door is a way around another's refusal.

A hand-in is refused when its assignment is unknown, its student id could not name a
spool entry safely, the student is not on the course's roster, it comes after the
student's deadline plus the late policy's ``max_late``, or it is past a hand-in limit
that the course refuses (``course.handin_limits``; a limit that defers takes it, graded last).
Team work (``course.teams``) is handed in by a team: the limits count the team's
hand-ins together (``earlier``: every member's for the team), and a student in no team,
or in one under its least size, hands nothing in where the assignment needs a team.
Staff may take a refused hand-in anyway with a reason (``override``), which travels with
it: nothing is refused silently and nothing is overridden without a record. An unknown
assignment or an unsafe student id is never taken, whoever asks.

A request for a performance measurement on demand (``course.ondemand``) passes the
same door (``admit_measurement``): the assignment, the id and the roster as a hand-in,
then the measurement's own rule.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from grader.core.errors import RefusedError
from grader.core.verdict import Verdict
from grader.course.handin_limits import allowance, span
from grader.course.load import Assignment, Course
from grader.course.ondemand import Measured, used
from grader.course.studentview import Submitted
from grader.course.teams import Teams, handin_refusal

#: what a student id may look like: it names spool entries and rows, so no path
#: separators, no leading dot, no spaces (login names, LMS and SIS ids all fit)
STUDENT_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,99}$")


@dataclass(frozen=True, slots=True)
class Admission:
    """A hand-in taken: by whom, for what, when, and under which rule.

    :param deadline: the student's own deadline (extensions applied).
    :param deferred: taken past a limit that defers (graded after every other waiting
        one); ``limit`` says which.
    :param left: hand-ins of the assignment left after this one (None: no such limit).
    :param override: staff's reason for taking it past ``refused`` ("" when none was
        needed).
    """

    student: str
    assignment: str
    at: datetime
    deadline: datetime
    deferred: bool = False
    limit: str = ""
    left: int | None = None
    override: str = ""
    refused: str = ""
    team: str = ""  # the team it was handed in for ("" alone)

    @property
    def late(self) -> bool:
        return self.at > self.deadline


def check_student_id(student: str) -> None:
    """:raises RefusedError: when ``student`` could not safely name a spool entry."""
    if not STUDENT_ID.match(student):
        raise RefusedError(f"student id {student!r}: use letters, digits and . _ @ + - "
                           "(at most 100, not starting with . + - or @)")


def admit(course: Course, student: str, assignment: str, at: datetime,
          earlier: Sequence[datetime], *, override: str = "", teams: Teams | None = None
          ) -> Admission:
    """Whether ``student``'s hand-in of ``assignment`` at ``at`` is taken, given the
    times of their ``earlier`` hand-ins of it (any order, every door's; of a team
    assignment, the team's).

    :param override: staff's reason to take it even where refused (recorded).
    :param teams: the course's teams (``course.teams``), for team work.
    :raises RefusedError: with every reason that refuses it, in the student's words.
    """
    a, reasons = _door(course, student, assignment)
    if why := handin_refusal(course, teams or Teams(), assignment, student, at):
        reasons.append(why)
    due = course.deadline(student, assignment)
    if a.late.max_late is not None and at > due + a.late.max_late:
        reasons.append(f"{assignment}: hand-ins closed at {(due + a.late.max_late).isoformat()}"
                       f" (your deadline {due.isoformat()} and {span(a.late.max_late)} late)")
    allow = allowance(a.limits, earlier, at)
    if not allow.allowed:
        nxt = f"; your next hand-in is allowed at {allow.next_at.isoformat()}" \
            if allow.next_at else "; no more hand-ins of it are taken"
        reasons.append(f"{assignment}: {allow.why}{nxt}")
    refused = "; ".join(reasons)
    if refused and not override.strip():
        raise RefusedError(refused)
    left = None if allow.left is None else max(0, allow.left - 1)
    return Admission(student, assignment, at, due, allow.deferred, allow.why if allow.deferred
                     else "", left, override.strip() if refused else "", refused,
                     (teams or Teams()).team_at(assignment, student, at) or "")


def _door(course: Course, student: str, assignment: str) -> tuple[Assignment, list[str]]:
    """The assignment, and whether the student is on the roster (every door's first
    check).

    :raises RefusedError: an unknown assignment or an unsafe student id.
    """
    a = course.assignments.get(assignment)
    if a is None:
        raise RefusedError(f"course {course.name} has no assignment {assignment!r} (it has: "
                           f"{', '.join(course.assignments) or 'none'})")
    check_student_id(student)
    reasons = []
    if course.students and student not in course.students:
        reasons.append(f"{student} is not on the roster of course {course.name}")
    return a, reasons


@dataclass(frozen=True, slots=True)
class MeasurementAdmission:
    """A request for a performance measurement taken: of which submission, and the
    tokens used with it."""

    student: str
    assignment: str
    submission: str
    at: datetime
    used: int
    tokens: int


def _latest(submitted: Sequence[Submitted]) -> tuple[Submitted | None, str]:
    """The student's latest submission not refused at intake, and why it cannot be
    measured ("" when it can)."""
    kept = [s for s in submitted if s.state != "quarantined"]
    if not kept:
        return None, "you have handed in nothing to measure yet"
    last = max(kept, key=lambda s: (s.submitted_at, s.spool_id))
    graded = last.visible or last.full
    if last.deferred:
        return last, (f"your latest submission {last.spool_id} was taken past the hand-in "
                      "limit: its feedback, a measurement too, comes after your deadline")
    if graded is None:
        return last, (f"your latest submission {last.spool_id} is not graded yet: ask once "
                      "the visible tests have accepted it")
    if graded.verdict is not Verdict.AC:
        return last, (f"your latest submission {last.spool_id} is not accepted on the "
                      f"visible tests ({graded.verdict.value}): performance is measured for "
                      "correct programs only")
    return last, ""


def admit_measurement(course: Course, student: str, assignment: str, at: datetime,
                      submitted: Sequence[Submitted], requests: Sequence[Measured], *,
                      timed: bool) -> MeasurementAdmission:
    """Whether ``student``'s request at ``at`` for a measurement of their latest
    submission of ``assignment`` is taken, given their ``submitted`` submissions and
    their earlier ``requests`` of it.

    :param timed: the assignment's package has performance tests.
    :raises RefusedError: with every reason that refuses it, in the student's words.
    """
    a, reasons = _door(course, student, assignment)
    if not timed:
        raise RefusedError(f"{assignment} has no performance tests to measure")
    if not a.on_demand:
        raise RefusedError(f"course {course.name} offers no performance measurements on "
                           f"demand for {assignment}")
    due = course.deadline(student, assignment)
    if at > due:
        reasons.append(f"{assignment}: measurements on demand closed at your deadline "
                       f"{due.isoformat()}; after it the performance of the submission that "
                       "counts is measured for everyone")
    waiting = [m for m in requests if m.state == "waiting"]
    if waiting:
        reasons.append(f"{assignment}: your measurement of {waiting[0].spool_id} is still "
                       "waiting; its curve appears on your page when it is done")
    spent = used(requests)
    if spent >= a.on_demand:
        reasons.append(f"{assignment}: you have used {spent} of the {a.on_demand} "
                       "performance measurements on demand")
    last, why = _latest(submitted)
    if why:
        reasons.append(f"{assignment}: {why}")
    if reasons or last is None:
        raise RefusedError("; ".join(reasons))
    return MeasurementAdmission(student, assignment, last.spool_id, at, spent + 1,
                                a.on_demand)
