"""``valgrind --tool=cachegrind --cache-sim=yes --LL=...``: a *simulated* L3 of any
size, on any machine (the hardware-independent half of the L3 question)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.adapters.metrics.base import Availability
from grader.core.samples import Sample

CACHEGRIND_EVENTS = ("Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw")


@dataclass(frozen=True, slots=True)
class CachegrindRun:
    """The summary of one ``cachegrind.out`` file (one process)."""

    command: str
    ll_bytes: int | None
    counts: dict[str, int]

    @property
    def ll_refs(self) -> int:  # an LL access is an L1 miss
        return self.counts.get("I1mr", 0) + self.counts.get("D1mr", 0) + self.counts.get(
            "D1mw", 0)

    @property
    def ll_misses(self) -> int:
        return self.counts.get("ILmr", 0) + self.counts.get("DLmr", 0) + self.counts.get(
            "DLmw", 0)


def parse_cachegrind_out(text: str) -> CachegrindRun:
    """The ``desc:``, ``cmd:``, ``events:`` and ``summary:`` lines of a cachegrind.out."""
    command, ll, events, summary = "", None, [], []
    for line in text.splitlines():
        if line.startswith("cmd:"):
            command = line[4:].strip()
        elif line.startswith("desc: LL cache:"):
            m = re.search(r"(\d+) B", line)
            ll = int(m.group(1)) if m else None
        elif line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("summary:"):
            summary = [int(x) for x in line.split()[1:]]
    if not events or len(summary) != len(events):
        raise ValueError("not a cachegrind output file (no events/summary lines)")
    return CachegrindRun(command, ll, dict(zip(events, summary, strict=True)))


def ll_geometry(size_bytes: int, line: int = 64) -> tuple[int, int, int]:
    """(size, assoc, line) valgrind accepts: the set count must be a power of two.

    2.5 MB = 40960 lines -> 20-way x 2048 sets, as on many Intel server L3 slices."""
    lines = size_bytes // line
    if size_bytes % line or lines == 0:
        raise ValueError(f"LL size {size_bytes} B is not a multiple of the {line} B line")
    for assoc in (16, 20, 12, 24, 8, 32, 10, 14, 18, 11, 15, 22, 4, 2, 1):
        sets, rest = divmod(lines, assoc)
        if rest == 0 and sets & (sets - 1) == 0:
            return size_bytes, assoc, line
    raise ValueError(f"no associativity gives a power-of-two set count for {size_bytes} B")


class Cachegrind:
    """``valgrind --tool=cachegrind --cache-sim=yes --LL=...``: a *simulated* L3."""

    name = "cachegrind"

    def __init__(self, ll_bytes: int = int(2.5 * 2**20), valgrind: str = "valgrind") -> None:
        self.geometry = ll_geometry(ll_bytes)
        self.valgrind = valgrind

    def availability(self) -> Availability:
        if shutil.which(self.valgrind) is None:
            return Availability(self.name, False, "valgrind is not installed (Debian: valgrind)")
        size, assoc, line = self.geometry
        return Availability(self.name, True, f"simulated LL {size / 2**20:g} MiB, {assoc}-way, "
                            f"{line} B lines (a model, not the hardware)")

    def wrap(self, argv: Sequence[str], cores: Sequence[int], out: Path) -> list[str]:
        out.mkdir(parents=True, exist_ok=True)
        size, assoc, line = self.geometry
        return [self.valgrind, "--tool=cachegrind", "--cache-sim=yes",
                f"--LL={size},{assoc},{line}", "--trace-children=yes",
                f"--log-file={out}/valgrind.%p.log",
                f"--cachegrind-out-file={out}/cachegrind.out.%p", *argv]

    def runs(self, out: Path) -> list[CachegrindRun]:
        return [parse_cachegrind_out(f.read_text())
                for f in sorted(out.glob("cachegrind.out.*"))]

    def collect(self, out: Path) -> list[Sample]:
        total: dict[str, float] = {}
        ll = None
        for run in self.runs(out):
            ll = run.ll_bytes
            for k, v in run.counts.items():
                total[k] = total.get(k, 0) + v
            total["LLrefs"] = total.get("LLrefs", 0) + run.ll_refs
            total["LLmisses"] = total.get("LLmisses", 0) + run.ll_misses
        ctx = f"LL={ll}" if ll else ""
        return [Sample(self.name, k, v, "count", None, ctx) for k, v in sorted(total.items())]
