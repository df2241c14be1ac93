"""The cache reading of a performance test: the submission and the reference run once
per core count on a small input under the counters a node has -- hardware counters of
its cores (LIKWID, perf) or, without them, cachegrind's simulated L3 -- and the
counts say whether more cores make the program miss the L3 more for the same work.

The figure is the thesis's inflation factor (eq. 8.1), Count(N) / (w(N) * Count(1)):
the count on N cores over the count on one, per unit of work. The thesis ran N copies
of a program, N times the work (w(N) = N); a cache reading runs one program on the
same small input at every N (w(N) = 1), so the factor is Count(N) / Count(1), and 1
means the extra cores cost the caches nothing. Measured from the fewest cores timed
when that is not 1. Pure: the judge counts, ``course.perfview`` reads it to the
student.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

Source = Literal["likwid", "perf", "cachegrind"]
SOURCES: tuple[Source, ...] = ("likwid", "perf", "cachegrind")


def inflation(count_n: float, count_1: float, work: float = 1.0) -> float | None:
    """Count(N) / (work * Count(1)); ``work`` is how much more work the run on N cores
    did (1: the same input; N: N copies, the thesis's form). None where the base
    counted nothing (no ratio to read)."""
    if not count_1 > 0 or not work > 0 or not math.isfinite(count_n):
        return None
    return count_n / (work * count_1)


@dataclass(frozen=True, slots=True)
class CacheEvents:
    """One run's counts (events, not rates).

    :param l3_misses: L3 (last-level cache) misses: reads and writes that went to
        memory. A simulator counts its LL cache's; a hardware counter its L3's.
    :param l3_accesses: L3 accesses (L1/L2 misses); None where not counted.
    :param instructions: instructions executed; None where not counted.
    """

    l3_misses: float
    l3_accesses: float | None = None
    instructions: float | None = None

    @property
    def memory_bytes(self) -> float:
        """What the misses moved from memory, a 64-byte line each."""
        return self.l3_misses * 64

    def to_json(self) -> dict[str, Any]:
        return {"l3_misses": self.l3_misses, "l3_accesses": self.l3_accesses,
                "instructions": self.instructions}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> CacheEvents:
        def opt(key: str) -> float | None:
            v = d.get(key)
            return None if v is None else float(v)
        return cls(float(d["l3_misses"]), opt("l3_accesses"), opt("instructions"))


@dataclass(frozen=True, slots=True)
class CacheCount:
    """Both programs on the cache input at one core count.

    :param l3_bytes: the simulated L3's size at this count (the L3 per core times the
        cores); None for hardware counters (the node's own L3).
    """

    cores: int
    submission: CacheEvents
    reference: CacheEvents
    l3_bytes: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"cores": self.cores, "l3_bytes": self.l3_bytes,
                "submission": self.submission.to_json(),
                "reference": self.reference.to_json()}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> CacheCount:
        l3 = d.get("l3_bytes")
        return cls(int(d["cores"]), CacheEvents.from_json(d["submission"]),
                   CacheEvents.from_json(d["reference"]), None if l3 is None else int(l3))


@dataclass(frozen=True, slots=True)
class CacheReading:
    """What the counters said of both programs on the cache input.

    :param source: which counters: ``likwid``, ``perf`` or ``cachegrind``.
    :param note: where they came from, in words, saying so where the node has no
        hardware counters ("no hardware counters here (...): cachegrind's simulated
        L3 ...").
    :param input: the cache input's file name.
    :param failed: why the reading stopped short ("" when every count was taken); a
        cache reading never gates points.
    """

    source: Source
    note: str
    input: str
    counts: tuple[CacheCount, ...] = ()
    failed: str = ""

    @property
    def simulated(self) -> bool:
        return self.source == "cachegrind"

    def inflations(self, program: Literal["submission", "reference"]
                   ) -> tuple[tuple[int, float | None], ...]:
        """(cores, L3 misses inflation over the fewest cores') for ``program``."""
        if not self.counts:
            return ()
        base = getattr(self.counts[0], program).l3_misses
        return tuple((c.cores, inflation(getattr(c, program).l3_misses, base))
                     for c in self.counts)

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "note": self.note, "input": self.input,
                "failed": self.failed, "counts": [c.to_json() for c in self.counts]}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> CacheReading:
        source = d.get("source")
        if source not in SOURCES:
            raise ValueError(f"cache reading: unknown source {source!r}")
        return cls(cast(Source, source), str(d.get("note", "")), str(d.get("input", "")),
                   tuple(CacheCount.from_json(c) for c in d.get("counts", ())),
                   str(d.get("failed", "")))
