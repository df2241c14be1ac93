"""What a student is shown, as values: their own view (``studentview.student_view``), a
hand-in's receipt and a link to their page -- frozen, so every front end (the desk's
``gradeline mine``, the web page, the LTI launch, the Open OnDemand app) reads the same
fields by name, and with one ``to_json`` (and ``from_json`` back), the form they take
on a wire, in a file or in ``--json``. Staff's values are beside their makers
(``staffview``, ``similarity_pairs``)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Self, cast

from pydantic import TypeAdapter


class Shown:
    """A frozen dataclass with one JSON form (``to_json``; ``from_json`` reads it back).

    :raises pydantic.ValidationError: (``from_json``) naming the field that is wrong.
    """

    __slots__ = ()

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = _adapter(type(self)).dump_python(self, mode="json")
        return out

    @classmethod
    def from_json(cls, data: object) -> Self:
        return cast(Self, _adapter(cls).validate_python(data))


_ADAPTERS: dict[type, TypeAdapter[object]] = {}  # building one takes milliseconds


def _adapter(cls: type) -> TypeAdapter[object]:
    if cls not in _ADAPTERS:
        _ADAPTERS[cls] = TypeAdapter(cls)
    return _ADAPTERS[cls]


@dataclass(frozen=True, slots=True)
class ShownTest(Shown):
    """A test of a shown group; a failed one with its input, answer and the program's
    output, each cut (``studentview.SHOWN_BYTES``)."""

    name: str
    group: str
    verdict: str
    time_s: float | None
    feedback: str
    input: str | None = None
    expected: str | None = None
    output: str | None = None


@dataclass(frozen=True, slots=True)
class ShownGroup(Shown):
    """A shown test group: its verdict, points and the phase that graded it."""

    name: str
    verdict: str
    points: float
    max_points: float
    passed: int
    total: int
    phase: str  # visible | full


@dataclass(frozen=True, slots=True)
class ShownTiming(Shown):
    """One core count of a performance test: each program's median time and the half
    width of its 95 % confidence interval, the runs each had, and the speedups over
    each program's own time at the fewest cores (with the CI propagated)."""

    cores: int
    median_s: float
    ci_s: float | None
    reference_median_s: float
    reference_ci_s: float | None
    runs: int
    speedup: float
    speedup_ci: float | None
    reference_speedup: float


@dataclass(frozen=True, slots=True)
class ShownItem(Shown):
    """A scoring item of the performance tests: what it measured and gave."""

    label: str
    figure: float | None
    points: float
    max_points: float
    rule: str = ""


@dataclass(frozen=True, slots=True)
class ShownCacheRow(Shown):
    """One core count of a cache reading: each program's L3 misses and their growth
    over the fewest cores' (the inflation factor, ``core.perfcache``)."""

    cores: int
    l3_bytes: int | None  # the simulated L3's size (None: the node's own, counted)
    misses: float
    accesses: float | None
    inflation: float | None
    reference_misses: float
    reference_inflation: float | None


@dataclass(frozen=True, slots=True)
class ShownCache(Shown):
    """A performance test's cache reading as the student sees it: a one-line reading,
    where the counts come from (``note``: which counters, and where the node has no
    hardware ones, that it has none) and the counts per core count."""

    source: str
    note: str
    input: str
    reading: str
    rows: tuple[ShownCacheRow, ...] = ()


@dataclass(frozen=True, slots=True)
class ShownPerformance(Shown):
    """A submission's performance tests as the student sees them: the points, the
    curve's points and times, the items, a one-line reading of the figures, and what
    made the measurement less fair than it should be (``not_in_force``)."""

    points: float
    max_points: float
    gate: str
    timings: tuple[ShownTiming, ...]
    items: tuple[ShownItem, ...]
    reading: str
    not_in_force: tuple[str, ...] = ()
    #: the cache reading on the test's small input (None: the test declares none)
    cache: ShownCache | None = None


@dataclass(frozen=True, slots=True)
class SubmissionView(Shown):
    """One of the student's submissions: refused (``reason``), deferred, waiting
    (``verdict`` None) or graded (the shown groups and tests; ``complete`` once the
    score is the whole suite's)."""

    id: str
    submitted_at: str  # ISO
    late_hours: float
    counts: bool
    state: str  # waiting | claimed | graded | quarantined
    sha256: str = ""
    reason: str = ""
    deferred: bool = False
    verdict: str | None = None
    score: float | None = None
    max_score: float | None = None
    complete: bool = False
    message: str = ""
    compile_output: str = ""
    groups: tuple[ShownGroup, ...] = ()
    tests: tuple[ShownTest, ...] = ()
    by: str = ""  # who handed it in, when a teammate did ("" the student)
    team: str = ""  # the team it was handed in for ("" alone)
    #: its performance tests, once released (the full phase measures them)
    performance: ShownPerformance | None = None


@dataclass(frozen=True, slots=True)
class LimitsLeft(Shown):
    """What an assignment's hand-in limits leave the student now (``left`` None: no
    limit); ``why`` a hand-in now would be refused or, ``deferring``, deferred."""

    used: int = 0
    left: int | None = None
    next_at: str | None = None  # ISO
    why: str = ""
    deferring: bool = False


@dataclass(frozen=True, slots=True)
class ShownMeasurement(Shown):
    """A performance measurement the student asked for (``course.ondemand``): which
    token it took, of which submission, when, its state (waiting, measured, failed,
    refunded: failed on our side, the token given back) and, once measured, what the
    performance tests gave."""

    token: int
    submission: str
    requested_at: str  # ISO
    state: str
    reason: str = ""
    performance: ShownPerformance | None = None


