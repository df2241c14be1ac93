"""The staff side of regrade requests and grades changed by hand: the queue (filtered
by assignment, group, status and age), one request with what answering it needs (the
submission's files, and the asked-about group's tests with input, expected answer and
output side by side, hidden ones too), the answer, one student's grade overridden, and
the audit. What is allowed is ``course.regrades``'s; the store keeps every row."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta

from grader.adapters.spool import Spool
from grader.core.errors import RefusedError
from grader.core.result import SubmissionResult
from grader.course.grade_changes import GradeChange, Target
from grader.course.handgrades import points_of
from grader.course.load import Course
from grader.course.policy import grade_course
from grader.course.regrades import (
    Answer,
    Queue,
    QueueRow,
    RegradeDetail,
    Request,
    answer,
    answer_commands,
    queue_rows,
    shown,
    thread,
)
from grader.course.shown import RequestView, ShownGroup, ShownTest
from grader.course.staffview import Detail, FileText
from grader.course.studentview import SHOWN_BYTES
from grader.formats.problem import Problem
from grader.views.ports import ReadsOpener
from grader.views.student_desk import case_data


def current(d: Detail) -> SubmissionResult | None:
    """A submission's current full result (else its latest visible-phase one)."""
    full = [rec for v, _, gone, rec in d.results if "/groups-" not in v and gone is None]
    return full[0] if full else (d.results[0][3] if d.results else None)


class RegradeQueue:
    """A course's regrade requests and grade changes for its staff (a store read per
    call)."""

    def __init__(self, course: Course, spool: Spool | None, store: ReadsOpener,
                 problems: Mapping[str, Problem],
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.course, self.spool, self.store, self.clock = course, spool, store, clock
        self.case_data = case_data(problems)
        self.max_points = {n: p.max_score for n, p in problems.items()}

    def queue(self, *, assignment: str = "", target: str = "", status: str = "open",
              older_h: float | None = None) -> Queue:
        with self.store() as store:
            requests = store.regrade_requests(self.course.name)
        return queue_rows(requests, self.clock(), assignment=assignment, target=target,
                          status=status, older_h=older_h)

    def _request(self, request: int, *, with_thread: bool = False
                 ) -> tuple[Request, Detail | None, tuple[RequestView, ...]] | None:
        """The request, its submission's detail and (``with_thread``) the thread
        before it, in one session."""
        with self.store() as store:
            found = store.regrade_requests(self.course.name, request=request)
            if not found:
                return None
            r = found[0]
            earlier = thread(r, store.regrade_requests(self.course.name)) \
                if with_thread else ()
            return r, store.detail(self.course.name, r.spool_id), earlier

    def detail(self, request: int) -> RegradeDetail | None:
        """One request with what answering it needs (None: no such request)."""
        got = self._request(request, with_thread=True)
        if got is None:
            return None
        r, d, earlier = got
        rec = current(d) if d else None
        group = next((g for g in rec.groups if g.name == r.target.name), None) if rec else None
        tests = []
        for t in rec.tests if rec else ():
            if t.group == r.target.name:
                given, expected = self.case_data(r.assignment, t.name)
                tests.append(ShownTest(t.name, t.group, t.verdict.value, t.cpu_time_s,
                                       t.feedback, given, expected, t.output[:SHOWN_BYTES]))
        age = round((self.clock() - r.opened_at) / timedelta(hours=1), 1)
        return RegradeDetail(
            QueueRow(shown(r), r.assignment, r.student, age),
            ShownGroup(group.name, group.verdict.value, group.score, group.points,
                       group.passed, group.total, "full") if group else None,
            tuple(tests), tuple(FileText(n, text) for n, text in
                                (self.spool.payload_files(r.spool_id) if self.spool else [])),
            answer_commands(r), earlier)

    def answer(self, request: int, outcome: str, reason: str, by: str,
               points: float | None = None) -> Answer:
        """Staff's answer (``course.regrades.answer``); regraded: the group's points in
        the submission's current result are the ``after`` recorded.

        :raises RefusedError: no such request, answered already, or not an answer.
        """
        got = self._request(request)
        if got is None:
            raise RefusedError(f"course {self.course.name} has no regrade request {request}")
        r, d, _ = got
        rec = current(d) if d else None
        now_points = self._question_points(r) if r.target.kind == "rubric" else \
            next((g.score for g in rec.groups if g.name == r.target.name), None) \
            if rec else None
        now = self.clock()
        with self.store() as store:
            ans, _ = store.answer_request(self.course.name, request, lambda q: answer(
                q, outcome, reason, by, now, points, now_points))
        return ans

    def _question_points(self, r: Request) -> float | None:
        """A rubric question's points in the student's hand-grade now (regraded by hand:
        what the answer records as after)."""
        a = self.course.assignments.get(r.assignment)
        if a is None or a.rubric is None:
            return None
        with self.store() as store:
            mine = store.hand_grades(self.course.name, student=r.student).get(r.assignment, [])
        q = next((q for q in a.rubric.questions if q.id == r.target.name), None)
        g = next((g for g in mine if g.question == r.target.name), None)
        return points_of(q, g) if q is not None and g is not None else None

    def override(self, assignment: str, student: str, points: float, reason: str,
                 by: str) -> GradeChange:
        """Set one student's whole grade of ``assignment`` (a team member who did not
        take part), with the reason; the change kept.

        :raises RefusedError: points outside what the assignment is worth, no reason.
        """
        a = self.course.assignments.get(assignment)
        if a is None:
            raise RefusedError(f"course {self.course.name} has no assignment {assignment!r}")
        possible = a.points or self.max_points.get(assignment, 0.0)
        if not possible or not 0 <= points <= possible:
            raise RefusedError(f"{assignment} is worth {possible:g} points: give 0 to that")
        if not reason.strip():
            raise RefusedError("an override says why: give a reason")
        with self.store() as store:
            grades = grade_course(self.course, store.attempts(self.course.name),
                                  self.max_points, teams=store.teams(self.course.name),
                                  changes=store.grade_changes(self.course.name))
            mine = next((g for g in grades if g.student == student
                         and g.assignment == assignment), None)
            if mine is None:
                raise RefusedError(f"{student} has no grade of {assignment} here")
            change = GradeChange(assignment, Target("grade", ""), "", student,
                                 mine.points or 0.0, points, possible, reason.strip(), by,
                                 self.clock())
            store.add_grade_change(self.course.name, change)
        return change

    def log(self) -> tuple[list[Request], list[GradeChange]]:
        """Every request with its answer, and every grade change: the audit."""
        with self.store() as store:
            return (store.regrade_requests(self.course.name),
                    store.grade_changes(self.course.name))
