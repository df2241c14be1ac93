"""Which waiting submissions a micro-batch takes: fair between students.

A deadline brings floods: one student resubmitting fifty times in a minute must
not push everyone else's first attempt behind them. The order is round-robin over
students (each student's oldest waiting submission first, students in the order
of their oldest waiting one), and a batch takes at most ``per_student`` of any one
student; the rest wait for later batches, where the same rule applies. A submission
taken past a hand-in limit (``deferred``) waits until no other one does.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Waiting:
    """A submission waiting in the spool: its id (arrival order) and its student."""

    id: str
    student: str
    deferred: bool = False  # taken past a hand-in limit: after every other one


def fair_pick(waiting: Sequence[Waiting], limit: int | None,
              per_student: int | None) -> list[str]:
    """The ids a batch of at most ``limit`` takes from ``waiting`` (in arrival order),
    round-robin over students, at most ``per_student`` each (None: no cap)."""
    if any(w.deferred for w in waiting):
        now = [w for w in waiting if not w.deferred]
        if now:
            waiting = now
    queues: OrderedDict[str, list[str]] = OrderedDict()
    for w in waiting:
        queues.setdefault(w.student, []).append(w.id)
    picked: list[str] = []
    depth = 0
    while queues and (limit is None or len(picked) < limit):
        if per_student is not None and depth >= per_student:
            break
        for student in list(queues):
            ids = queues[student]
            picked.append(ids.pop(0))
            if not ids:
                del queues[student]
            if limit is not None and len(picked) >= limit:
                break
        depth += 1
    return picked
