"""``perf stat -x, -a -C cores``: hardware counters of whole cores (Debian linux-perf)."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from grader.adapters.metrics.base import Availability, run_tool
from grader.core.cpuset import CpuSet
from grader.core.samples import Sample

PERF_EVENTS = ("LLC-loads", "LLC-load-misses", "LLC-stores", "LLC-store-misses",
               "instructions", "cycles", "page-faults")


def parse_perf_stat(text: str) -> tuple[list[Sample], list[str]]:
    """``perf stat -x,`` output -> (counted samples, events the machine could not count).

    Fields: value, unit, event, run time, percent running, [metric, metric unit].
    A value of ``<not supported>`` or ``<not counted>`` is an event we report as missing,
    never as zero."""
    samples: list[Sample] = []
    missing: list[str] = []
    for row in csv.reader(io.StringIO(text)):
        if len(row) < 3 or not row[0] or row[0].startswith("#"):
            continue
        value, unit, event = row[0].strip(), row[1].strip(), row[2].strip()
        if value.startswith("<"):
            missing.append(f"{event} {value}")
            continue
        try:
            v = float(value)
        except ValueError:
            continue
        samples.append(Sample("perf", event, v, unit or "count"))
    return samples, missing


class PerfStat:
    """``perf stat -x, -a -C cores`` around a command (hardware counters of those cores)."""

    name = "perf"

    def __init__(self, events: Sequence[str] = PERF_EVENTS, perf: str = "perf") -> None:
        self.events = tuple(events)
        self.perf = perf

    def availability(self) -> Availability:
        if shutil.which(self.perf) is None:
            return Availability(self.name, False, "perf is not installed (Debian: linux-perf)")
        try:
            p = run_tool([self.perf, "stat", "-x,", "-e", ",".join(self.events), "--", "true"])
        except (OSError, subprocess.TimeoutExpired) as e:
            return Availability(self.name, False, f"perf stat failed to run: {e}")
        samples, missing = parse_perf_stat(p.stderr)
        hw = {"instructions", "cycles", "LLC-loads", "LLC-load-misses"}
        missing_hw = [m for m in missing if m.split()[0] in hw]
        if p.returncode != 0 and not samples:
            return Availability(self.name, False,
                                f"perf stat exited {p.returncode}: {p.stderr.strip()[-200:]}")
        if missing_hw:
            return Availability(
                self.name, False,
                "no hardware counters: perf reports " + "; ".join(missing_hw[:3])
                + (" ..." if len(missing_hw) > 3 else "")
                + " (a VM without a virtual PMU, or perf_event_paranoid too high)")
        return Availability(self.name, True, f"counting {', '.join(self.events)}")

    def wrap(self, argv: Sequence[str], cores: Sequence[int], out: Path) -> list[str]:
        cmd = [self.perf, "stat", "-x,", "-o", str(out), "-e", ",".join(self.events)]
        if cores:
            cmd += ["-a", "-C", str(CpuSet(cores))]
        return [*cmd, "--", *argv]

    def collect(self, out: Path) -> list[Sample]:
        return parse_perf_stat(out.read_text())[0]
