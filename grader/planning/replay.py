"""Replaying a trace into a spool, in real time (or compressed), for ``serve`` to grade.

Open replay submits each row at its time / compression, whatever the system
does. Closed replay is a feedback loop: each student's next attempt waits for the
result of the previous one (its entry reaching ``done/`` or ``quarantine/``: the
result is stored) plus the row's think time / compression.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.adapters.spool import Spool
from grader.core.errors import GradelineError
from grader.planning.trace import TraceRow


@dataclass(frozen=True, slots=True)
class Replayed:
    """What a replay did."""

    submitted: int
    elapsed_s: float
    spool_ids: list[str]


def resolve(rows: Sequence[TraceRow], base: Path) -> list[Path]:
    """Each row's submission path (relative to ``base``), all checked up front.

    :raises GradelineError: naming the first missing one.
    """
    out = []
    for n, r in enumerate(rows, 1):
        p = Path(r.submission)
        p = p if p.is_absolute() else base / p
        if not p.exists():
            raise GradelineError(f"trace row {n}: {p} does not exist")
        out.append(p)
    return out


def replay_open(spool: Spool, rows: Sequence[TraceRow], base: Path, course: str, *,
                compression: float = 1.0, say: Callable[[str], None] = print) -> Replayed:
    """Submit every row at its time (divided by ``compression``)."""
    paths = resolve(rows, base)
    t0 = time.monotonic()
    ids = []
    for n, (r, p) in enumerate(zip(rows, paths, strict=True), 1):
        delay = t0 + r.time / compression - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        ids.append(spool.submit(course=course, assignment=r.assignment, student=r.student,
                                path=p).id)
        if n % 100 == 0:
            say(f"replay: {n}/{len(rows)} submitted ({time.monotonic() - t0:.0f} s)")
    return Replayed(len(ids), time.monotonic() - t0, ids)


def _answered(spool: Spool, sid: str) -> bool:
    return spool.settled(sid)


def replay_closed(spool: Spool, rows: Sequence[TraceRow], base: Path, course: str, *,
                  compression: float = 1.0, poll_s: float = 0.02,
                  timeout_s: float = 3600.0, say: Callable[[str], None] = print) -> Replayed:
    """Each student submits their rows in order; the next waits for the previous
    result plus its ``think_s`` (divided by ``compression``).

    :raises GradelineError: when a result has not come within ``timeout_s``.
    """
    paths = resolve(rows, base)
    queues: dict[str, list[tuple[TraceRow, Path]]] = {}
    for r, p in zip(rows, paths, strict=True):
        queues.setdefault(r.student, []).append((r, p))
    t0 = time.monotonic()
    due = {s: t0 + q[0][0].think_s / compression for s, q in queues.items()}
    waiting: dict[str, tuple[str, float]] = {}  # student -> (spool id, when submitted)
    ids: list[str] = []
    while queues or waiting:
        now = time.monotonic()
        for s in [s for s, when in due.items() if when <= now]:
            row, path = queues[s].pop(0)
            if not queues[s]:
                del queues[s]
            del due[s]
            sid = spool.submit(course=course, assignment=row.assignment, student=s,
                               path=path).id
            ids.append(sid)
            waiting[s] = (sid, now)
        for s, (sid, since) in list(waiting.items()):
            if _answered(spool, sid):
                del waiting[s]
                if s in queues:
                    due[s] = time.monotonic() + queues[s][0][0].think_s / compression
                if len(ids) % 50 == 0:
                    say(f"replay: {len(ids)}/{len(rows)} submitted "
                        f"({time.monotonic() - t0:.0f} s)")
            elif now - since > timeout_s:
                raise GradelineError(f"replay: no result for {sid} ({s}) after "
                                     f"{timeout_s:.0f} s: is gradeline serve running?")
        time.sleep(poll_s)
    return Replayed(len(ids), time.monotonic() - t0, ids)
