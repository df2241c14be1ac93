"""Grades given by hand under an assignment's rubric (``course.rubric``): what the store
keeps of them, what they add up to, how they join the autograder's score in the final
grade, and the exports made of them (the evaluation CSV, the graders' statistics, the
LMS's comment).

A grade keeps the ids of the items applied, never their points: the points are the
rubric's as it is now, so editing an item recomputes every grade that used it, at the
next reading of the grades (sheets, pages, the LMS). Pure: stored grades and the
rubric in, values out.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from grader.course.grade_changes import GradeChange, hand_adjusted, latest, override
from grader.course.load import Assignment, Course
from grader.course.policy import Grade
from grader.course.rubric import QuestionSpec, Rubric, question_points
from grader.course.shown import (
    HandGradeView,
    Shown,
    ShownComment,
    ShownQuestion,
    ShownRubricItem,
)

SUMMARY_CHARS = 500  # of the comment that goes to the LMS with the score
EXCERPT_LINES = 12  # of the lines a comment is at, shown to the student with it


@dataclass(frozen=True, slots=True)
class LineComment(Shown):
    """A grader's comment on lines ``first`` to ``last`` (1-based) of a file of the
    submission, optionally tied to a rubric item (whose points it then carries)."""

    id: int
    file: str
    first: int
    last: int
    text: str
    item: str | None = None
    grader: str = ""
    made_at: str = ""  # ISO


@dataclass(frozen=True, slots=True)
class QuestionGrade(Shown):
    """One student's grade for one question, as stored: which submission it graded, the
    items applied, the adjustment and why, who and when, its version (what a save must
    name: optimistic locking) and its comments."""

    student: str
    question: str
    spool_id: str | None
    items: tuple[str, ...]
    adjustment: float
    reason: str
    grader: str
    version: int
    graded_at: str  # ISO
    comments: tuple[LineComment, ...] = ()


@dataclass(frozen=True, slots=True)
class HandTotal:
    """A student's hand-grade of an assignment: points out of ``maximum``, and how many
    of its questions are graded."""

    points: float
    maximum: float
    graded: int
    questions: int

    @property
    def complete(self) -> bool:
        return self.graded == self.questions


def by_student(grades: Iterable[QuestionGrade]) -> dict[str, dict[str, QuestionGrade]]:
    """student -> question -> grade."""
    out: dict[str, dict[str, QuestionGrade]] = {}
    for g in grades:
        out.setdefault(g.student, {})[g.question] = g
    return out


def by_submission(grades: Iterable[QuestionGrade]) -> dict[str, dict[str, QuestionGrade]]:
    """submission -> question -> grade (of the submission graded)."""
    out: dict[str, dict[str, QuestionGrade]] = {}
    for g in grades:
        if g.spool_id:
            out.setdefault(g.spool_id, {})[g.question] = g
    return out


def points_of(q: QuestionSpec, g: QuestionGrade) -> float:
    return question_points(q, g.items, g.adjustment)


def hand_total(rubric: Rubric, mine: Mapping[str, QuestionGrade]) -> HandTotal:
    """One student's total over the rubric's questions (grades of questions the rubric
    no longer has count nothing)."""
    graded = [(q, mine[q.id]) for q in rubric.questions if q.id in mine]
    return HandTotal(round(sum(points_of(q, g) for q, g in graded), 6), rubric.max_points,
                     len(graded), len(rubric.questions))


def auto_possible(a: Assignment, package_max: float | None) -> float:
    """What the autograder's score is out of on its own (the assignment's points, else
    its package's maximum)."""
    return float(a.points or package_max or 100.0)


def auto_share(a: Assignment, package_max: float | None) -> float:
    """The points the autograder's score is scaled to in the final grade: all of its own
    (``combine: add``) or what the hand-grade leaves of them (``replace``)."""
    whole = auto_possible(a, package_max)
    if a.rubric is None or a.rubric.spec.combine == "add":
        return whole
    return max(whole - a.rubric.max_points, 0.0)


