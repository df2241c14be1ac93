"""The versioned result record of one graded submission, and its pure scoring.

``SCHEMA_VERSION`` changes whenever a key changes meaning or disappears; new
keys may be added without a bump (readers must ignore unknown keys).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from grader.problem import Problem, TestGroup
from grader.verdict import Verdict, submission_verdict

SCHEMA = "gradeline/result"
SCHEMA_VERSION = 1
FEEDBACK_LIMIT = 2000  # characters of diff/validator feedback kept per test


@dataclass(frozen=True, slots=True)
class TestResult:
    """The outcome of one test case."""

    __test__ = False  # not a pytest class

    name: str
    group: str
    verdict: Verdict
    cpu_time_s: float | None = None
    wall_time_s: float | None = None
    memory_bytes: int | None = None
    exit_code: int | None = None
    signal: int | None = None
    termination: str | None = None
    feedback: str = ""
    score: float | None = None  # validator-given fraction in [0, 1], when it gave one


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

    name: str
    verdict: Verdict
    points: float
    score: float
    scoring: str
    passed: int
    total: int


@dataclass(frozen=True, slots=True)
class SubmissionResult:
    """Everything known about one graded submission."""

    problem: str
    problem_version: str
    submission: str
    content_hash: str
    language: str | None
    verdict: Verdict
    score: float
    max_score: float
    compile: CompileResult | None
    tests: tuple[TestResult, ...]
    groups: tuple[GroupResult, ...]
    runtime: Mapping[str, Any] = field(default_factory=dict)
    timing: Mapping[str, float] = field(default_factory=dict)
    graded_at: str = ""
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (schema + version first)."""
        body = asdict(self)
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
        )


def judge_error_result(problem: Problem, submission: str, content_hash: str,
                       language: str | None, message: str) -> SubmissionResult:
    """A JE record for a submission our side could not grade (never charged)."""
    _, groups = score_submission(problem, [])
    return SubmissionResult(problem.short_name, problem.version, submission, content_hash,
                            language, Verdict.JE, 0.0, problem.max_score, None, (), groups,
                            message=message)


def score_group(group: TestGroup, tests: Sequence[TestResult]) -> GroupResult:
    """Points for one group: all-or-nothing, or proportional to the tests passed.

    A validator-given score (score.txt, a fraction) counts instead of 0/1 in
    proportional groups.
    """
    mine = [t for t in tests if t.group == group.name]
    passed = sum(1 for t in mine if t.verdict is Verdict.AC)
    total = len(group.cases)
    verdict = submission_verdict([t.verdict for t in mine]) if mine else Verdict.JE
    if total == 0 or len(mine) != total:
        score = 0.0
    elif group.scoring == "proportional":
        fractions = [
            (t.score if t.score is not None else 1.0) if t.verdict is Verdict.AC else 0.0
            for t in mine
        ]
        score = group.points * sum(fractions) / total
    else:
        score = group.points if passed == total else 0.0
    return GroupResult(name=group.name, verdict=verdict, points=group.points,
                       score=round(score, 6), scoring=group.scoring, passed=passed, total=total)


def score_submission(problem: Problem, tests: Sequence[TestResult]
                     ) -> tuple[float, tuple[GroupResult, ...]]:
    """Total score and per-group results. Judge errors earn nothing but are not charged:
    the submission's verdict is JE, and JE results are regraded, never published."""
    groups = tuple(score_group(g, tests) for g in problem.groups)
    return round(sum(g.score for g in groups), 6), groups
