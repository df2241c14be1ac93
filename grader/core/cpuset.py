"""One CPU-list type: parse, format and query the CPUs a process may use.

The text form ``0-2,5`` is the one taskset, Slurm (``Cpus_allowed_list``,
``CPU_IDs``), resctrl (``cpus_list``), likwid and perf share, so every adapter
parses and prints CPU lists through this class.
"""

from __future__ import annotations

import os
from collections.abc import Iterable


class CpuSet(tuple[int, ...]):
    """Sorted, unique CPU ids; a tuple, so it passes wherever ``Sequence[int]`` does."""

    __slots__ = ()

    def __new__(cls, cpus: Iterable[int] = ()) -> CpuSet:
        ids = sorted(set(cpus))
        if any(c < 0 for c in ids):
            raise ValueError(f"CPU ids must be >= 0, not {ids}")
        return super().__new__(cls, ids)

    @classmethod
    def parse(cls, text: str) -> CpuSet:
        """``"0-2,5"`` -> CpuSet(0, 1, 2, 5).

        :raises ValueError: naming the part that is not a CPU id or range.
        """
        out: list[int] = []
        for part in text.strip().split(","):
            part = part.strip()
            if not part:
                continue
            lo, sep, hi = part.partition("-")
            try:
                a = int(lo)
                b = int(hi) if sep else a
            except ValueError:
                raise ValueError(f"not a CPU list: {text!r} (at {part!r}; e.g. 0-3,7)") from None
            if b < a:
                raise ValueError(f"not a CPU list: {text!r} (range {part!r} runs backwards)")
            out.extend(range(a, b + 1))
        return cls(out)

    @classmethod
    def allowed(cls) -> CpuSet:
        """The CPUs this process may run on (Slurm's allocation inside an array task)."""
        return cls(os.sched_getaffinity(0))

    @property
    def first(self) -> int:
        """The lowest CPU id (unique per task on a node: each task owns its cores)."""
        if not self:
            raise ValueError("an empty CPU set has no first CPU")
        return self[0]

    def __str__(self) -> str:
        parts: list[str] = []
        i = 0
        while i < len(self):
            j = i
            while j + 1 < len(self) and self[j + 1] == self[j] + 1:
                j += 1
            parts.append(str(self[i]) if i == j else f"{self[i]}-{self[j]}")
            i = j + 1
        return ",".join(parts)

    def __repr__(self) -> str:
        return f"CpuSet({str(self)!r})"
