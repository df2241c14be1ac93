"""Which grades go to a course's LMS gradebook, in one place: for whom, how much, and
whether now.

* For whom: the students the LMS is known to call something -- the roster's
  ``lms_id``, else the user id of their own launch; nobody else's grade leaves.
* How much: the course's own grade (``policy``), late policy applied, out of the
  assignment's points, at the moment the course file allows (``lms: grades:
  released`` -- only once staff released the assignment -- or ``visible``: the hand-in
  phase's score too, as pending, until then); a student with nothing handed in, none.
  An assignment graded by hand (``handgrades``) counts its hand-grade in, and its
  score carries a short summary of it as the AGS ``comment``; until every question of
  the student's is graded it is pending, as before release.
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
from grader.course.handgrades import (
    QuestionGrade,
    auto_share,
    by_student,
    by_submission,
    possible,
    summary,
    with_hand_grades,
)
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
    comment: str = ""  # plain text the LMS shows with the score (the hand-grade's summary)


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
    comment: str = ""

    @property
    def key(self) -> str:
        """What the journal knows this entry by."""
        return f"{self.context}|{self.assignment}|{self.lms_user}"

    @property
    def value(self) -> dict[str, float | str]:
        """What the LMS must hold for it (what the journal compares; the comment only
        where there is one, so entries posted before comments existed stay unchanged)."""
        out: dict[str, float | str] = {"given": self.given, "maximum": self.maximum,
                                       "grading": self.grading}
        return {**out, "comment": self.comment} if self.comment else out


def lms_scores(course: Course, grades: Iterable[Grade], attempts: Iterable[Attempt],
               released: Mapping[str, datetime | None],
               max_points: Mapping[str, float],
               comments: Mapping[tuple[str, str], str] | None = None) -> list[LmsScore]:
    """The entries to be in the LMS now (students with nothing handed in: none).

    :param grades: with the hand-grades joined in (``handgrades.with_hand_grades``).
    :param comments: (student, assignment) -> the summary of their hand-grade.
    """
    visible = {a.spool_id: a.visible_score for a in attempts}  # a team's: every member's
    out = []
    for g in grades:
        if g.assignment not in course.assignments or g.spool_id is None:
            continue
        a = course.assignments[g.assignment]
        points = possible(a, max_points.get(g.assignment, 0.0) or None) \
            if a.rubric is not None else a.points or max_points.get(g.assignment, 0.0)
        if released.get(g.assignment) is not None and g.status == "final" \
                and g.final is not None:
            out.append(LmsScore(g.assignment, g.student, round(g.final * points, 4), points,
                                "FullyGraded", "Completed", g.submitted_at,
                                (comments or {}).get((g.student, g.assignment), "")))
        elif course.lms.grades == "visible":
            frac = visible.get(g.spool_id)
            share = auto_share(a, max_points.get(g.assignment)) if a.rubric else points
            if frac is not None:
                out.append(LmsScore(g.assignment, g.student, round(frac * share, 4), points,
                                    "Pending", "Submitted", g.submitted_at))
    return out


def lms_postings(course: Course, context: str, attempts: list[Attempt],
                 released: Mapping[str, datetime | None], max_points: Mapping[str, float],
                 launched: Mapping[str, str], *, teams: Teams | None = None,
                 changes: Sequence[GradeChange] = (),
                 hand: Mapping[str, list[QuestionGrade]] | None = None) -> list[Posting]:
    """What the LMS course ``context`` should hold now, for the students whose LMS user
    id is known: the roster's ``lms_id``, else ``launched`` (student -> the user id of
    their launch from that course). A team's grade goes to each member, one score
    each; grades changed by hand (``changes``) go as changed; ``hand``: the hand-grades
    per assignment (a team's, with its summary, to each member)."""
    users = {**{s.id: s.lms_id for s in course.students.values() if s.lms_id}, **launched}
    grades = with_hand_grades(course, grade_course(course, attempts, dict(max_points),
                                                   teams=teams, changes=changes),
                              hand or {}, max_points, changes)
    comments = _comments(course, grades, hand or {})
    return [Posting(context, s.assignment, users[s.student], s.given, s.maximum, s.grading,
                    s.activity, s.submitted_at, s.comment)
            for s in lms_scores(course, grades, attempts, released, max_points, comments)
            if s.student in users]


def _comments(course: Course, grades: Sequence[Grade],
              hand: Mapping[str, list[QuestionGrade]]) -> dict[tuple[str, str], str]:
    """(student, assignment) -> the summary of the hand-grade their grade counts (a
    team member's: the team's submission's)."""
    out: dict[tuple[str, str], str] = {}
    for name, a in course.assignments.items():
        if a.rubric is None or not hand.get(name):
            continue
        mine, shared = by_student(hand[name]), by_submission(hand[name])
        for g in grades:
            if g.assignment != name:
                continue
            got = mine.get(g.student) or (shared.get(g.spool_id or "") if g.team else None)
            if got:
                out[(g.student, name)] = summary(a.rubric, got)
    return out


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
