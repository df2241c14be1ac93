"""What a student sees of their performance tests (``core.perfresult.Performance``):
each core count's times with their confidence intervals, the speedup curve against the
reference's and the ideal line, the items' points, and one line that reads the figures
for them ("slower on 2 cores than on 1: ..."). Pure: the page draws it."""

from __future__ import annotations

import math

from grader.core.perfresult import Performance
from grader.course.shown import ShownItem, ShownPerformance, ShownTiming

#: the share of the program that the extra cores sped up, by Amdahl's law from its
#: speedup S on N times the cores, (1 - 1/S) / (1 - 1/N): at or above GOOD it reads as
#: scaling, below WEAK as most of its time not using the extra cores
GOOD, WEAK = 0.9, 0.5
#: what each fairness measure (``core.perfresult.FACTS``) is, in the student's words
MEASURES = {"cores": "cores of its own", "smt": "idle SMT siblings",
            "l3_partition": "an L3 partition of its own",
            "governor": "the performance CPU governor", "turbo": "turbo off",
            "aslr": "address randomisation off", "thp": "transparent huge pages off",
            "swap": "no swap", "load": "a quiet node"}


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def shown_performance(p: Performance) -> ShownPerformance:
    """The student's view of ``p`` (see the module docstring)."""
    timings = []
    ms = [m for m in p.measurements if m.submission.times_s and m.reference.times_s]
    if ms:
        base = ms[0]
        t1, ci1 = base.submission.median_s, base.submission.ci_s
        r1 = base.reference.median_s
        for m in ms:
            tn, cin = m.submission.median_s, m.submission.ci_s
            s = t1 / tn
            rel = math.hypot(ci1 / t1 if math.isfinite(ci1) else 0.0,
                             cin / tn if math.isfinite(cin) else 0.0)
            timings.append(ShownTiming(
                m.cores, round(tn, 6), _finite(round(cin, 6)), round(m.reference.median_s, 6),
                _finite(round(m.reference.ci_s, 6)), m.submission.runs, round(s, 4),
                round(s * rel, 4) if m is not base else None,
                round(r1 / m.reference.median_s, 4)))
    items = tuple(ShownItem(i.label, None if i.figure is None else round(i.figure, 4),
                            round(i.points, 3), i.max_points, i.rule) for i in p.items)
    return ShownPerformance(round(p.points, 3), p.max_points, p.gate, tuple(timings), items,
                            reading(tuple(timings), p.gate),
                            tuple(MEASURES.get(n, n) for n in p.not_in_force))


def reading(timings: tuple[ShownTiming, ...], gate: str = "") -> str:
    """One line that reads the figures for the student."""
    if gate:
        return f"no performance points: {gate}"
    if len(timings) < 2:
        return "timed on one core count only: no speedup to read"
    first, last = timings[0], timings[-1]
    n = last.cores / first.cores
    s, ref = last.speedup, last.reference_speedup
    where = f"on {last.cores} cores"
    if s < 1:
        return (f"slower {where} than on {first.cores} ({s:.2f}x): the threads wait for "
                "each other (a lock held too long, cores writing the same cache line, more "
                "threads than cores)")
    share = (1 - 1 / s) / (1 - 1 / n)
    if share >= GOOD:
        return f"{s:.2f}x faster {where} (ideal {n:g}x, the reference {ref:.2f}x): it scales"
    if share < WEAK:
        return (f"only {s:.2f}x faster {where} (ideal {n:g}x, the reference {ref:.2f}x): "
                "most of its time does not use the extra cores (serial work, or too "
                "little for each thread)")
    return (f"{s:.2f}x faster {where} (ideal {n:g}x, the reference {ref:.2f}x): some of "
            "its time does not use the extra cores")
