"""What course staff watch during a deadline: one snapshot of the last minutes,
computed from the finished submissions' stamps and the spool's backlog.

The same snapshot feeds the web page (``adapters.web``) and ``gradeline status
--watch``, so both always say the same thing.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from grader.core.finished import Finished
from grader.course.staffview import Bin, Failure, Snapshot


def _pct(vals: Sequence[float], p: float) -> float | None:
    return float(np.percentile(vals, p)) if vals else None


def snapshot(course: str, rows: Sequence[Finished], *, waiting: int, in_progress: int,
             window_s: float = 600.0, bins: int = 20, now: float | None = None) -> Snapshot:
    """The snapshot of ``rows`` (finished submissions; those stored within the last
    ``window_s`` count) with the spool's backlog counts."""
    now = time.time() if now is None else now
    t0 = now - window_s
    recent = [r for r in rows if r.stored is not None and r.stored >= t0]
    resp = [r.stored - r.arrived for r in recent if r.stored is not None]
    width = window_s / bins
    series: list[Bin] = []
    for b in range(bins):
        lo = t0 + b * width
        vals = [r.stored - r.arrived for r in recent
                if r.stored is not None and lo <= r.stored < lo + width]
        series.append(Bin(lo - now, len(vals) * 60 / width, _pct(vals, 50), _pct(vals, 95)))
    verdicts: dict[str, int] = {}
    by_node: dict[str, int] = {}
    for r in recent:
        key = r.verdict or r.state
        verdicts[key] = verdicts.get(key, 0) + 1
        if r.node:
            where = f"{r.node} cpus {r.cpus}" if r.cpus else r.node
            by_node[where] = by_node.get(where, 0) + 1
    failures = [Failure(r.student, r.assignment, r.verdict or r.state,
                        time.strftime("%H:%M:%S", time.localtime(r.stored or r.arrived)))
                for r in sorted(recent, key=lambda r: r.stored or 0.0, reverse=True)
                if r.verdict == "JE" or r.state == "quarantined"][:10]
    return Snapshot(course, now, window_s, waiting, in_progress, len(recent),
                    len(recent) * 60 / window_s, _pct(resp, 50), _pct(resp, 95),
                    dict(sorted(verdicts.items())), tuple(series),
                    dict(sorted(by_node.items())), tuple(failures))


def text(s: Snapshot) -> str:
    """The snapshot for a terminal (``gradeline status --watch``)."""
    def sec(v: float | None) -> str:
        return "-" if v is None else f"{v:.1f} s"

    lines = [f"course {s.course} at {time.strftime('%H:%M:%S', time.localtime(s.at))} "
             f"(last {s.window_s / 60:g} min)",
             f"  backlog: {s.waiting} waiting, {s.in_progress} in progress",
             f"  stored {s.stored}: {s.throughput_per_min:.1f}/min; feedback latency p50 "
             f"{sec(s.p50_s)}, p95 {sec(s.p95_s)}",
             "  verdicts: " + (", ".join(f"{k} {v}" for k, v in s.verdicts.items()) or "-")]
    peak = max((p.per_min for p in s.series), default=0.0)
    bars = "".join(" ▁▂▃▄▅▆▇█"[min(8, round(8 * p.per_min / peak))] if peak
                   else " " for p in s.series)
    lines.append(f"  throughput |{bars}| now")
    for node, n in s.by_node.items():
        lines.append(f"  {node}: {n} results")
    for f in s.failures:
        lines.append(f"  ! {f.when} {f.student} {f.assignment}: {f.what}")
    return "\n".join(lines)