def possible(a: Assignment, package_max: float | None) -> float:
    """What the assignment's final grade is out of: the autograder's and the hand-grade's."""
    if a.rubric is None:
        return float(a.points or package_max or 100.0)
    return auto_share(a, package_max) + a.rubric.max_points


def with_hand_grades(course: Course, grades: Sequence[Grade],
                     hand: Mapping[str, Sequence[QuestionGrade]],
                     max_points: Mapping[str, float],
                     changes: Sequence[GradeChange] = ()) -> list[Grade]:
    """The policy's grades (``policy.grade_course``) with each rubric assignment's
    hand-grade joined in: a final grade whose hand-grade is not complete is pending
    (an empty cell, never a zero); a complete one is ``(autograder fraction x its share
    + hand points) / possible``, the late penalty applied to the whole. ``changes``
    (``course.grade_changes``, all of them) come last as in the policy: a rubric
    question's points adjusted on the submission, then a member's own override."""
    counted = latest(changes)
    totals = {name: {s: hand_total(a.rubric, mine)
                     for s, mine in by_student(hand.get(name, ())).items()}
              for name, a in course.assignments.items() if a.rubric is not None}
    # team work is graded once: a member who did not hand it in gets its hand-grade
    shared = {name: {sid: hand_total(a.rubric, mine)
                     for sid, mine in by_submission(hand.get(name, ())).items()}
              for name, a in course.assignments.items() if a.rubric is not None}
    out = []
    for g in grades:
        a = course.assignments.get(g.assignment)
        if a is None or a.rubric is None:
            out.append(g)
            continue
        most = possible(a, max_points.get(a.name))
        if g.status != "final" or g.raw is None:  # missing, too late, pending: as it is
            out.append(g)
            continue
        total = totals[a.name].get(g.student) or \
            (shared[a.name].get(g.spool_id) if g.team and g.spool_id else None)
        if total is None or not total.complete:
            out.append(replace(g, status="pending", raw=None, final=None, points=None))
            continue
        gained, made = hand_adjusted(g.spool_id or "", counted)
        raw = min(max(g.raw * auto_share(a, max_points.get(a.name)) + total.points + gained,
                      0.0) / most, 1.0)
        final = raw * (1 - g.penalty_pct / 100)
        ov = override(a.name, g.student, counted)
        if ov is not None and ov.out_of > 0:  # the member's own, as policy._member
            final = min(1.0, max(0.0, ov.after / ov.out_of))
        out.append(replace(g, raw=raw, final=final, points=final * most,
                           changes=(*g.changes, *(c.note() for c in made))))
    return out


def summary(rubric: Rubric, mine: Mapping[str, QuestionGrade]) -> str:
    """The hand-grade in a line or two of plain text (what goes to the LMS as the
    score's comment): each question's points and the items applied."""
    total = hand_total(rubric, mine)
    parts = [f"Graded by hand: {total.points:g} of {total.maximum:g}."]
    for q in rubric.questions:
        g = mine.get(q.id)
        if g is None:
            continue
        items = [i for i in q.items if i.id in g.items]
        said = "; ".join(f"{i.points:+g} {i.title}" for i in items)
        adj = f"; adjusted {g.adjustment:+g}" + (f" ({g.reason})" if g.reason else "") \
            if g.adjustment else ""
        parts.append(f"{q.title} {points_of(q, g):g}/{q.points:g}"
                     + (f": {said}" if said else "") + adj + ".")
    text = " ".join(parts)
    return text if len(text) <= SUMMARY_CHARS else text[:SUMMARY_CHARS - 1] + "…"


