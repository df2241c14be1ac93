"""``likwid-perfctr -C cores -g GROUP``: hardware counters through LIKWID's groups."""

from __future__ import annotations

import csv
import io
import math
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from grader.adapters.metrics.base import Availability, run_tool
from grader.core.cpuset import CpuSet
from grader.core.samples import Sample

LIKWID_GROUPS = ("L3CACHE", "L3", "MEM")  # in order of preference


def parse_likwid_csv(text: str) -> list[Sample]:
    """``likwid-perfctr -O`` output -> per-HWThread samples plus a total per event.

    The format (likwid.lua, 5.x): ``TABLE,Group <g> Raw,<group>,<rows>`` followed by a
    header ``Event,Counter,HWThread <cpu>,...`` and one line per event; ``Group <g>
    Metric`` tables have ``Metric,HWThread <cpu>,...``. ``... STAT`` tables (sum, min,
    max, avg) are derived, so they are skipped: we sum per-thread values ourselves.
    Lines are right-padded with commas; values may be ``nan`` or ``-``."""
    samples: list[Sample] = []
    table: tuple[str, str] | None = None  # (kind Raw|Metric, group)
    header: list[str] | None = None
    for row in csv.reader(io.StringIO(text)):
        row = [c.strip() for c in row]
        while row and row[-1] == "":
            row.pop()
        if not row:
            continue
        if row[0] == "TABLE":
            # TABLE,[Region R,]Group <g> Raw|Metric[ STAT],<group>,<rows>
            m = re.search(r"Group \d+ (Raw|Metric)( STAT)?,([^,]+),\d+$", ",".join(row[1:]))
            table = (m.group(1), m.group(3)) if m and not m.group(2) else None
            header = None
            continue
        if row[0] == "STRUCT" or table is None:
            continue
        if row[0] in ("Event", "Metric"):
            header = row
            continue
        if header is None:  # a region's info rows (RDTSC runtime, call count)
            continue
        kind, group = table
        first_cpu_col = 2 if kind == "Raw" else 1
        name = row[0]
        total = 0.0
        counted = False
        for col in range(first_cpu_col, min(len(row), len(header))):
            m = re.match(r"(?:HWThread|Core) (\d+)$", header[col])
            if m is None:
                continue
            try:
                v = float(row[col])
            except ValueError:
                continue
            if math.isnan(v):
                continue
            samples.append(Sample("likwid", name, v, "count" if kind == "Raw" else "metric",
                                  int(m.group(1)), group))
            total += v
            counted = True
        if counted and kind == "Raw":
            samples.append(Sample("likwid", name, total, "count", None, group))
    return samples


class Likwid:
    """``likwid-perfctr -C cores -g GROUP -O`` around a command."""

    name = "likwid"

    def __init__(self, binary: str = "likwid-perfctr", group: str | None = None) -> None:
        self.binary = binary
        self.group = group

    def groups(self) -> list[str]:
        """The performance groups likwid offers on this CPU (``likwid-perfctr -a``)."""
        p = run_tool([self.binary, "-a"])
        return [ln.split()[0] for ln in p.stdout.splitlines()
                if ln.strip() and not ln.startswith(("Group name", "---"))]

    def availability(self) -> Availability:
        if shutil.which(self.binary) is None:
            return Availability(self.name, False, "likwid-perfctr is not installed "
                                "(Debian: likwid)")
        try:
            offered = self.groups()
        except (OSError, subprocess.TimeoutExpired) as e:
            return Availability(self.name, False, f"likwid-perfctr -a failed: {e}")
        group = self.group or next((g for g in LIKWID_GROUPS if g in offered), None)
        if group is None:
            return Availability(
                self.name, False,
                f"likwid offers no {'/'.join(LIKWID_GROUPS)} group for this CPU "
                f"(offered: {' '.join(offered) or 'none'}) -- likely a CPU newer than this "
                "likwid knows, or a VM", {"offered": " ".join(offered)})
        try:
            p = run_tool([self.binary, "-C", "0", "-g", group, "-O", "true"])
        except (OSError, subprocess.TimeoutExpired) as e:
            return Availability(self.name, False, f"likwid-perfctr failed to run: {e}")
        text = (p.stdout + p.stderr)
        if p.returncode != 0 or "TABLE," not in text:
            why = next((ln.strip() for ln in text.splitlines()
                        if re.search(r"cannot|error|unsupported|not supported", ln, re.I)),
                       f"exit {p.returncode}")
            return Availability(self.name, False, f"likwid-perfctr -g {group}: {why} "
                                "(needs MSR or perf_event access to hardware counters)")
        self.group = group
        return Availability(self.name, True, f"group {group}", {"group": group})

    def wrap(self, argv: Sequence[str], cores: Sequence[int], out: Path) -> list[str]:
        group = self.group or LIKWID_GROUPS[0]
        # -o with a .csv suffix writes the same CSV as -O, without mixing it into stdout.
        return [self.binary, "-C", str(CpuSet(cores or [0])), "-g", group, "-o",
                str(out.with_suffix(".csv")), "--", *argv]

    def collect(self, out: Path) -> list[Sample]:
        return parse_likwid_csv(out.with_suffix(".csv").read_text())
