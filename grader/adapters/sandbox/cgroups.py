"""Per-run control groups (v1 or v2): memory and process limits, CPU accounting, kill-all.

The facade ``CgroupManager.detect()`` returns None when no usable hierarchy
exists (not root, no controllers); callers then fall back to rlimits and say so.
Each run's cgroup is created *below the current process's own cgroup*, so limits
a batch system set for us (Slurm's task/cgroup) keep applying to the sandbox.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import logging
import os
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

V1_CONTROLLERS = ("memory", "pids", "cpuacct", "cpuset")
_counter = itertools.count()


def _write(path: Path, value: str) -> None:
    path.write_text(value, encoding="ascii")


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text(encoding="ascii").split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _kv(path: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        for line in path.read_text(encoding="ascii").splitlines():
            k, _, v = line.partition(" ")
            with contextlib.suppress(ValueError):
                out[k] = int(v)
    except OSError:
        pass
    return out


@dataclass
class RunCgroup:
    """The cgroup(s) of one run. ``procs_files`` are written by the child before exec."""

    version: int
    dirs: dict[str, Path]  # controller -> directory ("unified" for v2)

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs.values()]

    def attach_pid_files(self) -> list[str]:
        """Files to write the child's pid into (called in the child, before exec)."""
        return self.procs_files

    def cpu_time_s(self) -> float | None:
        if self.version == 1:
            ns = _read_int(self.dirs["cpuacct"] / "cpuacct.usage") if "cpuacct" in self.dirs \
                else None
            return None if ns is None else ns / 1e9
        usec = _kv(self.dirs["unified"] / "cpu.stat").get("usage_usec")
        return None if usec is None else usec / 1e6

    def memory_peak_bytes(self) -> int | None:
        if self.version == 1:
            return _read_int(self.dirs["memory"] / "memory.max_usage_in_bytes") \
                if "memory" in self.dirs else None
        return _read_int(self.dirs["unified"] / "memory.peak")

    def oom_killed(self) -> bool:
        if self.version == 1:
            if "memory" not in self.dirs:
                return False
            return _kv(self.dirs["memory"] / "memory.oom_control").get("oom_kill", 0) > 0
        return _kv(self.dirs["unified"] / "memory.events").get("oom_kill", 0) > 0

    def pids(self) -> set[int]:
        found: set[int] = set()
        for d in self.dirs.values():
            with contextlib.suppress(OSError):
                found.update(int(x) for x in (d / "cgroup.procs").read_text().split())
        return found

    def kill_all(self, timeout_s: float = 5.0) -> bool:
        """SIGKILL every process in the cgroup until it is empty; True when it is."""
        if self.version == 2:
            with contextlib.suppress(OSError):
                _write(self.dirs["unified"] / "cgroup.kill", "1")
        deadline = time.monotonic() + timeout_s
        while True:
            pids = self.pids()
            if not pids:
                return True
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            if time.monotonic() > deadline:
                log.error("cgroup %s still has processes %s after SIGKILL",
                          next(iter(self.dirs.values())), sorted(pids))
                return False
            time.sleep(0.005)

    def remove(self) -> None:
        for d in self.dirs.values():
            for _ in range(200):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as e:
                    if e.errno != errno.EBUSY:
                        log.warning("cannot remove cgroup %s: %s", d, e)
                        break
                    time.sleep(0.005)


