"""The versioned result record of one graded submission (scoring: ``kattis.scoring``).

``SCHEMA_VERSION`` changes whenever a key changes meaning or disappears; new
keys may be added without a bump (readers must ignore unknown keys).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from grader.core.perfresult import Performance
from grader.core.verdict import Verdict

SCHEMA = "gradeline/result"
SCHEMA_VERSION = 1
FEEDBACK_LIMIT = 2000  # characters of diff/validator feedback kept per test
OUTPUT_LIMIT = 1000  # bytes of a rejected test's own output kept (what a student is shown)


@dataclass(frozen=True, slots=True)
class TestResult:
    """The outcome of one test case."""

    __test__ = False  # not a pytest class

    name: str  # e.g. secret/group1/03
    group: str  # the test group it ran in
    verdict: Verdict
    cpu_time_s: float | None = None  # null when the run never started
    wall_time_s: float | None = None
    memory_bytes: int | None = None  # peak, as the cgroup or the kernel's rusage saw it
    exit_code: int | None = None
    signal: int | None = None  # the signal that ended the run, if one did
    termination: str | None = None  # what ended the run (a limit, a signal, its own exit)
    feedback: str = ""  # the validator's or the diff's first 2000 characters
    score: float | None = None  # validator-given fraction in [0, 1], when it gave one
    #: the test's score in a problem of type scoring (score.txt, or score_multiplier.txt
    #: times the test's maximum), when the validator gave one
    points: float | None = None
    #: the first bytes of the program's output on a test it failed ("" when accepted):
    #: with the test's input and answer, what a student sees of a failed visible test
    output: str = ""


@dataclass(frozen=True, slots=True)
class CompileResult:
    """The outcome of the compile step (``ok`` False means CE unless ``judge_error``)."""

    ok: bool
    cpu_time_s: float | None = None
    wall_time_s: float | None = None
    memory_bytes: int | None = None
    exit_code: int | None = None
    signal: int | None = None
    termination: str | None = None
    output: str = ""
    judge_error: str | None = None
    cached: bool = False  # outputs reused from an identical (modulo comments) compile


@dataclass(frozen=True, slots=True)
class GroupResult:
    """Points earned in one test group."""

    name: str  # e.g. secret/group1
    verdict: Verdict
    points: float  # the points this group is worth (its maximum)
    score: float  # the points earned in it (a share of ``points``, or the package's sum)
    scoring: str  # how: all_or_nothing, proportional, or the package's aggregation
    passed: int  # tests accepted
    total: int  # tests in the group


@dataclass(frozen=True, slots=True)
class SubmissionResult:
    """Everything known about one graded submission."""

    problem: str  # the assignment's short name (its package directory)
    problem_version: str  # content hash of everything in the package that affects grades
    submission: str  # what was graded: its path, or its spool id
    content_hash: str  # SHA-256 over the submission's files (dedupe and regrades key on it)
    language: str | None  # Kattis language code; null when none could be told
    verdict: Verdict  # AC WA TLE MLE OLE RE CE JE (the first failing test's, in test order)
    score: float  # points earned
    max_score: float  # points possible
    compile: CompileResult | None  # null for a language without a compile step
    tests: tuple[TestResult, ...]  # every test case, in judging order
    groups: tuple[GroupResult, ...]  # every test group (or scoring node) with its points
    #: where and how it was graded: runtime, image, node, cores, Slurm job and task
    runtime: Mapping[str, Any] = field(default_factory=dict)
    timing: Mapping[str, float] = field(default_factory=dict)  # seconds per phase
    graded_at: str = ""  # ISO 8601 time stamp, UTC
    message: str = ""  # for people: why a CE or JE, when there is one
    #: the performance tests' measurements and points (``core.perfresult``; their
    #: points are in ``score``): None where the problem has none or in a part phase
    performance: Performance | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (schema + version first)."""
        body = asdict(self)
        body["performance"] = self.performance.to_json() if self.performance else None
        return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, **body}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SubmissionResult:
        """Parse the JSON form; unknown keys are ignored.

        :raises ValueError: on another schema or a newer major version.
        """
        if data.get("schema") != SCHEMA or data.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(f"not a {SCHEMA} v{SCHEMA_VERSION} record: "
                             f"{data.get('schema')!r} v{data.get('schema_version')!r}")

        def pick(kind: type, raw: Mapping[str, Any]) -> dict[str, Any]:
            names = kind.__dataclass_fields__  # type: ignore[attr-defined]
            return {k: v for k, v in raw.items() if k in names}

        comp = data.get("compile")
        perf = data.get("performance")
        return cls(
            problem=data["problem"],
            problem_version=data["problem_version"],
            submission=data["submission"],
            content_hash=data["content_hash"],
            language=data.get("language"),
            verdict=Verdict(data["verdict"]),
            score=float(data["score"]),
            max_score=float(data["max_score"]),
            compile=CompileResult(**pick(CompileResult, comp)) if comp else None,
            tests=tuple(TestResult(**{**pick(TestResult, t), "verdict": Verdict(t["verdict"])})
                        for t in data.get("tests", [])),
            groups=tuple(GroupResult(**{**pick(GroupResult, g), "verdict": Verdict(g["verdict"])})
                         for g in data.get("groups", [])),
            runtime=dict(data.get("runtime") or {}),
            timing=dict(data.get("timing") or {}),
            graded_at=str(data.get("graded_at", "")),
            message=str(data.get("message", "")),
            performance=Performance.from_json(perf) if perf else None,
        )
