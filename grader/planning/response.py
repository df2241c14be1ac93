"""Response-time analysis of a served run: what students waited, where the time
went, and whether the measurements obey the operational laws.

From each finished submission's stamps: response R = stored - arrived (what the
student waits for feedback), queueing = started - arrived (claim, dispatch, array
start), service = finished - started (grading), store = stored - finished.

Checks against the laws (Denning & Buzen's operational analysis, as in the seeds'
middleware report):

* Little's law L = X * R: L is the backlog sampled on a grid over the run (what
  a monitor would see), X the completions per second, R the mean response.
* The interactive response-time law R = N/X - Z for a closed loop of N students
  with think time Z: X from each student's cycles (arrival to next arrival), so
  the start and end of the run do not bias it; R measured over the same cycles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from grader.core.finished import Finished

PERCENTILES = (50, 90, 95, 99)


def _dist(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {}
    a = np.asarray(values, dtype=float)
    out = {f"p{p}": float(np.percentile(a, p)) for p in PERCENTILES}
    out["mean"] = float(a.mean())
    out["max"] = float(a.max())
    return out


@dataclass
class ClosedLoopCheck:
    """R measured vs the interactive response-time law's N/X - Z."""

    students: int
    think_s: float
    throughput: float  # completions per second, from the students' cycles
    response_measured: float
    response_law: float

    @property
    def error(self) -> float:
        """|measured - law| / measured."""
        return abs(self.response_measured - self.response_law) / max(self.response_measured,
                                                                    1e-9)


@dataclass
class Analysis:
    """The response-time report of one run."""

    count: int
    graded: int
    quarantined: int
    window_s: float
    throughput: float  # completions per second over the window
    response: dict[str, float]
    queueing: dict[str, float]
    service: dict[str, float]
    storing: dict[str, float]
    little_l_sampled: float  # mean backlog sampled on a grid
    little_xr: float  # X * mean R
    utilization: float | None  # busy core-seconds / (cores * window)
    verdicts: dict[str, int] = field(default_factory=dict)
    over_time: list[dict[str, float]] = field(default_factory=list)
    by_node: dict[str, float] = field(default_factory=dict)  # node -> busy seconds
    closed: ClosedLoopCheck | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k != "closed"}
        if self.closed is not None:
            d["closed"] = {**self.closed.__dict__, "error": self.closed.error}
        return d


def analyse(rows: Sequence[Finished], *, cores: int | None = None,
            students: int | None = None, think_s: float | None = None,
            bin_s: float | None = None) -> Analysis:
    """The analysis of ``rows`` (one run); with ``students`` and ``think_s`` also the
    closed-loop check.

    :raises ValueError: without any finished submission.
    """
    done = [r for r in rows if r.stored is not None]
    if not done:
        raise ValueError("no finished submissions to analyse")
    t0 = min(r.arrived for r in done)
    t1 = max(r.stored for r in done if r.stored is not None)
    window = max(t1 - t0, 1e-9)
    resp = [r.stored - r.arrived for r in done if r.stored is not None]
    graded = [r for r in done if r.started is not None and r.finished is not None]
    queue = [r.started - r.arrived for r in graded if r.started is not None]
    service = [r.finished - r.started for r in graded
               if r.finished is not None and r.started is not None]
    storing = [r.stored - r.finished for r in graded
               if r.stored is not None and r.finished is not None]
    x = len(done) / window
    grid = np.linspace(t0, t1, 200)
    arr = np.array([r.arrived for r in done])
    sto = np.array([r.stored for r in done], dtype=float)
    backlog = [(float(np.sum((arr <= t) & (sto > t)))) for t in grid]
    busy = sum(service)
    verdicts: dict[str, int] = {}
    for r in done:
        key = r.verdict or r.state
        verdicts[key] = verdicts.get(key, 0) + 1
    by_node: dict[str, float] = {}
    for r in graded:
        if r.finished is not None and r.started is not None:
            node = r.node or "?"
            by_node[node] = by_node.get(node, 0.0) + r.finished - r.started
    a = Analysis(
        count=len(done), graded=sum(r.state == "graded" for r in done),
        quarantined=sum(r.state == "quarantined" for r in done), window_s=window,
        throughput=x, response=_dist(resp), queueing=_dist(queue), service=_dist(service),
        storing=_dist(storing), little_l_sampled=float(np.mean(backlog)),
        little_xr=x * float(np.mean(resp)),
        utilization=busy / (cores * window) if cores else None, verdicts=verdicts,
        over_time=_over_time(done, t0, t1, bin_s), by_node=by_node)
    if students is not None and think_s is not None:
        a.closed = closed_loop_check(done, students, think_s)
    return a


def _over_time(done: Sequence[Finished], t0: float, t1: float, bin_s: float | None
               ) -> list[dict[str, float]]:
    """Per time bin (by when the result was stored): completions per second and the
    p50/p95 response of what completed in it."""
    span = max(t1 - t0, 1e-9)
    width = bin_s or max(span / 30, 1.0)
    bins: dict[int, list[float]] = {}
    for r in done:
        if r.stored is not None:
            bins.setdefault(int((r.stored - t0) // width), []).append(r.stored - r.arrived)
    out = []
    for b in range(int(span // width) + 1):
        vals = bins.get(b, [])
        out.append({"t": b * width, "throughput": len(vals) / width,
                    "p50": float(np.percentile(vals, 50)) if vals else float("nan"),
                    "p95": float(np.percentile(vals, 95)) if vals else float("nan")})
    return out


def closed_loop_check(done: Sequence[Finished], students: int, think_s: float
                      ) -> ClosedLoopCheck:
    """The interactive response-time law on a closed-loop run: each student's cycles
    (one arrival to the next = response + think) give its throughput; X is their
    sum, and R the mean response of the attempts that start those cycles."""
    by: dict[str, list[Finished]] = {}
    for r in done:
        by.setdefault(r.student, []).append(r)
    x = 0.0
    resp: list[float] = []
    for rs in by.values():
        rs.sort(key=lambda r: r.arrived)
        if len(rs) < 2:
            continue
        x += (len(rs) - 1) / max(rs[-1].arrived - rs[0].arrived, 1e-9)
        resp += [r.stored - r.arrived for r in rs[:-1] if r.stored is not None]
    if not resp or x <= 0:
        raise ValueError("the closed-loop check needs students with two attempts or more")
    r_meas = float(np.mean(resp))
    return ClosedLoopCheck(students, think_s, x, r_meas, students / x - think_s)
