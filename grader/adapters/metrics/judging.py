"""The counters of a performance test's cache reading (``judge.ports.CacheCounter``):
this node's hardware counters where a source is usable (likwid, then perf: counting
the run's cores from outside the sandbox, as an array task's shard is counted), and
otherwise cachegrind inside the grading image with a simulated L3, the reading saying
why there are no hardware counters. Chosen once, at the first reading a judge takes
(``NodeCounter``), so a judge that takes none probes nothing."""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Iterator, Sequence
from pathlib import Path

from grader.adapters.metrics import hardware_source
from grader.adapters.metrics.base import MetricsSource, counting
from grader.adapters.metrics.cachegrind import ll_geometry, parse_cachegrind_out
from grader.core.perfcache import CacheEvents, Source
from grader.core.samples import Sample
from grader.judge.ports import COUNTERS, CacheCounter

log = logging.getLogger(__name__)
VALGRIND = "valgrind"
#: perf's generic events: L3 misses are the loads and stores that missed the LLC
PERF_MISSES, PERF_ACCESSES = ("LLC-load-misses", "LLC-store-misses"), ("LLC-loads",
                                                                        "LLC-stores")
#: instructions, as perf and likwid name them
INSTRUCTIONS = ("instructions", "INSTR_RETIRED_ANY", "RETIRED_INSTRUCTIONS")


def events_of(samples: Sequence[Sample]) -> CacheEvents:
    """A hardware run's counts from the samples of its cores (totals: ``cpu`` None,
    or perf's, which has no per-CPU rows). likwid's L3 groups name their events per
    CPU family: those with MISS in the name are misses; the accesses are the other L3
    events, or the hits and the misses where those are HIT events.

    :raises ValueError: no L3 miss event among them.
    """
    total: dict[str, float] = {}
    for s in samples:
        if (s.cpu is None and s.unit == "count") or s.source == "perf":
            total[s.event] = total.get(s.event, 0.0) + s.value
    if any(n in total for n in PERF_MISSES):
        misses = sum(total.get(n, 0.0) for n in PERF_MISSES)
        found = [n for n in PERF_ACCESSES if n in total]
        accesses = sum(total[n] for n in found) if found else None
    else:
        l3 = {n.upper(): v for n, v in total.items() if "L3" in n.upper() or "LLC" in n.upper()}
        missed = [v for n, v in l3.items() if "MISS" in n]
        if not missed:
            raise ValueError(f"no L3 miss event among {sorted(total) or 'no events'}")
        misses = sum(missed)
        hits = [v for n, v in l3.items() if "HIT" in n and "MISS" not in n]
        other = [v for n, v in l3.items() if "HIT" not in n and "MISS" not in n]
        accesses = sum(other) if other else sum(hits) + misses if hits else None
    instructions = next((total[n] for n in INSTRUCTIONS if n in total), None)
    return CacheEvents(misses, accesses, instructions)


def fitted(l3_bytes: int) -> tuple[int, int, int]:
    """An LL geometry valgrind takes for about ``l3_bytes``: that size where one fits
    (``ll_geometry``), else the largest 16-way one below it (a power-of-two set count)."""
    try:
        return ll_geometry(l3_bytes)
    except ValueError:
        sets = 2 ** max(0, math.floor(math.log2(max(1, l3_bytes // (64 * 16)))))
        return ll_geometry(sets * 16 * 64)


class HardwareCounter:
    """A hardware source counting the run's cores from outside the sandbox."""

    probe: tuple[str, ...] = ()

    def __init__(self, src: MetricsSource) -> None:
        self.src = src
        self.source: Source = "likwid" if src.name == "likwid" else "perf"
        self.note = f"the hardware counters of the run's cores ({src.name})"
        self._counted: dict[Path, list[Sample]] = {}

    def wrap(self, argv: Sequence[str], l3_bytes: int) -> list[str]:
        return list(argv)

    @contextlib.contextmanager
    def counting(self, cpus: Sequence[int], out: Path) -> Iterator[None]:
        with counting(self.src, cpus, out / "counts") as samples:
            yield
        self._counted[out] = samples

    def read(self, out: Path) -> CacheEvents:
        return events_of(self._counted.pop(out, []))


class SimulatedCounter:
    """cachegrind in the grading image: an L3 of any size, on any node, at about 50
    times the run's time; every process of the run counted (``--trace-children``)."""

    source: Source = "cachegrind"
    probe = (VALGRIND, "--version")

    def __init__(self, tried: Sequence[str] = ("likwid", "perf")) -> None:
        self.note = (f"no hardware counters on this node ({' and '.join(tried)} found "
                     "none usable): cachegrind's simulated L3")

    def wrap(self, argv: Sequence[str], l3_bytes: int) -> list[str]:
        size, assoc, line = fitted(l3_bytes)
        return [VALGRIND, "--tool=cachegrind", "--cache-sim=yes", f"--LL={size},{assoc},{line}",
                "--trace-children=yes", "--fair-sched=yes",
                f"--log-file={COUNTERS}/valgrind.%p.log",
                f"--cachegrind-out-file={COUNTERS}/cachegrind.out.%p", *argv]

    def counting(self, cpus: Sequence[int], out: Path) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()

    def read(self, out: Path) -> CacheEvents:
        runs = [parse_cachegrind_out(f.read_text()) for f in sorted(out.glob("cachegrind.out.*"))]
        if not runs:
            raise ValueError("cachegrind wrote no output")
        instructions = sum(r.counts.get("Ir", 0) for r in runs)
        return CacheEvents(float(sum(r.ll_misses for r in runs)),
                           float(sum(r.ll_refs for r in runs)), float(instructions))


class NodeCounter:
    """This node's counter, chosen at first use: a usable hardware source (likwid, then
    perf), else cachegrind (saying why no hardware source was usable)."""

    def __init__(self) -> None:
        self._chosen: CacheCounter | None = None

    @property
    def chosen(self) -> CacheCounter:
        if self._chosen is None:
            src, report = hardware_source()
            if src is not None:
                self._chosen = HardwareCounter(src)
            else:
                log.info("cache readings by cachegrind: %s",
                         "; ".join(f"{a.source}: {a.reason}" for a in report))
                self._chosen = SimulatedCounter([a.source for a in report])
        return self._chosen

    @property
    def source(self) -> Source:
        return self.chosen.source

    @property
    def note(self) -> str:
        return self.chosen.note

    @property
    def probe(self) -> tuple[str, ...]:
        return self.chosen.probe

    def wrap(self, argv: Sequence[str], l3_bytes: int) -> list[str]:
        return self.chosen.wrap(argv, l3_bytes)

    def counting(self, cpus: Sequence[int], out: Path
                 ) -> contextlib.AbstractContextManager[None]:
        return self.chosen.counting(cpus, out)

    def read(self, out: Path) -> CacheEvents:
        return self.chosen.read(out)
