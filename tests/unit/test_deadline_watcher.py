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
