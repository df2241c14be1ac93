"""What staff see of a course: per assignment, every student's attempts and grade; per
student, their history; per submission, every result with every test (hidden ones
too, marked as such); the regrade preview; the cluster use. Pure: the store's rows
and the policy's grades in, values out (frozen, with one ``to_json``: the staff pages'
JSON twins), for the staff pages to render."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import astuple, dataclass, field
from datetime import datetime

from grader.core.record import SubmissionRecord
from grader.core.result import SubmissionResult
from grader.course.load import Course
from grader.course.policy import Attempt, Grade, lateness
from grader.course.shown import Shown
from grader.course.visibility import group_visibility


@dataclass(frozen=True, slots=True)
class Row:
    """One submission with its current verdict (the full suite's, else the visible
    phase's; None while ungraded or refused)."""

    spool_id: str
    student: str
    assignment: str
    submitted_at: datetime
    state: str
    reason: str = ""
    verdict: str | None = None
    score: float | None = None
    max_score: float | None = None
    phase: str | None = None  # visible | full


@dataclass(frozen=True, slots=True)
class Detail:
    """One submission and every result it had: (version, made, superseded, record)."""

    spool_id: str
    student: str
    assignment: str
    submitted_at: datetime
    state: str
    reason: str
    language: str | None
    arrived_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    stored_at: datetime | None
    results: list[tuple[str, datetime, datetime | None, SubmissionResult]] = \
        field(default_factory=list)


@dataclass(frozen=True, slots=True)
class GradeView(Shown):
    """A student's grade of an assignment (``status`` "" and the rest None: none yet)."""

    status: str = ""
    counting: str | None = None
    late_hours: float | None = None
    grace_days: int | None = None
    penalty_pct: float | None = None
    raw_pct: float | None = None
    final_pct: float | None = None
    points: float | None = None
    team: str = ""  # graded as one with its members ("" alone)


@dataclass(frozen=True, slots=True)
class AssignmentRow(Shown):
    """One student of an assignment: attempts, the latest verdict, the grade."""

    student: str
    name: str
    attempts: int
    last: str | None
    last_verdict: str | None
    #: the grade (``GradeView``'s fields, side by side with the row's)
    status: str = ""
    counting: str | None = None
    late_hours: float | None = None
    grace_days: int | None = None
    penalty_pct: float | None = None
    raw_pct: float | None = None
    final_pct: float | None = None
    points: float | None = None
    team: str = ""


@dataclass(frozen=True, slots=True)
class AttemptView(Shown):
    """One attempt as staff see it (every one, refused ones too)."""

    id: str
    submitted_at: str  # ISO
    late_hours: float
    state: str
    reason: str
    verdict: str | None
    score: float | None
    max_score: float | None
    phase: str | None
    counts: bool


@dataclass(frozen=True, slots=True)
class HistoryView(Shown):
    """A student's assignment: their own deadline, grade and every attempt."""

    assignment: str
    deadline: str  # ISO
    grade: GradeView
    attempts: tuple[AttemptView, ...]


@dataclass(frozen=True, slots=True)
class TestView(Shown):
    """A test of a result, with the visibility of its group (``shown``)."""

    name: str
    group: str
    shown: str
    verdict: str
    cpu_s: float | None
    memory_bytes: int | None
    feedback: str
    output: str


@dataclass(frozen=True, slots=True)
class ResultView(Shown):
    """One result of a submission (a phase, a package version) with every test."""

    version: str
    phase: str  # visible | full
    made: str | None
    superseded: str | None
    verdict: str
    score: float
    max_score: float
    message: str
    compile_output: str
    runtime: dict[str, object]
    tests: tuple[TestView, ...]


@dataclass(frozen=True, slots=True)
class Stamps(Shown):
    """When a submission arrived, started, finished and was stored (ISO, or None)."""

    arrived: str | None
    started: str | None
    finished: str | None
    stored: str | None


@dataclass(frozen=True, slots=True)
class FileText(Shown):
    """A kept file of a submission."""

    name: str
    text: str


@dataclass(frozen=True, slots=True)
class SubmissionDetail(Shown):
    """One submission: who, when, its stamps, its files, every result."""

    id: str
    student: str
    assignment: str
    submitted_at: str | None
    state: str
    reason: str
    language: str | None
    late_hours: float
    stamps: Stamps
    files: tuple[FileText, ...]
    results: tuple[ResultView, ...]


@dataclass(frozen=True, slots=True)
class RegradeChange(Shown):
    """A regraded submission: its verdict and score now and what the regrade gives."""

    student: str
    id: str
    phase: str | None
    old_verdict: str | None
    new_verdict: str
    old_score: float | None
    new_score: float
    changed: bool


@dataclass(frozen=True, slots=True)
class RegradePreview(Shown):
    """What a changed package would change, before anything is stored."""

    assignment: str
    new_version: str
    made: str  # ISO
    changes: tuple[RegradeChange, ...]


@dataclass(frozen=True, slots=True)
class UsageRow(Shown):
    """Core-hours of one Slurm account and QOS."""

    account: str
    qos: str
    jobs: int
    core_hours: float


@dataclass(frozen=True, slots=True)
class UsageView(Shown):
    """What a course's Slurm account used over ``period``, or ``why`` that is unknown."""

    account: str | None
    since: str
    period: str
    rows: tuple[UsageRow, ...] = ()
    why: str = ""


@dataclass(frozen=True, slots=True)
class Bin(Shown):
    """One bin of a snapshot's window (``t``: its start, seconds before the snapshot)."""

    t: float
    per_min: float
    p50: float | None
    p95: float | None


@dataclass(frozen=True, slots=True)
class Failure(Shown):
    """A recent judge error or refused submission (``when``: the local time of day)."""

    student: str
    assignment: str
    what: str
    when: str


@dataclass(frozen=True, slots=True)
class Snapshot(Shown):
    """The state of a course's grading at ``at`` (epoch seconds), over ``window_s``:
    what the live page and ``gradeline status --watch`` show (``views.snapshot``)."""

    course: str
    at: float
    window_s: float
    waiting: int  # in the spool, not yet claimed
    in_progress: int  # claimed, not yet stored
    stored: int  # finished in the window
    throughput_per_min: float
    p50_s: float | None
    p95_s: float | None
    verdicts: dict[str, int] = field(default_factory=dict)
    series: tuple[Bin, ...] = ()
    by_node: dict[str, int] = field(default_factory=dict)  # node/cores -> results
    failures: tuple[Failure, ...] = ()  # the latest judge errors and refusals


def _late_hours(course: Course, r: Row) -> float:
    a = course.assignments.get(r.assignment)
    if a is None:
        return 0.0
    late = lateness(course, a, Attempt(r.spool_id, r.student, r.assignment, r.submitted_at))
    return round(late.total_seconds() / 3600, 2)


def _pct(v: float | None) -> float | None:
    return None if v is None else round(v * 100, 2)


def _grade(g: Grade | None) -> GradeView:
    if g is None:
        return GradeView()
    return GradeView(g.status, g.spool_id, round(g.late.total_seconds() / 3600, 2),
                     g.grace_days, g.penalty_pct, _pct(g.raw), _pct(g.final), g.points,
                     g.team)


def _attempt(course: Course, r: Row, counting: str | None) -> AttemptView:
    return AttemptView(r.spool_id, r.submitted_at.isoformat(timespec="seconds"),
                       _late_hours(course, r), r.state, r.reason, r.verdict, r.score,
                       r.max_score, r.phase, r.spool_id == counting)


def assignment_table(course: Course, assignment: str, rows: Sequence[Row],
                     grades: Sequence[Grade]) -> list[AssignmentRow]:
    """One line per student (the roster's and anyone who handed in): attempts, the
    latest verdict, the grade."""
    mine = [r for r in rows if r.assignment == assignment]
    by_grade = {g.student: g for g in grades if g.assignment == assignment}
    out = []
    for student in sorted(set(course.students) | {r.student for r in mine}):
        theirs = [r for r in mine if r.student == student]
        last = theirs[-1] if theirs else None
        s = course.students.get(student)
        out.append(AssignmentRow(student, s.name if s else "", len(theirs),
                                 last.spool_id if last else None,
                                 last.verdict if last else None,
                                 *astuple(_grade(by_grade.get(student)))))
    return out


def student_history(course: Course, student: str, rows: Sequence[Row],
                    grades: Sequence[Grade]) -> list[HistoryView]:
    """Per assignment: the student's own deadline, grade and every attempt."""
    out = []
    for a in course.ordered():
        g = next((g for g in grades if g.student == student and g.assignment == a.name), None)
        counting = g.spool_id if g else None
        out.append(HistoryView(
            a.name, course.deadline(student, a.name).isoformat(), _grade(g),
            tuple(_attempt(course, r, counting) for r in rows
                  if r.student == student and r.assignment == a.name)))
    return out


def _stamp(t: datetime | None) -> str | None:
    return t.isoformat(timespec="seconds") if t else None


def submission_page(course: Course, d: Detail, files: Sequence[tuple[str, str]]
                    ) -> SubmissionDetail:
    """One submission: who, when, its stamps, its files, and each result with every
    test and the visibility of its group."""
    a = course.assignments.get(d.assignment)
    rules = a.visibility if a else {}
    results = []
    for version, made, gone, rec in d.results:
        vis = group_visibility({t.group for t in rec.tests} | {g.name for g in rec.groups},
                               rules)
        results.append(ResultView(
            version, "visible" if "/groups-" in version else "full", _stamp(made),
            _stamp(gone), rec.verdict.value, rec.score, rec.max_score, rec.message,
            rec.compile.output if rec.compile else "", dict(rec.runtime),
            tuple(TestView(t.name, t.group, vis.get(t.group, ""), t.verdict.value,
                           t.cpu_time_s, t.memory_bytes, t.feedback, t.output)
                  for t in rec.tests)))
    return SubmissionDetail(
        d.spool_id, d.student, d.assignment, _stamp(d.submitted_at), d.state, d.reason,
        d.language, _late_hours(course, Row(d.spool_id, d.student, d.assignment,
                                            d.submitted_at, d.state)),
        Stamps(_stamp(d.arrived_at), _stamp(d.started_at), _stamp(d.finished_at),
               _stamp(d.stored_at)),
        tuple(FileText(n, text) for n, text in files), tuple(results))


def regrade_changes(rows: Sequence[Row], new: Mapping[str, SubmissionRecord]
                    ) -> list[RegradeChange]:
    """Per regraded submission: its verdict and score now and what the regrade would
    give (``changed`` when either differs): the regrade preview."""
    out = []
    for r in rows:
        rec = new.get(r.spool_id)
        if rec is None or rec.result is None:
            continue
        v, score = rec.result.verdict.value, rec.result.score
        out.append(RegradeChange(r.student, r.spool_id, r.phase, r.verdict, v, r.score, score,
                                 v != r.verdict or abs(score - (r.score or 0.0)) > 1e-9))
    return out
