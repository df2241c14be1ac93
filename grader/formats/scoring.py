"""Scoring: from test verdicts to group points and a total, as pure functions.

Two models. Course assignments (``points``): gradeline.yaml gives each test group
points, all-or-nothing or proportional. Problems of type scoring (``kattis``): the
package's own test data configuration -- the 2023-07/2025-09 aggregations
(``pass-fail``, ``sum``, ``min`` up to ``max_score``, ``require_pass``) or the legacy
default grader (``accept_score``/``reject_score``, ``grader_flags``, ``range``) --
with validator-given scores (``score.txt``, ``score_multiplier.txt``). Either way every
group's result says how its score came about.

Judge errors earn nothing but are not charged either: the submission's verdict
is then JE, and JE results are regraded, never published.
"""

from __future__ import annotations

from collections.abc import Sequence

from grader.core.jobs import JudgeFault
from grader.core.result import CompileResult, GroupResult, SubmissionResult, TestResult
from grader.core.verdict import Verdict, submission_verdict
from grader.formats.problem import Node, Problem, TestGroup
from grader.formats.tree import aggregate


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
    if problem.scoring_model == "kattis":
        score, _, groups = score_kattis(problem, tests)
        return score, groups
    groups = tuple(score_group(g, tests) for g in problem.groups)
    return round(sum(g.score for g in groups), 6), groups


def scored(problem: Problem, tests: Sequence[TestResult]
           ) -> tuple[float, tuple[GroupResult, ...], Verdict]:
    """A graded run's score, groups and verdict (the first failing test's; a Kattis
    package's legacy data decides its own, JE aside). A problem of its performance
    tests only (an on-demand measurement) runs none: AC, its visible tests accepted it
    before it was asked for."""
    if problem.phase == "performance":
        return 0.0, (), Verdict.AC
    score, groups = score_submission(problem, tests)
    verdict = submission_verdict([t.verdict for t in tests])
    if problem.scoring_model == "kattis" and problem.legacy_data and verdict is not Verdict.JE:
        verdict = score_kattis(problem, tests)[1]
    return score, groups, verdict


#: the default grader's "worst" order (JE first); gradeline's names for Kattis's
_WORST = (Verdict.JE, Verdict.RE, Verdict.MLE, Verdict.TLE, Verdict.OLE, Verdict.WA)


def _legacy_verdict(node: Node, verdicts: Sequence[Verdict]) -> Verdict:
    if any(v is Verdict.JE for v in verdicts):
        return Verdict.JE
    if node.accept_if_any_accepted and any(v is Verdict.AC for v in verdicts):
        return Verdict.AC
    if node.verdict_mode == "always_accept":
        return Verdict.AC
    bad = [v for v in verdicts if v is not Verdict.AC]
    if not bad:
        return Verdict.AC
    if node.verdict_mode == "first_error":
        return bad[0]
    return min(bad, key=lambda v: _WORST.index(v) if v in _WORST else len(_WORST))


def score_kattis(problem: Problem, tests: Sequence[TestResult]
                 ) -> tuple[float, Verdict, tuple[GroupResult, ...]]:
    """(score, verdict, every node's result) of a problem of type scoring.

    Cases not run (a group stopped by ``on_reject: break`` or skipped for
    ``require_pass``) count as rejected; in legacy groups they are not passed to the
    grader at all, as the default grader never saw them.

    Long because the walk's three inner steps (a case, a legacy node, a 2023-07/2025-09
    node) share its state and read as one recursion."""
    nodes = problem.nodes
    by_case = {t.name: t for t in tests}
    out: list[GroupResult] = []

    def case(node: Node, name: str) -> tuple[Verdict | None, float]:
        t = by_case.get(name)
        if t is None:
            return None, 0.0
        if node.legacy:
            if t.verdict is Verdict.AC:
                return t.verdict, t.points if t.points is not None else node.accept_score
            return t.verdict, node.reject_score
        if t.verdict is not Verdict.AC:
            return t.verdict, 0.0
        mx = node.case_max.get(name)
        return t.verdict, t.points if t.points is not None else (mx or 0.0)

    def walk(name: str, passed: dict[str, bool]) -> tuple[Verdict | None, float]:
        node = nodes[name]
        verdicts: list[Verdict] = []
        scores: list[float] = []
        ran = total = ok = 0
        skipped = [r for r in node.require_pass if not passed.get(r, False)]
        for it in node.items:
            if node.ignore_sample and it == "sample":
                walk(it, passed)
                continue
            if it in nodes:
                v, sc = walk(it, passed)
            else:
                total += 1
                v, sc = case(node, it)
                if v is not None:
                    ran += 1
                    ok += v is Verdict.AC
            if v is None:
                if node.legacy:
                    continue  # never judged: the grader does not see it
                v = Verdict.WA  # not run: rejected
            verdicts.append(v)
            scores.append(sc)
        mx = node.max_score
        if skipped:
            verdict: Verdict | None = Verdict.WA
            score, how = 0.0, f"not run: requires {', '.join(skipped)} to pass"
        elif node.legacy:
            verdict = _legacy_verdict(node, verdicts) if verdicts else None
            score = aggregate(node.aggregation, scores)
            lo, hi = node.score_range
            if not lo <= score <= hi:
                verdict, how = Verdict.JE, f"score {score:g} outside the range [{lo}, {hi}]"
            else:
                how = f"{node.aggregation} of {len(scores)} results ({node.verdict_mode})"
        else:
            verdict = submission_verdict(verdicts) if verdicts else None
            if verdict is Verdict.JE:
                score, how = 0.0, "judge error"
            elif node.aggregation == "pass-fail":
                score = (mx or 0.0) if verdicts and all(v is Verdict.AC for v in verdicts) \
                    else 0.0
                how = f"pass-fail: {mx or 0:g} when every case is accepted"
            else:
                score = aggregate(node.aggregation, scores)
                how = f"{node.aggregation} of {len(scores)} results"
            if mx is not None and score > mx + 1e-9:
                verdict, how = Verdict.JE, f"score {score:g} above its max_score {mx:g}"
        passed[name] = verdict is Verdict.AC and ran == total
        out.append(GroupResult(name=name or "data", verdict=verdict or Verdict.JE,
                               points=mx if mx is not None else 0.0, score=round(score, 6),
                               scoring=f"kattis {how}", passed=ok, total=total))
        return verdict, score

    verdict, score = walk(problem.score_root, {})
    final = verdict or Verdict.JE
    if nodes[problem.score_root].legacy and final is not Verdict.AC:
        score = 0.0  # the spec: a rejected result's score is ignored
    ordered = sorted(out, key=lambda g: g.name)
    return round(score if final is not Verdict.JE else 0.0, 6), final, tuple(ordered)
