"""Which tests of a problem still run while a submission is judged, as the package
(``on_reject``, ``require_pass``) and the course say."""

from __future__ import annotations

from grader.core.verdict import Verdict
from grader.formats.problem import OnReject, Problem, TestCase


class RunPlan:
    """Which tests still run: a rejection stops its group when the group (or the
    course, ``on_reject``) says break, and, up the scoring tree, every enclosing group
    that breaks too (Kattis ``on_reject``); a group whose ``require_pass`` groups did not
    all pass is not run at all."""

    def __init__(self, problem: Problem, course_on_reject: OnReject | None) -> None:
        self.problem = problem
        self.course = course_on_reject
        self.stopped: set[str] = set()
        self.failed: set[str] = set()  # nodes with a case that was not accepted
        self.skipped: set[str] = set()

    def should_run(self, case: TestCase) -> bool:
        if case.group in self.stopped or any(a in self.stopped for a in case.ancestors):
            self._fail(case)
            return False
        for a in case.ancestors:
            node = self.problem.nodes.get(a)
            if node is not None and any(r in self.failed for r in node.require_pass):
                self._fail(case)
                return False
        return True

    def _fail(self, case: TestCase) -> None:
        self.failed.add(case.group)
        self.failed.update(case.ancestors)

    def record(self, case: TestCase, verdict: Verdict) -> None:
        if verdict is Verdict.AC:
            return
        self._fail(case)
        if verdict is Verdict.JE:
            return  # a judge error is no rejection of the student's: nothing stops
        if (self.course or self.problem.group(case.group).on_reject) == "break":
            self.stopped.add(case.group)
        for a in case.ancestors:
            node = self.problem.nodes.get(a)
            if node is None or node.on_reject != "break":
                break
            self.stopped.add(a)
