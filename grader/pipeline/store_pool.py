"""Results-store connections kept open between a server's batches.

Every batch stored through two connections of its own (the batch's and its flush's),
each opened, authenticated (SCRAM: deliberately costly on both sides) and checked for
migrations: at four batches a second that was most of what a short claim interval
cost (``bench/control_plane.py``, ``--submit-interval 0.25``). A server hands out
stores from this pool instead; ``close`` gives one back, and one that failed is
closed for good (the next lease opens a fresh one).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator

from grader.core.errors import StoreError
from grader.core.record import SubmissionRecord
from grader.core.result import SubmissionResult
from grader.core.samples import ShardSample
from grader.course.policy import Attempt
from grader.pipeline.ports import ResultStore, StoreOpener


class StorePool:
    """A ``StoreOpener`` that reuses up to ``keep`` idle stores (migrated once)."""

    def __init__(self, opener: StoreOpener, keep: int = 8) -> None:
        self.opener, self.keep = opener, keep
        self._idle: list[ResultStore] = []
        self._lock = threading.Lock()
        self.opened = 0

    def __call__(self) -> ResultStore:
        with self._lock:
            if self._idle:
                return _Lease(self, self._idle.pop(), migrated=True)
        store = self.opener()  # outside the lock: connecting may take a while
        with self._lock:
            self.opened += 1
        return _Lease(self, store, migrated=False)

    def _give_back(self, store: ResultStore) -> None:
        with self._lock:
            if len(self._idle) < self.keep:
                self._idle.append(store)
                return
        store.close()

    def close(self) -> None:
        """Close every idle store (the server is done)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for s in idle:
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
