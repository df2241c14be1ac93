"""One student's question on the grading page, as a value: the rubric's question, where
the student stands in the grader's queue (previous, next), the counting submission's
files and the autograder's result beside them, the grade so far with its comments, and
its history (every change is an audit row). Built by ``views.grading``, rendered by
``adapters.web.grading_page``. Pure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from grader.course.gradingview import FormProblem, Named, Viewer, counted, mine_of, queue
from grader.course.handgrades import LineComment, QuestionGrade, points_of
from grader.course.load import Course
from grader.course.masking import masked_files
from grader.course.policy import Grade
from grader.course.rubric import QuestionSpec, Rubric, is_pseudonym
from grader.course.shown import Shown
from grader.course.staffview import FileText, ResultView, SubmissionDetail


@dataclass(frozen=True, slots=True)
class ItemView(Shown):
    """A rubric item as graders see it (with its note and key)."""

    id: str
    title: str
    points: float
    key: str | None
    note: str
    explanation: str


@dataclass(frozen=True, slots=True)
class QuestionView(Shown):
    """A question of the rubric: its points, clamps, whether one item or any apply."""

    id: str
    title: str
    points: float
    start: float
    min: float
    max: float
    select: str
    items: tuple[ItemView, ...]


@dataclass(frozen=True, slots=True)
class QuestionRef(Shown):
    id: str
    title: str


@dataclass(frozen=True, slots=True)
class AuditEntry(Shown):
    """A change to a grade (or a save refused as a conflict: what it would have saved)."""

    at: str  # ISO
    grader: str
    action: str  # grade | conflict
    version: int | None
    items: tuple[str, ...]
    adjustment: float
    reason: str
    comment: str = ""


@dataclass(frozen=True, slots=True)
class GradingPage(Shown):
    """One student's question to grade (see the module docstring). ``key`` and ``label``
    name the student as this viewer may see them (``gradingview.Named``)."""

    assignment: str
    question: QuestionView
    questions: tuple[QuestionRef, ...]
    key: str
    label: str
    names_shown: bool
    position: int  # in the viewer's queue, from 1
    of: int
    mine: bool  # the queue is the viewer's own (else every student's)
    prev_key: str | None
    next_key: str | None
    submission: str | None
    submitted_at: str | None
    stale: bool  # the grade was given to another submission than the counting one
    files: tuple[FileText, ...]
    autograder: ResultView | None
    grade: QuestionGrade | None
    points: float | None
    others: tuple[LineComment, ...]  # comments of the student's other questions
    history: tuple[AuditEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class Saved:
    """What a save came to: ``saved`` (and ``next_key``, where the grader asked to go
    on), a ``conflict`` (another grader saved first: ``page`` holds theirs), or
    ``refused`` (``problem`` names the field). ``page``: the question as stored now."""

    outcome: str  # saved | conflict | refused
    page: GradingPage
    next_key: str | None = None
    problem: FormProblem | None = None


def question_view(q: QuestionSpec) -> QuestionView:
    return QuestionView(q.id, q.title, q.points, q.start, q.min, q.ceiling, q.select,
                        tuple(ItemView(i.id, i.title, i.points, i.key, i.note, i.explanation)
                              for i in q.items))


def neighbours(course: Course, assignment: str, q: QuestionSpec, viewer: Viewer,
               grades: Sequence[Grade], student: str
               ) -> tuple[bool, list[str], int]:
    """(whether the queue is the viewer's own, the queue, the student's place in it:
    -1 when they are not in it)."""
    rows = queue(course, assignment, q, sorted(counted(grades, assignment)))
    is_mine, mine = mine_of(q, rows, viewer)
    if student not in mine:  # another grader's student: walk every student's queue
        is_mine, mine = False, [s for s, _ in rows]
    return is_mine, mine, mine.index(student) if student in mine else -1


def grading_page(course: Course, assignment: str, rubric: Rubric, q: QuestionSpec,
                 viewer: Viewer, student: str, named: Callable[[str], Named],
                 grades: Sequence[Grade], hand: Sequence[QuestionGrade],
                 detail: SubmissionDetail | None, history: Sequence[AuditEntry] = ()
                 ) -> GradingPage:
    """The page of ``student``'s question ``q`` (see ``GradingPage``)."""
    is_mine, order, at = neighbours(course, assignment, q, viewer, grades, student)
    mine = {g.question: g for g in hand if g.student == student}
    g = mine.get(q.id)
    current = [r for r in detail.results if r.superseded is None] if detail else []
    auto = next((r for r in current if r.phase == "full"), current[0] if current else None)
    counting = counted(grades, assignment).get(student)
    n = named(student)
    return GradingPage(
        assignment, question_view(q), tuple(QuestionRef(x.id, x.title)
                                            for x in rubric.questions),
        n.key, n.label, n.key != n.label, at + 1, len(order), is_mine,
        named(order[at - 1]).key if at > 0 else None,
        named(order[at + 1]).key if 0 <= at < len(order) - 1 else None,
        counting, detail.submitted_at if detail else None,
        g is not None and g.spool_id is not None and g.spool_id != counting,
        (masked_files(detail.files, course.students, student, n.key)
         if detail and is_pseudonym(n.label) else detail.files if detail else ()), auto,
        replace(g, student=n.key) if g else None,  # the page names them by its key only
        points_of(q, g) if g else None,
        tuple(c for qid, other in mine.items() if qid != q.id for c in other.comments),
        tuple(history))
