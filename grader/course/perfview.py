"""What a student sees of their performance tests (``core.perfresult.Performance``):
each core count's times with their confidence intervals, the speedup curve against the
reference's and the ideal line, the items' points, and one line that reads the figures
for them ("slower on 2 cores than on 1: ..."); and where the test has a cache reading
(``core.perfcache``), its counts and one line that reads them ("L3 misses grow 3.1x
from 1 to 4 cores: ..."). Pure: the page draws it."""

from __future__ import annotations

import math

from grader.core.perfcache import CacheReading
from grader.core.perfresult import Performance
from grader.course.shown import (
    ShownCache,
    ShownCacheRow,
    ShownItem,
    ShownPerformance,
    ShownTiming,
)

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
#: L3 misses on the most cores over the fewest's (the same work): at or above GROWS
#: the working set no longer fits; above MORE somewhat more goes to memory; below
#: FEWER the cores' L3 together holds more of it; between, level
GROWS, MORE, FEWER = 1.5, 1.15, 1 / 1.15


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
                            tuple(MEASURES.get(n, n) for n in p.not_in_force),
                            shown_cache(p.cache) if p.cache is not None else None)


def _round(x: float | None, digits: int = 3) -> float | None:
    return None if x is None else round(x, digits)


def shown_cache(c: CacheReading) -> ShownCache:
    """The student's view of a cache reading: its counts, its source and one line."""
    mine, theirs = dict(c.inflations("submission")), dict(c.inflations("reference"))
    rows = tuple(ShownCacheRow(k.cores, k.l3_bytes, k.submission.l3_misses,
                               k.submission.l3_accesses, _round(mine[k.cores]),
                               k.reference.l3_misses, _round(theirs[k.cores]))
                 for k in c.counts)
    said = cache_reading(rows, c.failed)
    if c.failed and len(rows) >= 2:
        said += f" (cut short: {c.failed})"
    return ShownCache(c.source, c.note, c.input, said, rows)


def cache_reading(rows: tuple[ShownCacheRow, ...], failed: str = "") -> str:
    """One line that reads the L3 misses' growth from the fewest cores to the most."""
    if len(rows) < 2:
        why = f": {failed}" if failed else " (one core count only: no growth to read)"
        return f"no cache reading{why}"
    first, last = rows[0], rows[-1]
    f, ref = last.inflation, last.reference_inflation
    span = f"from {first.cores} to {last.cores} cores"
    if f is None:
        return f"no L3 misses on {first.cores} core{'s' * (first.cores != 1)}: no growth " \
               "to read (the cache input fits the caches whole)"
    theirs = f"the reference's {ref:.2f}x" if ref is not None else "the reference missed none"
    if f >= GROWS:
        return (f"L3 misses grow {f:.1f}x {span} ({theirs}): the working set no longer "
                "fits the L3 per core")
    if f > MORE:
        return (f"L3 misses grow {f:.2f}x {span} ({theirs}): somewhat more goes to memory "
                "on more cores")
    if f < FEWER:
        return (f"L3 misses fall to {f:.2f}x {span} ({theirs}): the cores' L3 together "
                "holds more of the working set")
    return f"L3 misses stay level {span} ({f:.2f}x; {theirs}): the working set fits the " \
           "L3 per core"


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
