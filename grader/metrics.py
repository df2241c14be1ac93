"""L3 and CPU event counts from three sources behind one interface.

``likwid`` and ``perf`` read hardware counters of whole cores, so a measurement
wraps an array task's *whole shard* on its exclusive cores: everything counted on
those cores is that task's work. ``cachegrind`` simulates the caches instead (with
an L3 of a chosen size), so it works on any machine -- including VMs without a PMU,
like our CI -- at ~50x slowdown. Every sample carries its source, so simulated and
measured numbers never mix silently.
"""

from __future__ import annotations

import contextlib
import csv
import io
import logging
import math
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

log = logging.getLogger(__name__)

PERF_EVENTS = ("LLC-loads", "LLC-load-misses", "LLC-stores", "LLC-store-misses",
               "instructions", "cycles", "page-faults")
LIKWID_GROUPS = ("L3CACHE", "L3", "MEM")  # in order of preference


@dataclass(frozen=True, slots=True)
class Sample:
    """One event count. ``cpu`` is None for a total over the measured cores/processes."""

    source: str  # likwid | perf | cachegrind
    event: str
    value: float
    unit: str = "count"
    cpu: int | None = None
    context: str = ""  # e.g. the likwid group, or the command cachegrind saw


@dataclass(frozen=True, slots=True)
class Availability:
    source: str
    usable: bool
    reason: str
    detail: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.source:<10} {'usable' if self.usable else 'UNUSABLE':<9} {self.reason}"


class MetricsSource(Protocol):
    name: str

    def availability(self) -> Availability: ...

    def wrap(self, argv: Sequence[str], cores: Sequence[int], out: Path) -> list[str]:
        """The command that runs ``argv`` while counting into ``out``."""
        ...

    def collect(self, out: Path) -> list[Sample]: ...


def cpulist(cores: Iterable[int]) -> str:
    """0,1,2,5 -> '0-2,5' (the notation likwid, perf, taskset and resctrl share)."""
    xs = sorted(set(cores))
    parts: list[str] = []
    i = 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        parts.append(str(xs[i]) if i == j else f"{xs[i]}-{xs[j]}")
        i = j + 1
    return ",".join(parts)


def parse_cpulist(text: str) -> list[int]:
    out: list[int] = []
    for part in text.strip().split(","):
        if "-" in part:
            a, b = part.split("-", 1)
            out.extend(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    return out


def _run(argv: Sequence[str], timeout: float = 20) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout,
                          check=False)


# --------------------------------------------------------------------------- perf

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
            p = _run([self.perf, "stat", "-x,", "-e", ",".join(self.events), "--", "true"])
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
            cmd += ["-a", "-C", cpulist(cores)]
        return [*cmd, "--", *argv]

    def collect(self, out: Path) -> list[Sample]:
        return parse_perf_stat(out.read_text())[0]


# --------------------------------------------------------------------------- likwid

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
        p = _run([self.binary, "-a"])
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
            p = _run([self.binary, "-C", "0", "-g", group, "-O", "true"])
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
        return [self.binary, "-C", cpulist(cores or [0]), "-g", group, "-o",
                str(out.with_suffix(".csv")), "--", *argv]

    def collect(self, out: Path) -> list[Sample]:
        return parse_likwid_csv(out.with_suffix(".csv").read_text())


# --------------------------------------------------------------------------- cachegrind

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


@contextlib.contextmanager
def counting(source: MetricsSource | None, cores: Sequence[int], out: Path
             ) -> Iterator[list[Sample]]:
    """Count on ``cores`` while the body runs; the list fills with samples on exit.

    The counter runs around ``sleep`` and is stopped with SIGINT (both perf and
    likwid-perfctr then print what they counted). On exclusive cores everything
    counted there is the body's work -- how an array task's whole shard is measured.
    With no usable source this counts nothing and costs nothing."""
    samples: list[Sample] = []
    if source is None:
        yield samples
        return
    proc = subprocess.Popen(source.wrap(["sleep", "1000000"], cores, out),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    time.sleep(0.3)  # let the counters arm before the work starts
    try:
        yield samples
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        with contextlib.suppress(OSError, ValueError):
            samples.extend(source.collect(out))


def source_from_env(value: str | None) -> MetricsSource | None:
    """``GRADELINE_METRICS``: unset/off -> none; auto -> the first usable hardware source;
    likwid|perf -> that one if usable (otherwise a warning and none)."""
    if not value or value == "off":
        return None
    src, report = hardware_source(("likwid", "perf") if value == "auto" else (value,))
    if src is None:
        log.warning("GRADELINE_METRICS=%s: no usable counter source: %s", value,
                    "; ".join(a.reason for a in report))
    return src


SOURCES: dict[str, type] = {"likwid": Likwid, "perf": PerfStat, "cachegrind": Cachegrind}


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
