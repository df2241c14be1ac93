"""A finished submission's stamps, as the store returns them: what the live page,
traces, SWF and the planning models are computed from."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Finished:
    """One finished submission with its stamps (epoch seconds; None: unknown)."""

    student: str
    assignment: str
    state: str  # graded | quarantined
    verdict: str | None
    arrived: float
    started: float | None
    finished: float | None
    stored: float | None
    memory_kb: float | None = None
    cpu_s: float | None = None
    node: str | None = None  # where it was graded (the Slurm node, or this host)
    cpus: str | None = None  # the cores it was graded on
    claimed: float | None = None
    dispatched: float | None = None
    spool_id: str | None = None
    content_hash: str | None = None  # what was graded (trace-driven simulation keys)



def epoch(stamp: str | datetime | None) -> float | None:
    if stamp is None:
        return None
    if isinstance(stamp, datetime):
        return stamp.timestamp()
    return datetime.fromisoformat(stamp).timestamp()
