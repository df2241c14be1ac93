"""What the grading pages show (staff grading by hand, ``course.rubric``): per question
of an assignment, each grader's queue and the course's progress; one student's
question with the counting submission's files, the autograder's result, the rubric and
the grade so far; and the form a grader sends back, checked.

Who is named how is decided here: in an anonymous assignment whose names no
instructor revealed, a student is their pseudonym on every grading page (for
instructors too, until they reveal), and on the other staff pages for graders who
are not instructors (``views.anonymity`` masks those). Pure: values in, values out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from grader.core.errors import RefusedError
from grader.course.handgrades import (
    GraderStats,
    LineComment,
    QuestionGrade,
    by_student,
    grader_stats,
    points_of,
)
from grader.course.load import Course
from grader.course.policy import Grade
from grader.course.rubric import QuestionSpec, Rubric, grader_of, queue_order
from grader.course.shown import Shown

MAX_REASON = 500
MAX_COMMENT = 2000
MAX_ADJUSTMENT = 1000.0


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who looks at a grading page: their account (or LMS user), and whether they are
    an instructor (who may reveal names)."""

    user: str
    instructor: bool


def is_instructor(course: Course, user: str, owner: bool) -> bool:
    """The account running gradeline, or one the course file names as instructor."""
    return owner or user in course.staff.instructors


@dataclass(frozen=True, slots=True)
class Named:
    """A student as one grading page names them: ``key`` (their pseudonym: the pages'
    URLs use it whether or not names are shown) and ``label`` (the pseudonym, or the
    id and name where names are shown)."""

    key: str
    label: str


@dataclass(frozen=True, slots=True)
class QueueRow(Shown):
    """A student's question in a queue: who is assigned, who graded it and its points."""

    key: str
    label: str
    assigned: str | None
    graded_by: str | None
    points: float | None


@dataclass(frozen=True, slots=True)
class GraderLoad(Shown):
    """A grader's share of a question: assigned and graded."""

    grader: str
    assigned: int
    graded: int


@dataclass(frozen=True, slots=True)
class QuestionQueue(Shown):
    """A question's progress for the course and the viewer's queue (``mine``: the
    viewer is one of its graders; else every student)."""

    id: str
    title: str
    points: float
    total: int
    graded: int
    mine: bool
    queue: tuple[QueueRow, ...]
    graders: tuple[GraderLoad, ...]


@dataclass(frozen=True, slots=True)
class GradingIndex(Shown):
    """An assignment's grading page: the questions' queues and progress, the graders'
    statistics, and whether names are shown."""

    assignment: str
    anonymous: bool
    names_shown: bool
    can_reveal: bool
    questions: tuple[QuestionQueue, ...]
    stats: tuple[GraderStats, ...]


def labeller(course: Course, names_shown: bool, key: Callable[[str], str]
             ) -> Callable[[str], Named]:
    """How a page names a student (``key``: their pseudonym for this assignment)."""
    def named(student: str) -> Named:
        if not names_shown:
            return Named(key(student), key(student))
        s = course.students.get(student)
        return Named(key(student), f"{student} ({s.name})" if s and s.name else student)
    return named


def counted(grades: Sequence[Grade], assignment: str) -> dict[str, str]:
    """student -> their counting submission, for the students who have one."""
    return {g.student: g.spool_id for g in grades
            if g.assignment == assignment and g.spool_id is not None}


def queue(course: Course, assignment: str, q: QuestionSpec, students: Sequence[str]
          ) -> list[tuple[str, str | None]]:
    """(student, assigned grader) in the question's stable pseudo-random order."""
    section = {s: (course.students[s].section if s in course.students else "")
               for s in students}
    order = sorted(students, key=lambda s: (queue_order(assignment, q.id, s), s))
    return [(s, grader_of(q, assignment, s, section[s])) for s in order]


def mine_of(q: QuestionSpec, rows: Sequence[tuple[str, str | None]], viewer: Viewer
            ) -> tuple[bool, list[str]]:
    """(whether the viewer grades this question, the students of their queue: theirs,
    or every one for a viewer who is none of its graders)."""
    mine = [s for s, g in rows if g == viewer.user]
    return (True, mine) if mine else (False, [s for s, _ in rows])


def grading_index(course: Course, assignment: str, rubric: Rubric, viewer: Viewer,
                  grades: Sequence[Grade], hand: Sequence[QuestionGrade],
                  named: Callable[[str], Named], names_shown: bool) -> GradingIndex:
    """The grading index of an assignment (see ``GradingIndex``)."""
    students = sorted(counted(grades, assignment))
    done = by_student(hand)
    out = []
    for q in rubric.questions:
        rows = queue(course, assignment, q, students)
        is_mine, mine = mine_of(q, rows, viewer)
        assigned = dict(rows)
        shown = []
        for s in mine:
            g = done.get(s, {}).get(q.id)
            n = named(s)
            shown.append(QueueRow(n.key, n.label, assigned[s], g.grader if g else None,
                                  points_of(q, g) if g else None))
        loads: dict[str, tuple[int, int]] = {}
        for s, who in rows:
            if who is not None:
                a, d = loads.get(who, (0, 0))
                loads[who] = (a + 1, d + (q.id in done.get(s, {})))
        out.append(QuestionQueue(
            q.id, q.title, q.points, len(rows), sum(q.id in done.get(s, {}) for s in students),
            is_mine, tuple(shown),
            tuple(GraderLoad(g, a, d) for g, (a, d) in sorted(loads.items()))))
    anonymous = rubric.spec.anonymous
    return GradingIndex(assignment, anonymous, names_shown,
                        viewer.instructor and anonymous and not names_shown, tuple(out),
                        tuple(grader_stats(rubric, [g for g in hand if g.student in
                                                    set(students)])))


