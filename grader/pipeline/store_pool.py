"""Results-store connections kept open between a server's batches.

Every batch stored through two connections of its own (the batch's and its flush's),
each opened, authenticated (SCRAM: deliberately costly on both sides) and checked for
migrations: at four batches a second that was most of what a short claim interval
cost (``bench/control_plane.py``, ``--submit-interval 0.25``). A server hands out
stores from this pool instead; ``close`` gives one back, and one that failed is
closed for good (the next lease opens a fresh one). One that waited idle longer than
``check_after_s`` is asked whether it still answers before it is lent (a PostgreSQL
restart kills idle connections, and a batch's store must not be the one to find out).
The student desk borrows from a pool too: a lease is a context manager and offers the
read side's queries (``views.ports.CourseReads``).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from grader.core.errors import StoreError
from grader.core.finished import Finished
from grader.core.record import SubmissionRecord
from grader.core.result import SubmissionResult
from grader.core.samples import ShardSample
from grader.course.policy import Attempt
from grader.course.staffview import Detail, Row
from grader.course.studentview import Submitted
from grader.pipeline.ports import ResultStore, StoreOpener


class StorePool:
    """A ``StoreOpener`` that reuses up to ``keep`` idle stores (migrated once)."""

    def __init__(self, opener: StoreOpener, keep: int = 8, check_after_s: float = 1.0) -> None:
        self.opener, self.keep, self.check_after_s = opener, keep, check_after_s
        self._idle: list[tuple[ResultStore, float]] = []  # with when it was given back
        self._lock = threading.Lock()
        self.opened = 0
        self.replaced = 0  # idle stores found dead before they were lent

    def __call__(self) -> _Lease:
        while True:
            with self._lock:
                if not self._idle:
                    break
                store, since = self._idle.pop()
            if time.monotonic() - since < self.check_after_s or store.alive():
                return _Lease(self, store, migrated=True)
            with self._lock:
                self.replaced += 1
            with contextlib.suppress(StoreError, OSError):
                store.close()
        store = self.opener()  # outside the lock: connecting may take a while
        with self._lock:
            self.opened += 1
        return _Lease(self, store, migrated=False)

    def _give_back(self, store: ResultStore) -> None:
        with self._lock:
            if len(self._idle) < self.keep:
                self._idle.append((store, time.monotonic()))
                return
        store.close()

    def close(self) -> None:
        """Close every idle store (the server is done)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for s, _ in idle:
            with contextlib.suppress(StoreError, OSError):
                s.close()


class _Lease:
    """One store lent out: a failed call marks it broken, ``close`` returns it."""

    def __init__(self, pool: StorePool, store: ResultStore, *, migrated: bool) -> None:
        self.pool, self.store, self.migrated = pool, store, migrated
        self.broken = False
        self.closed = False

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except BaseException:  # a connection that failed once is not lent again
            self.broken = True
            raise

    def migrate(self) -> list[str]:
        if self.migrated:
            return []
        with self._guard():
            done = self.store.migrate()
        self.migrated = True
        return done

    def __enter__(self) -> _Lease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def alive(self) -> bool:
        return not self.broken and self.store.alive()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.broken:
            with contextlib.suppress(StoreError, OSError):
                self.store.close()
        else:
            self.pool._give_back(self.store)

    def ingest(self, records: Iterable[SubmissionRecord]) -> int:
        with self._guard():
            return self.store.ingest(records)

    def ingest_metrics(self, batch_id: str, samples: Iterable[ShardSample]) -> int:
        with self._guard():
            return self.store.ingest_metrics(batch_id, samples)

    def stored_spool_ids(self, spool_ids: Iterable[str]) -> set[str]:
        with self._guard():
            return self.store.stored_spool_ids(spool_ids)

    def reusable(self, version: str, content_hash: str) -> tuple[str, SubmissionResult] | None:
        with self._guard():
            return self.store.reusable(version, content_hash)

    def outdated(self, course: str, assignment: str, version: str) -> list[str]:
        with self._guard():
            return self.store.outdated(course, assignment, version)

    def status(self, course: str) -> list[tuple[str, str, int]]:
        with self._guard():
            return self.store.status(course)

    def attempts(self, course: str) -> list[Attempt]:
        with self._guard():
            return self.store.attempts(course)

    # -- the read side's queries (views.ports.CourseReads) ---------------------------
    def _reads(self) -> Any:
        return self.store  # a Store: it has the read side's queries too

    def released(self, course: str, assignment: str) -> datetime | None:
        with self._guard():
            return self._reads().released(course, assignment)  # type: ignore[no-any-return]

    def student_submissions(self, course: str, student: str) -> list[Submitted]:
        with self._guard():
            return self._reads().student_submissions(course, student)  # type: ignore[no-any-return]

    def rows(self, course: str, *, assignment: str | None = None,
             student: str | None = None) -> list[Row]:
        with self._guard():
            return self._reads().rows(course, assignment=assignment,  # type: ignore[no-any-return]
                                      student=student)

    def detail(self, course: str, spool_id: str) -> Detail | None:
        with self._guard():
            return self._reads().detail(course, spool_id)  # type: ignore[no-any-return]

    def finished(self, course: str, since: datetime | None = None) -> list[Finished]:
        with self._guard():
            return self._reads().finished(course, since)  # type: ignore[no-any-return]

    def handins(self, course: str, student: str, assignment: str
                ) -> list[tuple[str, datetime]]:
        with self._guard():
            return self._reads().handins(course, student, assignment)  # type: ignore[no-any-return]

    def add_receipt(self, receipt: dict[str, Any]) -> None:
        with self._guard():
            self._reads().add_receipt(receipt)

    def choose(self, course: str, assignment: str, student: str, spool_id: str, by: str
               ) -> None:
        with self._guard():
            self._reads().choose(course, assignment, student, spool_id, by)
