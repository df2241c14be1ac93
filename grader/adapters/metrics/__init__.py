"""Hardware and simulated L3/CPU event counts behind one interface (``base``):
likwid and perf (hardware counters of whole cores) and cachegrind (simulated).
Every sample carries its source."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from grader.adapters.metrics.base import Availability, MetricsSource
from grader.adapters.metrics.cachegrind import Cachegrind
from grader.adapters.metrics.likwid import Likwid
from grader.adapters.metrics.perf import PerfStat

log = logging.getLogger(__name__)

SOURCES: dict[str, Callable[[], MetricsSource]] = {
    "likwid": Likwid, "perf": PerfStat, "cachegrind": Cachegrind}


def hardware_source(prefer: Sequence[str] = ("likwid", "perf")) -> tuple[MetricsSource | None,
                                                                         list[Availability]]:
    """The first usable hardware-counter source, and why each one tried is (un)usable."""
    report: list[Availability] = []
    for name in prefer:
        src: MetricsSource = SOURCES[name]()
        a = src.availability()
        report.append(a)
        if a.usable:
            return src, report
    return None, report


def check_all() -> list[Availability]:
    return [SOURCES[n]().availability() for n in ("likwid", "perf", "cachegrind")]


def source_named(name: str | None) -> MetricsSource | None:
    """The ``GRADELINE_METRICS`` choice: None -> none; auto -> the first usable hardware
    source; likwid|perf -> that one if usable (otherwise a warning and none)."""
    if not name:
        return None
    src, report = hardware_source(("likwid", "perf") if name == "auto" else (name,))
    if src is None:
        log.warning("GRADELINE_METRICS=%s: no usable counter source: %s", name,
                    "; ".join(a.reason for a in report))
    return src