def evaluation_csv(rubric: Rubric, rows: Sequence[tuple[str, str, Mapping[str,
                                                                          QuestionGrade]]]
                   ) -> str:
    """The evaluations export (Gradescope's "Export Evaluations", one file for all
    questions): a row per student (``who``: their id, or their pseudonym where names are
    hidden) with the submission graded, the hand-grade, and per question its points,
    one TRUE/FALSE column per rubric item (headed by the item's id), the adjustment,
    its reason, the comments and the grader.

    :param rows: (who, submission, question -> grade) per student.
    """
    head = ["student", "submission", "hand_points", "hand_max", "questions_graded"]
    for q in rubric.questions:
        head += [q.id, *(i.id for i in q.items), f"{q.id}:adjustment", f"{q.id}:reason",
                 f"{q.id}:comments", f"{q.id}:grader"]
    out = [head]
    for who, submission, mine in rows:
        total = hand_total(rubric, mine)
        row = [who, submission, f"{total.points:g}", f"{total.maximum:g}", str(total.graded)]
        for q in rubric.questions:
            g = mine.get(q.id)
            if g is None:
                row += [""] * (len(q.items) + 5)
                continue
            row += [f"{points_of(q, g):g}", *("TRUE" if i.id in g.items else "FALSE"
                                              for i in q.items),
                    f"{g.adjustment:g}", g.reason,
                    " | ".join(f"{c.file}:{c.first}-{c.last}: {c.text}" for c in g.comments),
                    g.grader]
        out.append(row)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(out)
    return buf.getvalue()


@dataclass(frozen=True, slots=True)
class ItemRate(Shown):
    """How often a grader applied an item, and the points that gave per grade on average."""

    item: str
    title: str
    share: float  # of the grades they gave for the question
    mean_points: float


@dataclass(frozen=True, slots=True)
class GraderStats(Shown):
    """One grader's grades of one question: how many, their mean, and each item's rate
    (for calibrating graders against each other)."""

    grader: str
    question: str
    graded: int
    mean_points: float
    mean_adjustment: float
    items: tuple[ItemRate, ...]


def grader_stats(rubric: Rubric, grades: Iterable[QuestionGrade]) -> list[GraderStats]:
    """Per question, per grader: count, mean points, mean adjustment and item rates."""
    by: dict[tuple[str, str], list[QuestionGrade]] = {}
    for g in grades:
        by.setdefault((g.question, g.grader), []).append(g)
    out = []
    for q in rubric.questions:
        for (qid, grader), mine in sorted(by.items()):
            if qid != q.id:
                continue
            n = len(mine)
            rates = tuple(ItemRate(i.id, i.title, round(sum(i.id in g.items for g in mine) / n,
                                                        4),
                                   round(sum(i.points for g in mine if i.id in g.items) / n, 4))
                          for i in q.items)
            out.append(GraderStats(grader, q.id, n,
                                   round(sum(points_of(q, g) for g in mine) / n, 4),
                                   round(sum(g.adjustment for g in mine) / n, 4), rates))
    return out


def shown_hand(rubric: Rubric, mine: Mapping[str, QuestionGrade],
               files: Mapping[str, Sequence[str]]) -> HandGradeView:
    """What a student sees of their hand-grade (once released: the caller's gate): per
    question graded, the items applied and those always shown, the adjustment and its
    reason, and each comment with the lines it is at (``files``: the graded
    submission's lines per file). Graders' names and notes are never shown."""
    total = hand_total(rubric, mine)
    questions = []
    for q in rubric.questions:
        g = mine.get(q.id)
        if g is None:
            continue
        items = tuple(ShownRubricItem(i.id, i.title, i.points, i.explanation, i.id in g.items)
                      for i in q.items if i.id in g.items or i.always_show)
        comments = []
        for c in g.comments:
            item = rubric.item(c.item) if c.item else None
            lines = tuple(files.get(c.file, ())[c.first - 1:c.last][:EXCERPT_LINES])
            comments.append(ShownComment(c.file, c.first, c.last, c.text, lines,
                                         item.title if item else "",
                                         item.points if item else None))
        questions.append(ShownQuestion(q.id, q.title, points_of(q, g), q.points, items,
                                       g.adjustment, g.reason, tuple(comments)))
    return HandGradeView(total.points, total.maximum, total.complete, tuple(questions))


def iso(t: datetime | None) -> str:
    return t.isoformat(timespec="seconds") if t else ""
