"""A submission's performance points as a pure function of its measured times.

The figures, at a core count N (T is a series' median time, t_i one round's time):

- ``time_ratio(N)`` = median over rounds i of t_sub,i / t_ref,i (each round ran the
  reference and the submission back to back on the same cores, so a slow spell of
  the node slows both and cancels);
- ``throughput_ratio(N)`` = median of t_ref,i / t_sub,i (the same work: its inverse);
- ``speedup(N)`` = T_base(1) / T_sub(N), strong scaling, where ``base`` is the
  submission itself (``baseline: self``, CS267's) or the reference (``reference``);
- ``efficiency(N)`` = speedup(N) / N for strong scaling, T_base(1) / T_sub(N) for weak
  scaling (each N with inputs N times as large: ideal 1).

An item earns its points times the percentage its map gives the figure
(``core.perfspec.PointsMap``). Correctness gates performance: a submission not
accepted on the correctness tests (or one whose timed run failed) earns none.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from grader.core.perfresult import ItemScore, Measurement, Performance, Series
from grader.core.perfspec import Item, PerformanceSpec, Repetitions


def figure(spec: PerformanceSpec, item: Item, by_cores: Mapping[int, Measurement]
           ) -> float | None:
    """``item``'s figure from the measurements by core count (None: not measured)."""
    m = by_cores.get(item.cores)
    if m is None or not m.ratios:
        return None
    if item.metric == "time_ratio":
        return statistics.median(m.ratios)
    if item.metric == "throughput_ratio":
        return statistics.median(1 / r for r in m.ratios)
    base = by_cores.get(1)
    if base is None or not base.submission.times_s:
        return None
    t1 = (base.submission if item.baseline == "self" else base.reference).median_s
    tn = m.submission.median_s
    if item.metric == "speedup":
        return t1 / tn
    return t1 / tn if spec.scaling == "weak" else t1 / (tn * item.cores)


def score(spec: PerformanceSpec, measurements: Sequence[Measurement], gate: str = ""
          ) -> Performance:
    """The performance section: each item's figure and points, their sum; none when
    ``gate`` says why not (a wrong answer, a failed timed run)."""
    by_cores = {m.cores: m for m in measurements}
    items = []
    for item in spec.items:
        x = None if gate else figure(spec, item, by_cores)
        percent = 0.0 if x is None else item.scale.percent(x)
        items.append(ItemScore(item.label, item.metric, item.cores, x, percent,
                               item.points * percent / 100, item.points,
                               item.scale.describe()))
    points = 0.0 if gate else sum(i.points for i in items)
    return Performance(tuple(measurements), tuple(items), round(points, 6), spec.points,
                       gate, spec.scaling)


def enough(reference: Series, submission: Series, reps: Repetitions) -> bool:
    """Whether the rounds at one core count may stop: ``max`` rounds, or ``min`` and
    both series' CI95 within ``ci`` of their means."""
    n = min(reference.runs, submission.runs)
    if n >= reps.max:
        return True
    return n >= reps.min and reference.precise(reps.ci) and submission.precise(reps.ci)
