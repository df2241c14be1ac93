"""What a course posts to its LMS's gradebook for each student and assignment: the
course's own grade, late policy applied, at the moment the course file allows
(``lms: grades: released`` -- only once staff released the assignment -- or
``visible``: the hand-in phase's score too, as pending, until then). Pure: the LTI
adapter posts what this returns and remembers what it posted."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from grader.course.load import Course
from grader.course.policy import Attempt, Grade


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


def lms_scores(course: Course, grades: Iterable[Grade], attempts: Iterable[Attempt],
               released: Mapping[str, datetime | None],
               max_points: Mapping[str, float]) -> list[LmsScore]:
    """The entries to be in the LMS now (students with nothing handed in: none)."""
    visible = {(a.student, a.assignment, a.spool_id): a.visible_score for a in attempts}
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
            frac = visible.get((g.student, g.assignment, g.spool_id))
            if frac is not None:
                out.append(LmsScore(g.assignment, g.student, round(frac * points, 4), points,
                                    "Pending", "Submitted", g.submitted_at))
    return out
