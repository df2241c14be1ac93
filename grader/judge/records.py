"""A graded submission's record (``core.result.SubmissionResult``) from what the judge
measured: one place that fills it, whether tests ran or not."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from grader.core.languages import Language
from grader.core.result import CompileResult, GroupResult, SubmissionResult, TestResult
from grader.core.submission import Submission
from grader.core.verdict import Verdict
from grader.formats.problem import Problem
from grader.formats.scoring import score_submission


def result(problem: Problem, sub: Submission, lang: Language, verdict: Verdict,
           score: float, comp: CompileResult, tests: Sequence[TestResult],
           groups: Sequence[GroupResult], timing: Mapping[str, float],
           runtime: dict[str, Any]) -> SubmissionResult:
    """The record of a graded submission (a judge error scores nothing)."""
    return SubmissionResult(
        problem=problem.short_name, problem_version=problem.version,
        submission=str(sub.path), content_hash=sub.content_hash, language=lang.id,
        verdict=verdict, score=score if verdict is not Verdict.JE else 0.0,
        max_score=problem.max_score, compile=comp, tests=tuple(tests),
        groups=tuple(groups),
        runtime=runtime, timing={k: round(v, 6) for k, v in timing.items()},
        graded_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def no_tests(problem: Problem, sub: Submission, lang: Language, verdict: Verdict,
             comp: CompileResult, t_start: float, timing: Mapping[str, float] | None,
             runtime: dict[str, Any]) -> SubmissionResult:
    """The record of a submission no test ran for (it did not compile, a language or
    size refused): every group with the verdict and no points."""
    _, scored = score_submission(problem, [])  # every group, none of them run
    groups = tuple(replace(g, verdict=verdict, score=0.0) for g in scored)
    t = dict(timing or {})
    t["total_s"] = time.monotonic() - t_start
    return result(problem, sub, lang, verdict, 0.0, comp, [], groups, t, runtime)