@dataclass(frozen=True, slots=True)
class NewComment:
    """A comment the form adds."""

    file: str
    first: int
    last: int
    text: str
    item: str | None


@dataclass(frozen=True, slots=True)
class GradeForm:
    """What a grader sent for one question: the version they saw, the items, the
    adjustment and reason, a comment to add, comments to delete, and where to go next."""

    version: int
    items: tuple[str, ...] = ()
    adjustment: float = 0.0
    reason: str = ""
    comment: NewComment | None = None
    delete: tuple[int, ...] = ()
    then: str = "stay"  # stay | next


class FormProblem(RefusedError):
    """A field of the grading form that cannot be taken (``field``: its name)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


def _one(fields: Mapping[str, Sequence[str]], name: str) -> str:
    values = fields.get(name) or [""]
    return values[-1].strip()


def _int(fields: Mapping[str, Sequence[str]], name: str, low: int, high: int) -> int:
    text = _one(fields, name)
    if not text.isdecimal() or not text.isascii() or not low <= int(text) <= high:
        raise FormProblem(name, f"a whole number from {low} to {high}, not {text!r}")
    return int(text)


def read_form(fields: Mapping[str, Sequence[str]], q: QuestionSpec,
              files: Mapping[str, int]) -> GradeForm:
    """The grading form checked against the question and the submission's files
    (``files``: name -> how many lines).

    :raises FormProblem: naming the field and what is wrong with it.
    """
    version = _int(fields, "version", 0, 2 ** 31 - 1)
    known = {i.id for i in q.items}
    items = tuple(dict.fromkeys(v for v in fields.get("item", ()) if v))
    if bad := [i for i in items if i not in known]:
        raise FormProblem("item", f"{', '.join(bad)} is no item of {q.id}")
    if q.select == "one" and len(items) > 1:
        raise FormProblem("item", f"{q.id} takes one item at most, not {len(items)}")
    text = _one(fields, "adjustment") or "0"
    try:
        adjustment = float(text)
    except ValueError:
        raise FormProblem("adjustment", f"a number of points, not {text!r}") from None
    if not math.isfinite(adjustment) or abs(adjustment) > MAX_ADJUSTMENT:
        raise FormProblem("adjustment", f"at most {MAX_ADJUSTMENT:g} points either way")
    reason = _one(fields, "reason")
    if adjustment and not reason:
        raise FormProblem("reason", "say why the points are adjusted (the student reads it)")
    if len(reason) > MAX_REASON:
        raise FormProblem("reason", f"at most {MAX_REASON} characters")
    delete = tuple(int(v) for v in fields.get("delete", ()) if v.isdecimal() and v.isascii())
    then = "next" if _one(fields, "then") == "next" else "stay"
    return GradeForm(version, items, adjustment, reason if adjustment else "",
                     _comment(fields, q, files), delete, then)


def _comment(fields: Mapping[str, Sequence[str]], q: QuestionSpec,
             files: Mapping[str, int]) -> NewComment | None:
    text = _one(fields, "comment")
    if not text:
        return None
    if len(text) > MAX_COMMENT:
        raise FormProblem("comment", f"at most {MAX_COMMENT} characters")
    file = _one(fields, "file")
    if file not in files:
        raise FormProblem("file", f"{file!r} is no file of this submission"
                          + (f" (it has {', '.join(sorted(files))})" if files else ""))
    lines = max(files[file], 1)
    first = _int(fields, "first", 1, lines)
    last = _int(fields, "last", 1, lines) if _one(fields, "last") else first
    if last < first:
        raise FormProblem("last", f"line {last} is before line {first}")
    item = _one(fields, "comment_item") or None
    if item is not None and item not in {i.id for i in q.items}:
        raise FormProblem("comment_item", f"{item} is no item of {q.id}")
    return NewComment(file, first, last, text, item)


def applied(form: GradeForm, q: QuestionSpec) -> tuple[str, ...]:
    """The items a save applies: the form's, and a new comment's item (a comment tied
    to an item applies it; in a select-one question it replaces the other)."""
    items = form.items
    if form.comment is not None and form.comment.item and form.comment.item not in items:
        items = (form.comment.item,) if q.select == "one" else (*items, form.comment.item)
    return items


def comment_lines(c: LineComment | NewComment) -> str:
    return f"{c.file}:{c.first}" + (f"-{c.last}" if c.last != c.first else "")
