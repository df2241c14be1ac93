"""Which grades go to a course's LMS gradebook, in one place: for whom, how much, and
whether now.

* For whom: the students the LMS is known to call something -- the roster's
  ``lms_id``, else the user id of their own launch; nobody else's grade leaves.
* How much: the course's own grade (``policy``), late policy applied, out of the
  assignment's points, at the moment the course file allows (``lms: grades:
  released`` -- only once staff released the assignment -- or ``visible``: the hand-in
  phase's score too, as pending, until then); a student with nothing handed in, none.
* Whether now: a grade goes when it differs from what the LMS took last; a post that
  failed waits before its next try, longer after each failure (``BACKOFF_S``).

Pure: the LTI adapter asks the store and the LMS, posts what this returns and keeps
the journal of what the LMS took (``adapters.web.lti``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from grader.course.grade_changes import GradeChange
from grader.course.load import Course
from grader.course.policy import Attempt, Grade, grade_course
from grader.course.teams import Teams

BACKOFF_S = (30.0, 60.0, 300.0, 900.0, 3600.0)  # after 1, 2, 3, ... failed posts


@dataclass(frozen=True, slots=True)
class LmsScore:
    """One gradebook entry as LTI's Assignment and Grade Services take it."""

    assignment: str
    student: str
    given: float
    maximum: float
    grading: str  # FullyGraded | Pending (the AGS gradingProgress)
    activity: str  # Completed | Submitted (the AGS activityProgress)
    submitted_at: datetime | None  # the counting hand-in: Canvas dates lateness by it


@dataclass(frozen=True, slots=True)
class Posting:
    """One gradebook entry to post to one LMS course: whose (the LMS's user id), what,
    and when handed in."""

    context: str  # the LMS course (the LTI state's key of it)
    assignment: str
    lms_user: str
    given: float
    maximum: float
    grading: str
    activity: str
    submitted_at: datetime | None

    @property
    def key(self) -> str:
        """What the journal knows this entry by."""
        return f"{self.context}|{self.assignment}|{self.lms_user}"

    @property
    def value(self) -> dict[str, float | str]:
        """What the LMS must hold for it (what the journal compares)."""
        return {"given": self.given, "maximum": self.maximum, "grading": self.grading}


def lms_scores(course: Course, grades: Iterable[Grade], attempts: Iterable[Attempt],
               released: Mapping[str, datetime | None],
               max_points: Mapping[str, float]) -> list[LmsScore]:
    """The entries to be in the LMS now (students with nothing handed in: none)."""
    visible = {a.spool_id: a.visible_score for a in attempts}  # a team's: every member's
    out = []
    for g in grades:
        if g.assignment not in course.assignments or g.spool_id is None:
            continue
        points = course.assignments[g.assignment].points or max_points.get(g.assignment, 0.0)
        if released.get(g.assignment) is not None and g.status == "final" \
                and g.final is not None:
            out.append(LmsScore(g.assignment, g.student, round(g.final * points, 4), points,
                                "FullyGraded", "Completed", g.submitted_at))
        elif course.lms.grades == "visible":
            frac = visible.get(g.spool_id)
            if frac is not None:
                out.append(LmsScore(g.assignment, g.student, round(frac * points, 4), points,
                                    "Pending", "Submitted", g.submitted_at))
    return out


def lms_postings(course: Course, context: str, attempts: list[Attempt],
                 released: Mapping[str, datetime | None], max_points: Mapping[str, float],
                 launched: Mapping[str, str], *, teams: Teams | None = None,
                 changes: Sequence[GradeChange] = ()) -> list[Posting]:
    """What the LMS course ``context`` should hold now, for the students whose LMS user
    id is known: the roster's ``lms_id``, else ``launched`` (student -> the user id of
    their launch from that course). A team's grade goes to each member, one score
    each; grades changed by hand (``changes``) go as changed."""
    users = {**{s.id: s.lms_id for s in course.students.values() if s.lms_id}, **launched}
    grades = grade_course(course, attempts, dict(max_points), teams=teams, changes=changes)
    return [Posting(context, s.assignment, users[s.student], s.given, s.maximum, s.grading,
                    s.activity, s.submitted_at)
            for s in lms_scores(course, grades, attempts, released, max_points)
            if s.student in users]


def due(p: Posting, journal: Mapping[str, object], now: float
        ) -> Literal["post", "unchanged", "waiting"]:
    """Whether ``p`` goes now, by its journal entry (``posted``: what the LMS took last;
    ``retry_at``: when a failed post may be tried again)."""
    if journal.get("posted") == p.value:
        return "unchanged"
    retry = journal.get("retry_at", 0.0)
    if isinstance(retry, int | float) and retry > now:
        return "waiting"
    return "post"


def retry_at(failures: int, now: float) -> float:
    """When to try again after the ``failures``-th post in a row failed."""
    return now + BACKOFF_S[min(failures, len(BACKOFF_S)) - 1]
