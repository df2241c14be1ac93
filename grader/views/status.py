"""Where a course's submissions are: per assignment, how many wait, are being
graded, are graded (by verdict) or quarantined (with reasons) -- from the spool and,
when it answers, the store."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from grader.adapters.spool import Entry, Spool

STATES = ("new", "claimed", "graded", "quarantined")


@dataclass
class Status:
    """Counts per assignment (states and verdicts), and the quarantine reasons."""

    counts: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    reasons: list[tuple[str, str, str, str]] = field(default_factory=list)  # a, id, code, msg


def _assignment(e: Entry) -> str:
    meta = e.meta_or_none()
    return meta.assignment if meta is not None else "?"


def course_status(spool: Spool, stored: Sequence[tuple[str, str, int]] | None) -> Status:
    """The spool's view plus the store's rows (assignment, verdict or state, count)."""
    st = Status()
    claimed = [e for b in spool.batches() for e in spool.batch_entries(b)]
    for state, entries in (("new", spool.new_entries()), ("claimed", claimed)):
        for e in entries:
            st.counts[_assignment(e)][state] += 1
    for e, reason in spool.quarantined():
        a = _assignment(e)
        st.counts[a]["quarantined"] += 1
        st.reasons.append((a, e.id, str(reason.get("code")), str(reason.get("message"))))
    for a, v, n in stored or ():
        if v != "quarantined":  # the spool already counted those
            st.counts[a]["graded"] += n
            st.counts[a][v] += n
    return st
