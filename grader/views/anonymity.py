"""The staff pages as a grader sees them while an assignment is graded anonymously: its
students by their pseudonym on every page that names them (the assignment's table,
a submission, the regrade preview, the similarity report and its pairs, the regrade
queue and its requests, the live page's failures), and its part left out of a
student's own history (which would pair the name with the submissions). A similarity
report's notes name students in prose, so they are left out too."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import replace

from grader.course.load import Student
from grader.course.masking import masked_files
from grader.course.regrades import Answer, Queue, QueueRow, RegradeDetail
from grader.course.similarity_pairs import PairView, SimilarityReport
from grader.course.staffview import (
    AssignmentRow,
    FileText,
    HistoryView,
    RegradePreview,
    Snapshot,
    SubmissionDetail,
    UsageView,
)
from grader.views.staff_pages import StaffPages

#: (assignment, student) -> the student's pseudonym in that assignment
Key = Callable[[str, str], str]


class MaskedStaff:
    """``StaffPages`` with the students of ``hidden`` assignments by pseudonym."""

    def __init__(self, staff: StaffPages, hidden: Collection[str], key: Key,
                 roster: Mapping[str, Student] | None = None) -> None:
        self.staff, self.hidden, self.key = staff, frozenset(hidden), key
        self.roster = roster or {}  # whose names are masked in the files shown

    def assignments(self) -> list[str]:
        return self.staff.assignments()

    def assignment(self, name: str) -> list[AssignmentRow] | None:
        rows = self.staff.assignment(name)
        if rows is None or name not in self.hidden:
            return rows
        return sorted((replace(r, student=self.key(name, r.student), name="") for r in rows),
                      key=lambda r: r.student)

    def student(self, name: str) -> list[HistoryView] | None:
        history = self.staff.student(name)
        if history is None:
            return None
        return [h for h in history if h.assignment not in self.hidden]

    def submission(self, spool_id: str) -> SubmissionDetail | None:
        s = self.staff.submission(spool_id)
        if s is None or s.assignment not in self.hidden:
            return s
        who = self.key(s.assignment, s.student)
        return replace(s, student=who, files=self._files(s.files, s.student, who))

    def preview(self, name: str) -> RegradePreview | None:
        p = self.staff.preview(name)
        if p is None or name not in self.hidden:
            return p
        return replace(p, changes=tuple(replace(c, student=self.key(name, c.student))
                                        for c in p.changes))

    def similarity(self, name: str) -> SimilarityReport | None:
        r = self.staff.similarity(name)
        if r is None or name not in self.hidden:
            return r
        return replace(r, skipped=(), pairs=tuple(
            replace(p, a=self.key(name, p.a), b=self.key(name, p.b)) for p in r.pairs))

    def pair(self, name: str, index: int) -> PairView | None:
        v = self.staff.pair(name, index)
        if v is None or name not in self.hidden:
            return v
        return replace(v, a=self.key(name, v.a), b=self.key(name, v.b))

    def usage(self) -> UsageView:
        return self.staff.usage()

    def _row(self, r: QueueRow) -> QueueRow:
        if r.assignment not in self.hidden:
            return r
        who = self.key(r.assignment, r.student)
        asker = who if r.request.opened_by == r.student else r.request.opened_by
        return replace(r, student=who, request=replace(r.request, opened_by=asker))

    def regrades(self, *, assignment: str = "", target: str = "", status: str = "open",
                 older_h: float | None = None) -> Queue:
        q = self.staff.regrades(assignment=assignment, target=target, status=status,
                                older_h=older_h)
        return replace(q, rows=tuple(self._row(r) for r in q.rows))

    def regrade(self, request: int) -> RegradeDetail | None:
        d = self.staff.regrade(request)
        if d is None or d.row.assignment not in self.hidden:
            return d
        row = self._row(d.row)
        earlier = tuple(replace(e, opened_by=row.student if e.opened_by == d.row.student
                                else e.opened_by) for e in d.earlier)
        return replace(d, row=row, files=self._files(d.files, d.row.student, row.student),
                       earlier=earlier)

    def _files(self, files: tuple[FileText, ...], student: str, pseudonym: str
               ) -> tuple[FileText, ...]:
        """A hidden student's files with their names masked (``course.masking``)."""
        return masked_files(files, self.roster, student, pseudonym)

    def answer(self, request: int, outcome: str, reason: str, by: str,
               points: float | None = None) -> Answer:
        return self.staff.answer(request, outcome, reason, by, points)


def mask_snapshot(s: Snapshot, hidden: Collection[str], key: Key) -> Snapshot:
    """The live snapshot with the failures of ``hidden`` assignments by pseudonym."""
    return replace(s, failures=tuple(
        replace(f, student=key(f.assignment, f.student)) if f.assignment in hidden else f
        for f in s.failures))
