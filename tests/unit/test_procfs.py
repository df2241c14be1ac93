"""The node monitor: parsing /proc, rates between samples, and a live run."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.adapters.procfs import Monitor, read_snapshot, rows_between


def _proc(root: Path, cpu0: list[int], ctxt: int, sectors: tuple[int, int],
          avail_kb: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    total = sum(cpu0)
    (root / "stat").write_text(
        f"cpu  {' '.join(str(2 * x) for x in cpu0)} 0 0\n"
        f"cpu0 {' '.join(map(str, cpu0))} 0 0\ncpu1 {' '.join(map(str, cpu0))} 0 0\n"
        f"intr 1 2 3\nctxt {ctxt}\nbtime 1\nprocs_running 3\nprocs_blocked 0\n")
    (root / "meminfo").write_text(f"MemTotal:       1000 kB\nMemFree:  10 kB\n"
                                  f"MemAvailable:   {avail_kb} kB\n")
    (root / "diskstats").write_text(
        f"   8       0 sda 10 0 {sectors[0]} 5 20 0 {sectors[1]} 9 0 0 0\n"
        f"   8       1 sda1 10 0 {sectors[0]} 5 20 0 {sectors[1]} 9 0 0 0\n"
        f"   7       0 loop0 1 0 999999 0 0 0 0 0 0 0 0\n")
    (root / "loadavg").write_text("1.50 1.00 0.50 2/100 12345\n")
    assert total > 0
    return root


def test_rows_between_two_snapshots(tmp_path: Path) -> None:
    a = read_snapshot(_proc(tmp_path / "a", [100, 0, 50, 800, 50, 0, 0, 0], 1000, (0, 0), 600),
                      disks=["sda"], clock=10.0)
    # one second later: 60 ticks user, 20 system, 10 idle, 10 iowait on each core
    b = read_snapshot(_proc(tmp_path / "b", [160, 0, 70, 810, 60, 0, 0, 0], 3000,
                            (2048, 4096), 400), disks=["sda"], clock=11.0)
    rows = {(cpu, metric): v for _, cpu, metric, v in rows_between(a, b, 1.0)}
    assert rows[(0, "busy")] == pytest.approx(0.8)
    assert rows[(0, "user")] == pytest.approx(0.6)
    assert rows[(1, "iowait")] == pytest.approx(0.1)
    assert rows[(None, "ctxt_per_s")] == pytest.approx(2000)
    assert rows[(None, "read_bytes_per_s")] == pytest.approx(2048 * 512)  # sda only
    assert rows[(None, "write_bytes_per_s")] == pytest.approx(4096 * 512)
    assert rows[(None, "mem_used_bytes")] == pytest.approx(600 * 1024)
    assert rows[(None, "load1")] == pytest.approx(1.5)
    only0 = rows_between(a, b, 1.0, cpus=[0])
    assert {c for _, c, _, _ in only0} == {0, None}
    assert rows_between(b, a, 1.0) == []  # no time passed forward: no rates


def test_monitor_samples_this_machine_and_reports_its_own_cost() -> None:
    # one core kept busy by another process: a busy loop in this one would hold the
    # GIL and starve the sampling thread whenever the machine is loaded
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        with Monitor(interval_s=0.1) as m:
            time.sleep(0.8)
    finally:
        hog.kill()
        hog.wait()
    s = m.summary()
    assert s["samples"] >= 3
    busy = [v for _, c, k, v in m.rows if k == "busy"]
    assert busy and all(0 <= v <= 1 for v in busy)
    assert max(busy) > 0.3  # the loop above ran on one of the cores
    assert 0 < m.overhead < 0.05  # CPU time of the sampling thread, not wall time
    with pytest.raises(ValueError, match="interval"):
        Monitor(interval_s=0)
