"""Performance measured on demand: before their deadline a student may ask for a
measurement of their latest submission the visible tests accepted -- its performance
tests only, at the course's bulk priority -- at most ``on_demand`` times per
assignment (the course file's ``performance: {on_demand: N}``). Every request takes
one token, recorded in the store before anything runs; a measurement that failed on
our side gives it back.

What is pure of it lives here: a request as the store keeps it (``Measured``), how
many tokens are used, and what the student's page shows of them. Whether a request is
taken is ``course.handin.admit_measurement``: the same door rule as a hand-in's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from grader.core.perfresult import Performance
from grader.course.perfview import shown_performance
from grader.course.shown import OnDemand, ShownMeasurement

State = Literal["waiting", "measured", "failed", "refunded"]
#: a request whose token is given back: the measurement failed on our side
REFUNDED: State = "refunded"


@dataclass(frozen=True, slots=True)
class Measured:
    """One request as the store keeps it.

    :param token: which of the student's tokens for the assignment it took (1, 2, ...).
    :param spool_id: the submission it measures.
    :param state: ``waiting`` (not measured yet), ``measured``, ``failed`` (the
        submission's fault: a timed run failed), ``refunded`` (ours: the token is back).
    :param reason: why it failed or was refunded.
    :param performance: what the measurement gave, once measured.
    """

    id: int
    assignment: str
    student: str
    token: int
    spool_id: str
    requested_at: datetime
    state: State = "waiting"
    reason: str = ""
    performance: Performance | None = None
    finished_at: datetime | None = None


def used(requests: Sequence[Measured]) -> int:
    """The tokens ``requests`` (one student's, one assignment's) have used."""
    return sum(1 for m in requests if m.state != REFUNDED)


def on_demand_view(tokens: int, requests: Sequence[Measured]) -> OnDemand:
    """What an assignment's page shows of the student's requests: k of n tokens used,
    and each request, newest first, with its curve once measured."""
    shown = tuple(ShownMeasurement(
        m.token, m.spool_id, m.requested_at.isoformat(), m.state, m.reason,
        shown_performance(m.performance) if m.performance is not None else None)
        for m in sorted(requests, key=lambda m: (m.requested_at, m.token), reverse=True))
    return OnDemand(used(requests), tokens, shown)