class CgroupManager:
    """Creates per-run cgroups under this process's own cgroup."""

    def __init__(self, version: int, bases: dict[str, Path]) -> None:
        self.version = version
        self.bases = bases  # controller -> our own cgroup dir in that hierarchy

    @property
    def controllers(self) -> list[str]:
        if self.version == 1:
            return sorted(self.bases)
        try:
            return (self.bases["unified"] / "cgroup.subtree_control").read_text().split()
        except OSError:
            return []

    def describe(self) -> str:
        return f"cgroup v{self.version} ({', '.join(self.controllers)})"

    @classmethod
    def detect(cls, proc_self: Path = Path("/proc/self"),
               require: Sequence[str] = ("memory", "pids")) -> CgroupManager | None:
        """The usable hierarchy, or None (not writable, controllers missing)."""
        try:
            mounts = (proc_self / "mounts").read_text().splitlines()
            membership = (proc_self / "cgroup").read_text().splitlines()
        except OSError:
            return None
        v1_mounts: dict[str, Path] = {}
        v2_mount: Path | None = None
        for line in mounts:
            parts = line.split()
            if len(parts) < 4:
                continue
            if parts[2] == "cgroup":
                for opt in parts[3].split(","):
                    if opt in V1_CONTROLLERS:
                        v1_mounts[opt] = Path(parts[1])
            elif parts[2] == "cgroup2":
                v2_mount = Path(parts[1])
        own: dict[str, str] = {}
        for line in membership:
            _, ctrls, path = line.split(":", 2)
            for c in ctrls.split(",") if ctrls else ["unified"]:
                own[c] = path
        if all(c in v1_mounts for c in require):
            bases = {c: v1_mounts[c] / own.get(c, "/").lstrip("/") for c in v1_mounts}
            mgr = cls(1, bases)
        elif v2_mount is not None and "unified" in own:
            base = v2_mount / own["unified"].lstrip("/")
            mgr = cls(2, {"unified": base})
            if not mgr._enable_v2(require):
                return None
        else:
            return None
        if not all(os.access(p, os.W_OK) for p in mgr.bases.values()):
            return None
        return mgr

    def _enable_v2(self, require: Sequence[str]) -> bool:
        ctl = self.bases["unified"] / "cgroup.subtree_control"
        try:
            _write(ctl, " ".join(f"+{c}" for c in (*require, "cpu", "cpuset")))
        except OSError:
            try:
                _write(ctl, " ".join(f"+{c}" for c in require))
            except OSError as e:
                log.warning("cgroup v2: cannot enable %s here (%s); no cgroup limits", require, e)
                return False
        return True

    def create(self, *, memory_bytes: int | None, processes: int | None,
               cpus: Sequence[int] | None) -> RunCgroup:
        """A fresh cgroup with the limits set; the caller must ``remove()`` it."""
        name = f"gradeline-{os.getpid()}-{next(_counter)}"
        dirs: dict[str, Path] = {}
        try:
            if self.version == 1:
                for c, base in self.bases.items():
                    d = base / name
                    d.mkdir()
                    dirs[c] = d
                if memory_bytes is not None and "memory" in dirs:
                    _write(dirs["memory"] / "memory.limit_in_bytes", str(memory_bytes))
                    swap = dirs["memory"] / "memory.memsw.limit_in_bytes"
                    if swap.exists():
                        _write(swap, str(memory_bytes))
                if processes is not None and "pids" in dirs:
                    _write(dirs["pids"] / "pids.max", str(processes))
                if "cpuset" in dirs:
                    parent = self.bases["cpuset"]
                    _write(dirs["cpuset"] / "cpuset.mems",
                           (parent / "cpuset.mems").read_text().strip())
                    allowed = (parent / "cpuset.cpus").read_text().strip()
                    _write(dirs["cpuset"] / "cpuset.cpus",
                           ",".join(map(str, cpus)) if cpus else allowed)
            else:
                d = self.bases["unified"] / name
                d.mkdir()
                dirs["unified"] = d
                if memory_bytes is not None:
                    _write(d / "memory.max", str(memory_bytes))
                    with contextlib.suppress(OSError):
                        _write(d / "memory.swap.max", "0")
                if processes is not None:
                    _write(d / "pids.max", str(processes))
                if cpus and (d / "cpuset.cpus").exists():
                    _write(d / "cpuset.cpus", ",".join(map(str, cpus)))
        except OSError:
            RunCgroup(self.version, dirs).remove()
            raise
        return RunCgroup(self.version, dirs)
