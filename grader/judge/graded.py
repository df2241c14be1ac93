"""What one autograder or unit-test grading gave, and its per-visibility groups: the
shape both ``grader.judge.gradescope`` and ``grader.judge.unittests`` fill in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from grader.core.result import CompileResult, GroupResult, TestResult
from grader.core.verdict import Verdict, submission_verdict
from grader.formats.gradescope.package import GROUPS
from grader.formats.problem import Problem


@dataclass(frozen=True, slots=True)
class Graded:
    """What one autograder run gave, for the judge's result record."""

    verdict: Verdict
    score: float
    max_score: float
    log: CompileResult  # run_autograder's own run: times, exit and output (staff see it)
    tests: tuple[TestResult, ...]
    groups: tuple[GroupResult, ...]
    message: str  # results.json's top-level output, or why there is no score
    image: dict[str, Any] = field(default_factory=dict)  # the sandbox's facts, when run


def kept_groups(problem: Problem) -> set[str]:
    """The visibilities graded now (a course's visible phase keeps fewer than all)."""
    return {g.name for g in problem.groups}


def visibility_groups(tests: Sequence[TestResult], worth: Mapping[str, float | None], *,
                      kept: set[str] | None = None) -> tuple[GroupResult, ...]:
    """Per visibility (of those run): the tests' points earned of their worth (by name)."""
    out = []
    for name in GROUPS:
        if kept is not None and name not in kept:
            continue
        mine = [t for t in tests if t.group == name]
        passed = sum(t.verdict is Verdict.AC for t in mine)
        out.append(GroupResult(
            name, submission_verdict([t.verdict for t in mine]) if mine else Verdict.AC,
            points=sum(worth.get(t.name) or 0.0 for t in mine),
            score=sum(t.points or 0.0 for t in mine), scoring="autograder",
            passed=passed, total=len(mine)))
    return tuple(out)
