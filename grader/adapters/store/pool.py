"""Connections kept open between uses: any resource that is costly to open, lent to one
user at a time.

Every batch a server stores went through two connections of its own (the batch's and
its flush's), each opened, authenticated (SCRAM: deliberately costly on both sides)
and checked for migrations: at four batches a second that was most of what a short
claim interval cost (``bench/control_plane.py``, ``--submit-interval 0.25``). A server,
and the student desk at a deadline, borrow from a pool instead: one given back is lent
again, one that failed is closed for good (the next lend opens a fresh one), and one
that waited idle longer than ``check_after_s`` is asked whether it still answers before
it is lent (a PostgreSQL restart kills idle connections, and a batch must not be the
one to find out). ``postgres.Store`` borrows its connection from one
(``Store(url, pool=...)``); this module knows nothing of what it pools.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Pool(Generic[T]):
    """Up to ``keep`` idle resources made by ``connect``; ``alive`` says whether an idle
    one still works, ``close`` ends one (its errors are ignored: it is gone either way).
    """

    def __init__(self, connect: Callable[[], T], *, alive: Callable[[T], bool],
                 close: Callable[[T], None], keep: int = 8,
                 check_after_s: float = 1.0) -> None:
        self.connect, self.alive, self.close_one = connect, alive, close
        self.keep, self.check_after_s = keep, check_after_s
        self._idle: list[tuple[T, float]] = []  # with when it was given back
        self._lock = threading.Lock()
        self.opened = 0
        self.replaced = 0  # idle ones found dead before they were lent

    def lend(self) -> T:
        """An idle resource that answers, else a fresh one (made outside the lock:
        connecting may take a while)."""
        while True:
            with self._lock:
                if not self._idle:
                    break
                item, since = self._idle.pop()
            if time.monotonic() - since < self.check_after_s or self.alive(item):
                return item
            with self._lock:
                self.replaced += 1
            self._end(item)
        item = self.connect()
        with self._lock:
            self.opened += 1
        return item

    def give_back(self, item: T, *, broken: bool = False) -> None:
        """Keep ``item`` for the next lend (closed instead when ``broken`` or when
        ``keep`` are idle already)."""
        if not broken:
            with self._lock:
                if len(self._idle) < self.keep:
                    self._idle.append((item, time.monotonic()))
                    return
        self._end(item)

    def close(self) -> None:
        """Close every idle resource (the server is done)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for item, _ in idle:
            self._end(item)

    def _end(self, item: T) -> None:
        with contextlib.suppress(Exception):  # a dead connection may fail to close
            self.close_one(item)
