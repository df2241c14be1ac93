"""Hand-in limits: whether one more hand-in is allowed now, from the course's limits and
the times of the student's earlier hand-ins of the assignment -- a pure function of
that history, so the desk, ``mine`` and a replayed trace all get the same answer.

The token bucket starts full (``burst`` tokens), gains ``per_hour`` tokens an hour up
to ``burst``, and every hand-in (deferred ones too) takes one; a hand-in needs a whole
token. The other limits are a count (``max_submissions``) and a least time between
two hand-ins (``min_interval``). Past any of them, the course's ``past_limit`` says
what happens: refused (with the time the next one is allowed, where one ever is), or
taken but deferred (graded after everyone else's, feedback after the deadline).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from grader.course.spec import LimitsSpec


@dataclass(frozen=True, slots=True)
class Allowance:
    """What the limits say of a hand-in now.

    :param allowed: it is taken (perhaps deferred).
    :param deferred: taken past a limit: graded last, its feedback after the deadline.
    :param why: which limit it met, in words ("" when none).
    :param next_at: when a hand-in is next allowed within the limits (None: now, or
        never again for ``max_submissions``).
    """

    allowed: bool
    deferred: bool = False
    why: str = ""
    next_at: datetime | None = None
    used: int = 0  # hand-ins so far
    left: int | None = None  # of max_submissions (None: no such limit)


def _tokens(limits: LimitsSpec, times: Sequence[datetime], now: datetime) -> float:
    """The bucket's tokens at ``now`` after the hand-ins at ``times`` (sorted)."""
    assert limits.per_hour is not None
    burst = float(limits.burst or max(1, math.ceil(limits.per_hour)))
    rate = limits.per_hour / 3600.0
    tokens, last = burst, None
    for t in times:
        if last is not None:
            tokens = min(burst, tokens + (t - last).total_seconds() * rate)
        tokens = max(0.0, tokens - 1.0)
        last = t
    if last is not None:
        tokens = min(burst, tokens + (now - last).total_seconds() * rate)
    return tokens


def allowance(limits: LimitsSpec, earlier: Sequence[datetime], now: datetime) -> Allowance:
    """Whether a hand-in at ``now`` is within ``limits``, given the student's ``earlier``
    hand-ins of the assignment (any order)."""
    times = sorted(t for t in earlier if t <= now)
    used = len(times)
    left = None if limits.max_submissions is None else max(0, limits.max_submissions - used)
    over: list[tuple[str, datetime | None]] = []
    if left == 0:
        over.append((f"you have handed in {used} of the {limits.max_submissions} "
                     "submissions allowed", None))
    if limits.min_interval is not None and times and now - times[-1] < limits.min_interval:
        over.append((f"at most one hand-in every {span(limits.min_interval)}",
                     times[-1] + limits.min_interval))
    if limits.per_hour is not None:
        tokens = _tokens(limits, times, now)
        if tokens < 1.0:
            wait = (1.0 - tokens) / (limits.per_hour / 3600.0)
            over.append((f"at most {limits.per_hour:g} hand-ins an hour (a burst of "
                         f"{limits.burst or max(1, math.ceil(limits.per_hour))})",
                         now + timedelta(seconds=math.ceil(wait))))
    if not over:
        return Allowance(True, used=used, left=left)
    why = "; ".join(w for w, _ in over)
    ends = [n for _, n in over]
    next_at = None if None in ends else max(n for n in ends if n is not None)
    if limits.past_limit == "defer":
        return Allowance(True, True, why, next_at, used, left)
    return Allowance(False, False, why, next_at, used, left)


def span(d: timedelta) -> str:
    """A duration as a person says it (2 h, 90 min, 45 s)."""
    s = d.total_seconds()
    if s % 3600 == 0:
        return f"{s / 3600:g} h"
    if s % 60 == 0:
        return f"{s / 60:g} min"
    return f"{s:g} s"
