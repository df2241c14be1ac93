"""What a running server reports to Prometheus (``adapters.prometheus``): the spool's
backlog, what is in flight, the server's totals, live pilots, and the stamps of the
submissions it stored, read afresh at each scrape (the store's part at most every
``cache_s``, so a scraper cannot load the database)."""

from __future__ import annotations

import logging
import threading
import time
from datetime import UTC, datetime, timedelta

from grader.adapters.prometheus import ServeState
from grader.adapters.spool import Spool
from grader.core.errors import GradelineError
from grader.core.finished import Finished
from grader.views.ports import Pilots, ReadsOpener, RunningServer

log = logging.getLogger(__name__)


def stages(rows: list[Finished]) -> dict[str, list[float]]:
    """Seconds each submission spent queued, being dispatched, graded, and in all until
    its result was stored (intervals whose stamps are missing are left out)."""
    out: dict[str, list[float]] = {"queue": [], "dispatch": [], "grading": [],
                                   "feedback": []}
    for r in rows:
        for stage, a, b in (("queue", r.arrived, r.claimed), ("dispatch", r.claimed,
                            r.dispatched), ("grading", r.started, r.finished),
                            ("feedback", r.arrived, r.stored)):
            if a is not None and b is not None:
                out[stage].append(max(0.0, b - a))
    return out


class Observer:
    """``ServeState`` of one server (its ``state`` is the collector's source)."""

    def __init__(self, server: RunningServer, spool: Spool, course: str,
                 store: ReadsOpener, pool: Pilots | None = None, cache_s: float = 5.0) -> None:
        self.server, self.spool, self.course = server, spool, course
        self.store, self.pool = store, pool
        self.since = datetime.now(UTC)
        self.cache_s = cache_s
        self._lock = threading.Lock()
        self._stages: dict[str, list[float]] = {}
        self._read_at = -1e9

    def _stored_stages(self) -> dict[str, list[float]]:
        with self._lock:
            if time.monotonic() - self._read_at >= self.cache_s:
                try:
                    with self.store() as store:  # arrived in the last day,
                        rows = store.finished(self.course, self.since - timedelta(days=1))
                    cut = self.since.timestamp()  # stored by this server
                    self._stages = stages([r for r in rows if r.stored and r.stored >= cut])
                except GradelineError as e:
                    log.warning("metrics: %s", e)
                self._read_at = time.monotonic()
            return self._stages

    def state(self) -> ServeState:
        spool = self.spool
        serve, total = self.server.totals()
        return ServeState(
            backlog=len(spool.new_entries()), in_flight_batches=self.server.in_flight,
            in_flight_submissions=sum(len(spool.batch_entries(b)) for b in spool.batches()),
            pilots=self.pool.live() if self.pool is not None else None,
            graded=total.graded, reused=total.reused, quarantined=total.quarantined,
            stored=total.stored, failed_batches=serve.failed_batches,
            verdicts={(a, v): n for a, by in total.verdicts.items() for v, n in by.items()},
            stages=self._stored_stages())
