"""Regrade requests: a student's question about one test group of a graded result, or
one question of their released hand-grade (a request names a ``Target``), with a
reason, inside the course file's window; and staff's answer -- ``regraded`` (the package
fixed and ``gradeline regrade`` run: the group's points now), ``adjusted`` (points set by
hand, a ``GradeChange`` every member of the team is graded with) or ``declined`` -- with
a reason. The request and its answer are rows of the audit, never edited.

Pure: whether a request is taken now (``check_request``), what an answer records
(``answer``), and the staff queue's values (``queue_rows``, filtered by assignment,
target, status and age). The desk and the staff pages ask the store and hand over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal

from grader.core.errors import RefusedError
from grader.course.grade_changes import GradeChange, Target
from grader.course.load import Course
from grader.course.shown import (
    HandGradeView,
    RegradeWindow,
    RequestView,
    Shown,
    ShownGroup,
    ShownTest,
    SubmissionView,
)
from grader.course.staffview import FileText

Outcome = Literal["regraded", "adjusted", "declined"]
OUTCOMES: tuple[Outcome, ...] = ("regraded", "adjusted", "declined")
STATUSES = ("open", "answered", *OUTCOMES)
MAX_REASON = 2000  # characters of a request's or an answer's reason


@dataclass(frozen=True, slots=True)
class Answer:
    """Staff's answer to a request: what they did, why, who and when; the target's
    points before and after (the same, declined)."""

    outcome: Outcome
    reason: str
    by: str
    at: datetime
    before: float
    after: float


@dataclass(frozen=True, slots=True)
class Request:
    """A regrade request as the store keeps it.

    :param student: whose grade it is about (the asker, or the student staff opened it
        for: ``opened_by`` says who).
    :param before: the target's points when asked; ``most`` what it is worth, and
        ``out_of`` the result's maximum (what an adjustment is a fraction of).
    """

    id: int
    assignment: str
    spool_id: str
    student: str
    target: Target
    reason: str
    opened_at: datetime
    opened_by: str
    before: float
    most: float
    out_of: float
    answer: Answer | None = None

    @property
    def status(self) -> str:
        return "open" if self.answer is None else self.answer.outcome


def window(course: Course, assignment: str, student: str, released: datetime | None,
           now: datetime, asked: int) -> RegradeWindow | None:
    """When the student may ask about ``assignment`` and whether now (``asked``: their
    requests of it so far); None where the course takes no requests."""
    a = course.assignments[assignment]
    spec = a.regrades
    if spec is None:
        return None
    opens = released if spec.opens == "release" else course.deadline(student, assignment)
    left = None if spec.per_assignment is None else max(0, spec.per_assignment - asked)
    if opens is None:
        return RegradeWindow(None, None, left, f"requests about {assignment} open when "
                                               "staff release its results")
    closes = opens + spec.closes
    why = ""
    if now < opens:
        why = f"requests about {assignment} open at {opens.isoformat(timespec='minutes')}"
    elif now >= closes:
        why = (f"requests about {assignment} closed at "
               f"{closes.isoformat(timespec='minutes')}")
    elif left == 0:
        why = f"you have made the {spec.per_assignment} requests {assignment} allows"
    return RegradeWindow(opens.isoformat(), closes.isoformat(), left, why)


def target_of(name: str, sub: SubmissionView | None, hand: HandGradeView | None) -> Target:
    """What a student's ``name`` asks about: ``question:ID`` a question of their
    hand-grade, ``group:NAME`` a test group; else a test group shown on ``sub`` if one
    is so named, else a question of the hand-grade if one is."""
    kind, sep, rest = name.partition(":")
    if sep and kind in ("question", "group"):
        return Target("rubric" if kind == "question" else "group", rest)
    groups = {g.name for g in sub.groups} if sub else set()
    questions = {q.id for q in hand.questions} if hand else set()
    return Target("rubric" if name in questions and name not in groups else "group", name)


def check_request(course: Course, assignment: str, sub: SubmissionView | None,
                  target: Target, reason: str, win: RegradeWindow | None,
                  earlier: Sequence[Request], *, staff: bool = False,
                  hand: HandGradeView | None = None) -> tuple[float, float]:
    """Whether a request about ``target`` of ``sub`` (a submission as its student sees
    it) is taken: (the target's points now, what it is worth).

    :param staff: opened by staff on the student's behalf (no window, no count).
    :param hand: the student's hand-grade as released (a rubric question's request).
    :raises RefusedError: naming why (outside the window with its times, a target
        not shown on that result, no reason, the same question open already).
    """
    if win is None and not staff:
        raise RefusedError(f"{assignment} takes no regrade requests here: ask your course "
                           "staff")
    if win is not None and win.why and not staff:
        raise RefusedError(win.why)
    if not reason.strip():
        raise RefusedError("a regrade request says why: give a reason")
    if len(reason) > MAX_REASON:
        raise RefusedError(f"a reason of at most {MAX_REASON} characters, please")
    if sub is None or sub.verdict is None or sub.state != "graded":
        raise RefusedError(f"no graded submission {sub.id if sub else ''} of yours to "
                           f"{assignment} to ask about".replace("  ", " "))
    if target.kind == "rubric":
        q = next((q for q in hand.questions if q.id == target.name), None) if hand else None
        if q is None:
            shown = ", ".join(q.id for q in hand.questions) if hand else ""
            raise RefusedError(f"{target.name!r} is no question of your released hand-grade "
                               f"of {assignment} (" + (f"graded: {shown})" if shown else
                                                       "none released yet)"))
        points: tuple[float, float] = (q.points, q.max_points)
    elif target.kind == "group":
        group = next((g for g in sub.groups if g.name == target.name), None)
        if group is None:
            shown = ", ".join(g.name for g in sub.groups) or "none yet"
            raise RefusedError(f"{target.name!r} is no test group shown on {sub.id} (shown: "
                               f"{shown})")
        points = (group.points, group.max_points)
    else:
        raise RefusedError(f"{target.label()}: a request names a test group or a question "
                           "of the hand-grade")
    same = next((r for r in earlier if r.spool_id == sub.id and r.target == target
                 and r.answer is None), None)
    if same is not None:
        raise RefusedError(f"you asked about {target.label()} of {sub.id} already "
                           f"(request {same.id}, open)")
    return points


def answer(r: Request, outcome: str, reason: str, by: str, now: datetime,
           points: float | None = None, current: float | None = None
           ) -> tuple[Answer, GradeChange | None]:
    """Staff's answer to ``r`` and the grade change it makes (adjusted: the target's
    points become ``points``; regraded: ``current`` is the target's points after the
    regrade, recorded only).

    :raises RefusedError: answered already, no reason, an unknown outcome, points
        missing or outside what the target is worth.
    """
    if r.answer is not None:
        raise RefusedError(f"request {r.id} was answered ({r.answer.outcome}) by "
                           f"{r.answer.by} at {r.answer.at.isoformat(timespec='minutes')}")
    if outcome not in OUTCOMES:
        raise RefusedError(f"answer with one of {', '.join(OUTCOMES)}, not {outcome!r}")
    if not reason.strip() or len(reason) > MAX_REASON:
        raise RefusedError(f"an answer says why: a reason of 1 to {MAX_REASON} characters")
    if outcome == "adjusted":
        if points is None or not 0 <= points <= r.most:
            raise RefusedError(f"adjusted: give the points of {r.target.label()}, from 0 to "
                               f"{r.most:g}")
        ans = Answer("adjusted", reason.strip(), by, now, r.before, points)
        return ans, GradeChange(r.assignment, r.target, r.spool_id, r.student, r.before,
                                points, r.out_of, reason.strip(), by, now, r.id)
    done: Outcome = "declined" if outcome == "declined" else "regraded"
    after = r.before if done == "declined" or current is None else current
    return Answer(done, reason.strip(), by, now, r.before, after), None


def shown(r: Request) -> RequestView:
    """A request as its student sees it (with the answer, once there is one)."""
    a = r.answer
    return RequestView(r.id, r.spool_id, r.target.kind, r.target.name, r.reason,
                       r.opened_at.isoformat(), r.opened_by, r.status,
                       a.reason if a else "", a.at.isoformat() if a else None,
                       a.by if a else "", r.before, a.after if a else None, r.most)


@dataclass(frozen=True, slots=True)
class QueueRow(Shown):
    """A request in the staff queue: the request as shown, whose, its age in hours."""

    request: RequestView
    assignment: str
    student: str
    age_h: float


@dataclass(frozen=True, slots=True)
class Queue(Shown):
    """The regrade queue as filtered (oldest first) and what it was filtered by."""

    rows: tuple[QueueRow, ...]
    assignment: str = ""
    target: str = ""
    status: str = "open"
    older_h: float | None = None
    counts: dict[str, int] | None = None  # status -> requests, unfiltered


def queue_rows(requests: Sequence[Request], now: datetime, *, assignment: str = "",
               target: str = "", status: str = "open", older_h: float | None = None
               ) -> Queue:
    """The queue: requests of ``assignment`` about ``target`` with ``status`` (``open``,
    ``answered``, an outcome, or "" for all) older than ``older_h`` hours."""
    def keep(r: Request) -> bool:
        age = (now - r.opened_at) / timedelta(hours=1)
        return ((not assignment or r.assignment == assignment)
                and (not target or r.target.name == target)
                and (not status or r.status == status
                     or (status == "answered" and r.answer is not None))
                and (older_h is None or age >= older_h))
    counts: dict[str, int] = {}
    for r in requests:
        counts[r.status] = counts.get(r.status, 0) + 1
    rows = tuple(QueueRow(shown(r), r.assignment, r.student,
                          round((now - r.opened_at) / timedelta(hours=1), 1))
                 for r in sorted(requests, key=lambda r: (r.opened_at, r.id)) if keep(r))
    return Queue(rows, assignment, target, status, older_h, counts)


def with_answer(r: Request, a: Answer) -> Request:
    return replace(r, answer=a)


@dataclass(frozen=True, slots=True)
class RegradeDetail(Shown):
    """One request as staff work it: the request, the target group of the submission's
    current result (``group``: its points now) with each of its tests' input, expected
    answer and output side by side (hidden tests too), the submission's files, and the
    thread: the student's earlier requests about the same target with their answers
    (a request after an answer is how a student answers back)."""

    row: QueueRow
    group: ShownGroup | None
    tests: tuple[ShownTest, ...]
    files: tuple[FileText, ...]
    commands: tuple[str, ...]  # how to answer it from a shell
    earlier: tuple[RequestView, ...] = ()  # oldest first


def thread(r: Request, requests: Sequence[Request]) -> tuple[RequestView, ...]:
    """The student's requests about ``r``'s target of its assignment before ``r``
    (any submission of theirs), oldest first."""
    return tuple(shown(e) for e in sorted(requests, key=lambda e: (e.opened_at, e.id))
                 if e.id != r.id and e.student == r.student and e.assignment == r.assignment
                 and e.target == r.target and (e.opened_at, e.id) < (r.opened_at, r.id))


def answer_commands(r: Request) -> tuple[str, ...]:
    """The command lines that answer ``r`` (shown on its page, beside the form)."""
    base = f"gradeline regrades answer {r.id}"
    return (f"{base} adjusted --points {r.most:g} --reason '...'",
            f"{base} declined --reason '...'",
            f"gradeline regrade --assignment {r.assignment} --preview  # then: "
            f"{base} regraded --reason '...'")
