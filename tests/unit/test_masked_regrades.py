"""The regrade queue as a grader of an anonymous assignment sees it: its students by
pseudonym (the asker too, where the student asked), other assignments as they are."""

from __future__ import annotations

from grader.course.regrades import Queue, QueueRow, RegradeDetail
from grader.course.shown import RequestView
from grader.views.anonymity import MaskedStaff


def _row(assignment: str, student: str, opened_by: str) -> QueueRow:
    r = RequestView(1, "s-1", "group", "small", "off by one", "2026-12-03T10:00:00+01:00",
                    opened_by, "open")
    return QueueRow(r, assignment, student, 2.0)


class _Pages:  # the two reads MaskedStaff passes on (views.staff_pages.StaffPages)
    rows = (_row("hw1", "alice", "alice"), _row("hw1", "bob", "ta1"),
            _row("hw2", "carol", "carol"))

    def regrades(self, **_: object) -> Queue:
        return Queue(self.rows)

    def regrade(self, request: int) -> RegradeDetail | None:
        return RegradeDetail(self.rows[request], None, (), (), ()) if request < 3 else None


def test_a_graders_regrade_queue_names_an_anonymous_assignments_students_by_pseudonym(
        ) -> None:
    masked = MaskedStaff(_Pages(), {"hw1"}, lambda a, s: f"anon-{a}-{s[0]}")  # type: ignore[arg-type]
    rows = masked.regrades().rows
    assert [(r.student, r.request.opened_by) for r in rows] == [
        ("anon-hw1-a", "anon-hw1-a"), ("anon-hw1-b", "ta1"), ("carol", "carol")]
    assert "alice" not in str([r.to_json() for r in rows])
    one = masked.regrade(0)
    assert one is not None and one.row.student == "anon-hw1-a"
    assert masked.regrade(7) is None