@dataclass(frozen=True, slots=True)
class OnDemand(Shown):
    """An assignment's performance measurements on demand: ``used`` of ``tokens``, and
    each request, newest first."""

    used: int
    tokens: int
    measurements: tuple[ShownMeasurement, ...] = ()


@dataclass(frozen=True, slots=True)
class Measuring(Shown):
    """The desk's word that it took a request for a measurement (``gradeline
    measure``): of which submission, when, and the tokens used with it."""

    course: str
    assignment: str
    student: str
    submission: str
    requested_at: str  # ISO
    used: int
    tokens: int


@dataclass(frozen=True, slots=True)
class AssignmentView(Shown):
    """One assignment: the student's own deadline, the release, their submissions."""

    name: str
    deadline: str  # ISO
    released: str | None
    submissions: tuple[SubmissionView, ...]
    limits: LimitsLeft = LimitsLeft()
    team: TeamView | None = None  # of team work: the student's team now (None: not team work)
    regrades: RegradeWindow | None = None  # None: no regrade requests taken
    requests: tuple[RequestView, ...] = ()  # the student's regrade requests, answered or not
    #: its performance measurements on demand (None: the course offers none)
    on_demand: OnDemand | None = None
    hand: HandGradeView | None = None  # graded by hand, once released


@dataclass(frozen=True, slots=True)
class StudentView(Shown):
    """Everything a student may see of their own submissions, as of ``now``."""

    student: str
    course: str
    now: str  # ISO
    assignments: tuple[AssignmentView, ...]

    def only(self, assignment: str) -> StudentView:
        """The same view with one assignment's part."""
        return replace(self, assignments=tuple(a for a in self.assignments
                                               if a.name == assignment))


@dataclass(frozen=True, slots=True)
class Receipt(Shown):
    """The desk's signed word that it took a hand-in (``core.signing``): ``fields`` are
    what the signature covers, exactly as signed (``deferred`` and ``limit`` only when
    it was deferred, ``left`` only under a counting limit)."""

    submission: str
    course: str
    assignment: str
    student: str
    file: str
    received_at: str  # ISO
    size: int
    sha256: str
    deadline: str  # ISO
    late: bool
    deferred: bool = False
    limit: str = ""
    left: int | None = None
    signature: str = ""

    def fields(self) -> dict[str, object]:
        """The signed fields (no signature)."""
        out = {k: v for k, v in Shown.to_json(self).items()
               if k not in ("deferred", "limit", "left", "signature")}
        if self.deferred:
            out.update(deferred=True, limit=self.limit)
        if self.left is not None:
            out["left"] = self.left
        return out

    def to_json(self) -> dict[str, object]:
        return {**self.fields(), "signature": self.signature}


@dataclass(frozen=True, slots=True)
class Link(Shown):
    """A link to the student's own page, and until when it opens it."""

    url: str
    expires: str  # ISO


@dataclass(frozen=True, slots=True)
class ShownRubricItem(Shown):
    """A rubric item as its student sees it: applied, or shown anyway (``always_show``)."""

    id: str
    title: str
    points: float
    explanation: str
    applied: bool


@dataclass(frozen=True, slots=True)
class ShownComment(Shown):
    """A grader's comment at lines ``first`` to ``last`` of a file, with those lines
    (``lines``: their text, cut) and the item it carries, if any."""

    file: str
    first: int
    last: int
    text: str
    lines: tuple[str, ...] = ()
    item: str = ""  # the item's title
    points: float | None = None  # the item's points


@dataclass(frozen=True, slots=True)
class ShownQuestion(Shown):
    """A question graded by hand: its points, the items, the adjustment and why, the
    comments."""

    id: str
    title: str
    points: float
    max_points: float
    items: tuple[ShownRubricItem, ...]
    adjustment: float = 0.0
    reason: str = ""
    comments: tuple[ShownComment, ...] = ()


@dataclass(frozen=True, slots=True)
class HandGradeView(Shown):
    """An assignment's grade by hand, shown once staff released it: the questions graded
    and their total (``complete``: every question is graded)."""

    points: float
    max_points: float
    complete: bool
    questions: tuple[ShownQuestion, ...] = ()


@dataclass(frozen=True, slots=True)
class TeamView(Shown):
    """The student's team of a team assignment (``course.teams``; ``name`` "": in
    none yet): its members, the code that joins it (self-formed teams: the team's to
    share) and until when students change it (``changes`` False: formed by staff, or
    locked)."""

    name: str
    members: tuple[str, ...]
    code: str = ""
    lock: str | None = None  # ISO
    changes: bool = False
    min: int = 1
    max: int = 1


@dataclass(frozen=True, slots=True)
class RegradeWindow(Shown):
    """When an assignment takes regrade requests from the student (ISO; None: not
    known yet), how many more (None: any), and why one now would be refused ("")."""

    opens: str | None
    closes: str | None
    left: int | None = None
    why: str = ""


@dataclass(frozen=True, slots=True)
class RequestView(Shown):
    """A regrade request about a ``target_kind`` (a test group; a rubric item once
    there are any) of a submission, and staff's answer once there is one (``status``:
    open, regraded, adjusted or declined; ``after`` the points it has now)."""

    id: int
    submission: str
    target_kind: str
    target: str
    reason: str
    opened_at: str  # ISO
    opened_by: str
    status: str
    answer: str = ""
    answered_at: str | None = None
    answered_by: str = ""
    before: float | None = None
    after: float | None = None
    most: float | None = None
