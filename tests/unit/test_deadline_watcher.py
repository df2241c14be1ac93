"""The after-deadline pass beside serve: it ticks in its own thread, survives a failed
pass, and stops when asked."""

from __future__ import annotations

import threading
from datetime import datetime

from grader.core.errors import StoreError
from grader.pipeline.deadline import DeadlineWatcher


def test_the_watcher_ticks_survives_a_failure_and_stops() -> None:
    ticks: list[datetime] = []
    third = threading.Event()

    def run_once(now: datetime) -> None:
        ticks.append(now)
        if len(ticks) == 1:
            raise StoreError("the database is down")
        if len(ticks) == 3:
            third.set()

    w = DeadlineWatcher(run_once, every_s=0.01)
    w.start()
    assert third.wait(5), "the watcher stopped ticking after a failed pass"
    w.stop()
    n = len(ticks)
    assert all(t.tzinfo is not None for t in ticks)
    third.wait(0.1)
    assert len(ticks) <= n + 1  # stopped (a tick in flight may still land)


def test_to_grade_picks_each_due_students_counting_submission_without_a_full_result(
        tmp_path) -> None:
    from datetime import timedelta
    from zoneinfo import ZoneInfo

    from grader.course.load import build_course
    from grader.course.policy import Attempt
    from grader.course.spec import CourseSpec
    from grader.pipeline.deadline import to_grade

    spec = CourseSpec.model_validate({
        "course": "c", "assignments": [{"name": "a", "package": "a",
                                        "deadline": "2026-12-01T12:00:00+00:00"}],
        "extensions": [{"student": "late", "extra": "1d"}]})
    course = build_course(spec, tmp_path, "course.yaml")
    due = datetime(2026, 12, 1, 12, tzinfo=ZoneInfo("UTC"))
    tries = [Attempt("x1", "ann", "a", due - timedelta(hours=2), 1.0, None),
             Attempt("x2", "ann", "a", due - timedelta(hours=1), 0.5, None),  # counts
             Attempt("y1", "bea", "a", due - timedelta(hours=1), 1.0, 1.0),  # graded
             Attempt("z1", "late", "a", due + timedelta(hours=3), 1.0, None),
             Attempt("w1", "ann", "other", due, 1.0, None)]
    assert to_grade(course, "a", tries, due + timedelta(hours=1)) == (["x2"], 2, 1, 1)
    assert to_grade(course, "a", tries, due + timedelta(days=2)) == (["x2", "z1"], 3, 1, 0)
