"""Node monitor: per-core utilization, memory, disk I/O and context switches sampled
from ``/proc`` at 1-2 Hz while a run, campaign or experiment works.

Why ``/proc`` and not psutil or dstat: the four files read here (``stat``,
``meminfo``, ``diskstats``, ``loadavg``) are all a monitor needs on Linux, they are
parsed in a few lines, and reading them directly lets the monitor account for its own
cost exactly (the sampling thread's CPU time). The seeds' reports ran dstat at 1 Hz
beside every experiment; this is that, tagged with the run and stored with it.

A sample is a set of tidy rows (t_s, cpu, metric, value): ``cpu`` is the CPU number
for per-core metrics and None for the node's. Rates are over the interval since the
previous sample.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from grader.core.samples import Sample

#: per-core metrics: fractions of the interval (user includes nice; busy = 1 - idle - iowait)
CORE_METRICS = ("busy", "user", "system", "iowait", "steal")
#: node metrics
NODE_METRICS = ("ctxt_per_s", "procs_running", "mem_used_bytes", "mem_available_bytes",
                "read_bytes_per_s", "write_bytes_per_s", "load1")
#: block devices that are not disks of their own (their I/O is counted where it lands)
_NOT_DISKS = ("loop", "ram", "zram", "dm-", "md", "sr", "nbd")
SECTOR = 512


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Cumulative counters at one instant (``t``: monotonic seconds)."""

    t: float
    cpu: dict[int, tuple[int, ...]]  # user nice system idle iowait irq softirq steal
    ctxt: int
    procs_running: int
    mem_total: int
    mem_available: int
    sectors_read: int
    sectors_written: int
    load1: float


def _disks(sys_block: Path) -> set[str] | None:
    try:
        return {p.name for p in sys_block.iterdir() if not p.name.startswith(_NOT_DISKS)}
    except OSError:
        return None


def read_snapshot(proc: Path = Path("/proc"), disks: Iterable[str] | None = None,
                  clock: float | None = None) -> Snapshot:
    """Read the counters once. ``disks``: the block devices to count (default: the
    whole disks under /sys/block, so partitions are not counted twice)."""
    cpu: dict[int, tuple[int, ...]] = {}
    ctxt = running = 0
    for line in (proc / "stat").read_text().splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0].startswith("cpu") and parts[0] != "cpu":
            vals = [int(x) for x in parts[1:9]]
            cpu[int(parts[0][3:])] = tuple(vals + [0] * (8 - len(vals)))
        elif parts[0] == "ctxt":
            ctxt = int(parts[1])
        elif parts[0] == "procs_running":
            running = int(parts[1])
    mem: dict[str, int] = {}
    for line in (proc / "meminfo").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("MemTotal", "MemAvailable"):
            mem[key] = int(rest.split()[0]) * 1024
    wanted = set(disks) if disks is not None else _disks(Path("/sys/block"))
    rd = wr = 0
    for line in (proc / "diskstats").read_text().splitlines():
        f = line.split()
        if len(f) >= 10 and (wanted is None or f[2] in wanted):
            rd += int(f[5])
            wr += int(f[9])
    load = float((proc / "loadavg").read_text().split()[0])
    return Snapshot(time.monotonic() if clock is None else clock, cpu, ctxt, running,
                    mem.get("MemTotal", 0), mem.get("MemAvailable", 0), rd, wr, load)


def rows_between(a: Snapshot, b: Snapshot, t_s: float,
                 cpus: Sequence[int] | None = None) -> list[tuple[float, int | None, str, float]]:
    """The tidy rows (t_s, cpu, metric, value) for the interval a -> b."""
    dt = b.t - a.t
    if dt <= 0:
        return []
    rows: list[tuple[float, int | None, str, float]] = []
    for c in sorted(b.cpu):
        if (cpus is not None and c not in cpus) or c not in a.cpu:
            continue
        d = [y - x for x, y in zip(a.cpu[c], b.cpu[c], strict=True)]
        total = sum(d)
        if total <= 0:
            continue
        user, nice, system, idle, iowait, irq, softirq, steal = d
        rows += [(t_s, c, "busy", (total - idle - iowait) / total),
                 (t_s, c, "user", (user + nice) / total),
                 (t_s, c, "system", (system + irq + softirq) / total),
                 (t_s, c, "iowait", iowait / total),
                 (t_s, c, "steal", steal / total)]
    rows += [(t_s, None, "ctxt_per_s", (b.ctxt - a.ctxt) / dt),
             (t_s, None, "procs_running", float(b.procs_running)),
             (t_s, None, "mem_used_bytes", float(b.mem_total - b.mem_available)),
             (t_s, None, "mem_available_bytes", float(b.mem_available)),
             (t_s, None, "read_bytes_per_s", (b.sectors_read - a.sectors_read) * SECTOR / dt),
             (t_s, None, "write_bytes_per_s",
              (b.sectors_written - a.sectors_written) * SECTOR / dt),
             (t_s, None, "load1", b.load1)]
    return rows


