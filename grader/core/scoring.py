"""Scoring: from test verdicts to group points and a total, as pure functions.

Judge errors earn nothing but are not charged either: the submission's verdict
is then JE, and JE results are regraded, never published.
"""

from __future__ import annotations

from collections.abc import Sequence

from grader.core.jobs import JudgeFault
from grader.core.problem import Problem, TestGroup
from grader.core.result import CompileResult, GroupResult, SubmissionResult, TestResult
from grader.core.verdict import Verdict, submission_verdict


def fault_result(problem: Problem, submission: str, content_hash: str,
                 language: str | None, fault: JudgeFault) -> SubmissionResult:
    """The record of a job that got no verdict: JE when our side failed (never
    charged, regraded), CE with the reason when the submission cannot be graded."""
    _, groups = score_submission(problem, [])
    if fault.cause == "submission":
        return SubmissionResult(problem.short_name, problem.version, submission, content_hash,
                                language, Verdict.CE, 0.0, problem.max_score,
                                CompileResult(ok=False, output=fault.reason), (), groups,
                                message=fault.reason)
    return SubmissionResult(problem.short_name, problem.version, submission, content_hash,
                            language, Verdict.JE, 0.0, problem.max_score, None, (), groups,
                            message=fault.reason)


def score_group(group: TestGroup, tests: Sequence[TestResult]) -> GroupResult:
    """Points for one group: all-or-nothing, or proportional to the tests passed.

    A validator-given score (score.txt, a fraction) counts instead of 0/1 in
    proportional groups.
    """
    mine = [t for t in tests if t.group == group.name]
    passed = sum(1 for t in mine if t.verdict is Verdict.AC)
    total = len(group.cases)
    verdict = submission_verdict([t.verdict for t in mine]) if mine else Verdict.JE
    # A group stopped at a rejection (on_reject: break) ends with its rejected test;
    # the tests it did not run count as failed. Any other gap is an incomplete run.
    stopped = bool(mine) and len(mine) < total and \
        mine[-1].verdict not in (Verdict.AC, Verdict.JE)
    if total == 0 or (len(mine) != total and not stopped):
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
