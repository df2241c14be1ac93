"""Where the staff pages' data comes from: the store's rows, the course's policy and
the spool's kept files, shaped by ``course.staffview`` (the web adapter only renders)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from pydantic import ValidationError

from grader.adapters.scheduler.accounting import Usage
from grader.adapters.spool import Spool
from grader.core.errors import GradelineError
from grader.course.handgrades import with_hand_grades
from grader.course.load import Course
from grader.course.policy import Grade, grade_course
from grader.course.regrades import Answer, Queue, RegradeDetail
from grader.course.similarity_pairs import PairView, SimilarityReport
from grader.course.staffview import (
    AssignmentRow,
    HistoryView,
    RegradePreview,
    SubmissionDetail,
    UsageRow,
    UsageView,
    assignment_table,
    student_history,
    submission_page,
)
from grader.formats.problem import Problem
from grader.views.ports import CourseReads, ReadsOpener
from grader.views.regrade_queue import RegradeQueue
from grader.views.rubric_files import RubricFiles
from grader.views.similarity_report import pair_view, read_report


class StaffPages:
    """The ``adapters.web.StaffSource`` of one course (a database read per call)."""

    def __init__(self, course: Course, spool: Spool, store: ReadsOpener,
                 problems: Mapping[str, Problem],
                 usage: Callable[[str], Sequence[Usage]] | None = None) -> None:
        self.course, self.spool, self.store = course, spool, store
        self._usage = usage  # the accounting database, where the course has an account
        self.max_points = {n: p.max_score for n, p in problems.items()}
        self.rubrics = RubricFiles()  # grading by hand: the rubric files as they read now
        self.queue = RegradeQueue(course, spool, store, problems)

    def assignments(self) -> list[str]:
        return [a.name for a in self.course.ordered()]

    def _grades(self, store: CourseReads) -> list[Grade]:
        """The course's grades (teams, grade changes), with the hand-grades of
        assignments that have a rubric."""
        course = self.rubrics.current(self.course)
        name = course.name
        changes = store.grade_changes(name)
        grades = grade_course(course, store.attempts(name), self.max_points,
                              teams=store.teams(name), changes=changes)
        if all(a.rubric is None for a in course.assignments.values()):
            return grades
        return with_hand_grades(course, grades, store.hand_grades(name), self.max_points,
                                changes)

    def assignment(self, name: str) -> list[AssignmentRow] | None:
        if name not in self.course.assignments:
            return None
        with self.store() as store:
            rows = store.rows(self.course.name, assignment=name)
            grades = self._grades(store)
        return assignment_table(self.course, name, rows, grades)

    def student(self, name: str) -> list[HistoryView] | None:
        with self.store() as store:
            rows = store.rows(self.course.name, student=name)
            if not rows and name not in self.course.students:
                return None
            grades = self._grades(store)
        return student_history(self.course, name, rows, grades)

    def submission(self, spool_id: str) -> SubmissionDetail | None:
        with self.store() as store:
            d = store.detail(self.course.name, spool_id)
        if d is None:
            return None
        return submission_page(self.course, d, self.spool.payload_files(spool_id))

    def preview(self, name: str) -> RegradePreview | None:
        """The latest regrade preview (None: none yet, or one this version cannot read)."""
        try:
            return RegradePreview.from_json(json.loads(
                self.spool.regrade_preview(name).read_text()))
        except (OSError, ValueError, ValidationError):
            return None

    def similarity(self, name: str) -> SimilarityReport | None:
        return read_report(self.spool, name) if name in self.course.assignments else None

    def pair(self, name: str, index: int) -> PairView | None:
        if name not in self.course.assignments:
            return None
        return pair_view(self.spool, name, index)

    def usage(self, days: int = 30) -> UsageView:
        """What the course's account used of the cluster, or why that is not known."""
        since = f"now-{days}days"
        out = UsageView(self.course.slurm.account, since, f"the last {days} days")
        if self._usage is None:
            return replace(out, why="the course file names no Slurm account (slurm: "
                                    "account:), or no Slurm controller answers")
        try:
            return replace(out, rows=tuple(UsageRow(u.account, u.qos, u.jobs,
                                                    round(u.core_hours, 4))
                                           for u in self._usage(since)))
        except GradelineError as e:
            return replace(out, why=str(e))


    def regrades(self, *, assignment: str = "", target: str = "", status: str = "open",
                 older_h: float | None = None) -> Queue:
        """The regrade queue, filtered (``course.regrades.queue_rows``)."""
        return self.queue.queue(assignment=assignment, target=target, status=status,
                                older_h=older_h)

    def regrade(self, request: int) -> RegradeDetail | None:
        """One request with what answering it needs (None: no such request)."""
        return self.queue.detail(request)

    def answer(self, request: int, outcome: str, reason: str, by: str,
               points: float | None = None) -> Answer:
        """Staff's answer, as ``by`` (the account the kernel named).

        :raises RefusedError: not an answer the request takes."""
        return self.queue.answer(request, outcome, reason, by, points)