@dataclass
class Monitor:
    """Samples the node every ``interval_s`` in a thread of its own while in a ``with``
    block. ``rows`` are (t_s, cpu, metric, value) with t_s from the block's start;
    ``overhead`` is the sampling thread's own CPU time over the wall time (a share of
    one core), so the cost of watching is reported with what was watched."""

    interval_s: float = 0.5
    cpus: Sequence[int] | None = None
    proc: Path = Path("/proc")
    disks: Iterable[str] | None = None
    host: str = field(default_factory=socket.gethostname)
    rows: list[tuple[float, int | None, str, float]] = field(default_factory=list)
    cpu_s: float = 0.0
    wall_s: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __post_init__(self) -> None:
        if not 0.05 <= self.interval_s <= 60:
            raise ValueError("the monitor's interval must be 0.05..60 s")
        if self.disks is not None:
            self.disks = list(self.disks)

    def __enter__(self) -> Monitor:
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="gradeline-monitor",
                                        daemon=True)
        self._thread.start()
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _loop(self) -> None:
        c0 = time.thread_time()
        start = time.monotonic()
        try:
            prev = read_snapshot(self.proc, self.disks)
        except OSError:
            return  # no /proc to read (not Linux): nothing is monitored
        stopping = False
        while not stopping:
            stopping = self._stop.wait(self.interval_s)
            if stopping and time.monotonic() - prev.t < min(0.1, self.interval_s / 2):
                break  # the last interval is too short to be a rate worth keeping
            try:
                cur = read_snapshot(self.proc, self.disks)
            except OSError:
                continue
            self.rows.extend(rows_between(prev, cur, round(cur.t - start, 3), self.cpus))
            prev = cur
            self.cpu_s = time.thread_time() - c0
        self.wall_s = time.monotonic() - start
        self.cpu_s = time.thread_time() - c0

    @property
    def overhead(self) -> float:
        """The monitor's CPU time as a share of one core over its life."""
        return self.cpu_s / self.wall_s if self.wall_s > 0 else 0.0

    def all_rows(self) -> list[tuple[float, int | None, str, float]]:
        """The samples, then the monitor's own CPU share as a node metric of its own."""
        return [*self.rows, (round(self.wall_s, 3), None, "monitor_overhead", self.overhead)]

    def samples(self) -> list[Sample]:
        """The run summarised as counter-style samples (source ``monitor``): mean busy
        share per watched core, and for the node mean context switches/s, peak memory
        used, disk bytes/s and the monitor's own CPU share -- so an array task's shard
        carries how busy its node was, beside its hardware counters."""
        out: list[Sample] = []
        per: dict[int, list[float]] = {}
        for _, cpu, m, v in self.rows:
            if m == "busy" and cpu is not None:
                per.setdefault(cpu, []).append(v)
        for cpu, vs in sorted(per.items()):
            out.append(Sample("monitor", "busy", sum(vs) / len(vs), "share", cpu))
        s = self.summary()
        for event, key, unit in (("ctxt_per_s", "ctxt_per_s", "per_s"),
                                 ("mem_used_peak", "mem_used_peak_bytes", "bytes"),
                                 ("disk_read", "read_bytes_per_s", "bytes_per_s"),
                                 ("disk_write", "write_bytes_per_s", "bytes_per_s"),
                                 ("monitor_overhead", "monitor_overhead", "share")):
            if s[key] == s[key]:  # not NaN: at least one sample
                out.append(Sample("monitor", event, s[key], unit))
        return out

    def summary(self) -> dict[str, float]:
        """Means over the samples: per-core busy (mean over the watched cores), context
        switches/s, peak memory used, disk bytes/s, and the monitor's own overhead."""
        def mean(metric: str) -> float:
            v = [x for _, _, m, x in self.rows if m == metric]
            return sum(v) / len(v) if v else float("nan")

        used = [x for _, _, m, x in self.rows if m == "mem_used_bytes"]
        return {"busy": mean("busy"), "ctxt_per_s": mean("ctxt_per_s"),
                "mem_used_peak_bytes": max(used) if used else float("nan"),
                "read_bytes_per_s": mean("read_bytes_per_s"),
                "write_bytes_per_s": mean("write_bytes_per_s"),
                "samples": float(len({t for t, _, _, _ in self.rows})),
                "monitor_overhead": self.overhead}
