"""The shard's control group (v1 or v2), delegated to the runner inside the container.

The facade ``CgroupManager.detect()`` returns None when no usable hierarchy exists
(not root, nothing delegated); runs then fall back to rlimits and say so. A shard's
cgroup is created *below the current process's own cgroup*, so limits a batch
system set for us (Slurm's task/cgroup) keep bounding everything in it; the runner
(``containers/runner/gl-runner.c``) makes one child per run with that run's memory
and process limits, and reads its peak memory, OOM kills and CPU time.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import logging
import os
import secrets
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

V1_CONTROLLERS = ("memory", "pids", "cpuacct", "cpuset")
RUNNER_LEAF = "runner"  # v2: the shard's leaf the container itself lives in
_counter = itertools.count()
_swept = False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write(path: Path, value: str) -> None:
    path.write_text(value, encoding="ascii")


@dataclass
class ShardCgroup:
    """The cgroup of one container: a directory per controller (``unified`` on v2)."""

    version: int
    dirs: dict[str, Path]

    def runner_args(self, inside: str = "/gl/cgroup") -> list[str]:
        """gl-runner's options for these directories, bound under ``inside``."""
        if self.version == 2:
            return ["--cgroup-v2", f"{inside}/unified"]
        return [a for c in self.dirs for a in ("--cgroup-v1", f"{c}={inside}/{c}")]

    def enter_argv(self, argv: Sequence[str]) -> list[str]:
        """``argv`` started inside this cgroup. Under v2 a process may only move into a
        cgroup whose common ancestor with its own it may write: the runner (the slot's
        uid, or a user) could not move a run's stub out of our cgroup into the shard, so
        the container starts in the shard's leaf ``runner``, beside the runs' cgroups
        (v2 keeps processes out of a cgroup that has controllers for its children)."""
        if self.version != 2:
            return list(argv)
        procs = self.dirs["unified"] / RUNNER_LEAF / "cgroup.procs"
        return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(procs), *argv]

    def binds(self, inside: str = "/gl/cgroup") -> list[tuple[Path, str]]:
        """(host directory, path in the container) for each controller."""
        return [(d, f"{inside}/{c}") for c, d in self.dirs.items()]

    def pids(self) -> set[int]:
        found: set[int] = set()
        for d in self.dirs.values():
            for procs in d.rglob("cgroup.procs"):
                with contextlib.suppress(OSError, ValueError):
                    found.update(int(x) for x in procs.read_text().split())
        return found

    def remove(self, timeout_s: float = 5.0) -> None:
        """Kill whatever is left, then remove the runs' and the shard's directories."""
        deadline = time.monotonic() + timeout_s
        while (pids := self.pids()) and time.monotonic() < deadline:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)
        for d in self.dirs.values():
            for sub in sorted((p for p in d.glob("*") if p.is_dir()), reverse=True):
                _rmdir(sub)
            _rmdir(d)


def _rmdir(d: Path) -> None:
    for _ in range(200):
        try:
            d.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as e:
            if e.errno != errno.EBUSY:
                log.warning("cannot remove cgroup %s: %s", d, e)
                return
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
        """Enable the controllers for our children. v2 refuses that (EBUSY) in a cgroup
        that holds processes, as a cgroup delegated to a user does (systemd's
        ``Delegate=yes`` starts the command in it): alone there, we move into a leaf of
        our own; started by a gradeline process that did so (its leaf), we use the
        delegated cgroup above it."""
        base = self.bases["unified"]
        try:
            self._enable(base, require)
            return True
        except OSError as e:
            if e.errno != errno.EBUSY:
                log.warning("cgroup v2: cannot enable %s here (%s); no cgroup limits", require, e)
                return False
        try:
            others = set((base / "cgroup.procs").read_text().split()) - {str(os.getpid())}
            if not others:
                leaf = base / f"gradeline-{os.getpid()}-self"
                leaf.mkdir(exist_ok=True)
                _write(leaf / "cgroup.procs", str(os.getpid()))
                self._enable(base, require)
                return True
            parent = base.parent
            enabled = (parent / "cgroup.subtree_control").read_text().split()
            if set(require) <= set(enabled) and os.access(parent, os.W_OK):
                self.bases = {"unified": parent}
                return True
        except OSError as e:
            log.warning("cgroup v2: cannot use the delegated cgroup %s (%s)", base, e)
            return False
        log.warning("cgroup v2: %s holds other processes, so no controllers can be enabled "
                    "for ours: start gradeline alone in a delegated cgroup (systemd-run "
                    "--user -p Delegate=yes ...); no cgroup limits", base)
        return False

    @staticmethod
    def _enable(base: Path, require: Sequence[str]) -> None:
        ctl = base / "cgroup.subtree_control"
        try:
            _write(ctl, " ".join(f"+{c}" for c in (*require, "cpu", "cpuset")))
        except OSError as e:
            if e.errno == errno.EBUSY:
                raise
            _write(ctl, " ".join(f"+{c}" for c in require))

    def _sweep_stale(self, min_age_s: float = 120.0) -> None:
        """Remove the empty cgroups of gradeline processes that died without removing
        them (SIGKILL, a lost node): once per process, only ones older than
        ``min_age_s`` whose creator is gone. rmdir refuses a cgroup that still holds a
        process, so nothing running is touched."""
        global _swept
        if _swept:
            return
        _swept = True
        now = time.time()
        for base in self.bases.values():
            with contextlib.suppress(OSError):
                for d in base.glob("gradeline-*"):
                    pid = d.name.split("-")[1]
                    if not pid.isdigit() or _alive(int(pid)):
                        continue
                    with contextlib.suppress(OSError):
                        if now - d.stat().st_mtime < min_age_s:
                            continue
                        for sub in sorted((x for x in d.rglob("*") if x.is_dir()),
                                          key=lambda x: len(x.parts), reverse=True):
                            with contextlib.suppress(OSError):
                                sub.rmdir()
                        d.rmdir()
                        log.info("removed the stale cgroup %s", d)

    def create_shard(self, cpus: Sequence[int] | None, owner: int | None = None
                     ) -> ShardCgroup:
        """A fresh cgroup for one container, delegated to ``owner`` (the uid the runner
        runs as, when not ours); the caller must ``remove()`` it.

        :raises OSError: when the hierarchy refuses.
        """
        self._sweep_stale()
        # the pid alone can repeat: a killed process's cgroup outlives it, and pids wrap
        name = f"gradeline-{os.getpid()}-{next(_counter)}-{secrets.token_hex(3)}"
        dirs: dict[str, Path] = {}
        try:
            for c, base in self.bases.items():
                d = base / name
                d.mkdir()
                dirs[c] = d
                if c == "cpuset" or self.version == 2:
                    with contextlib.suppress(OSError):
                        if self.version == 1:
                            _write(d / "cpuset.mems", (base / "cpuset.mems").read_text().strip())
                        if cpus:
                            _write(d / "cpuset.cpus", ",".join(map(str, cpus)))
                if self.version == 2:
                    with contextlib.suppress(OSError):
                        _write(d / "cgroup.subtree_control", "+memory +pids +cpu +cpuset")
                    (d / RUNNER_LEAF).mkdir()
                if owner is not None:
                    os.chown(d, owner, -1)
                    for f in ("cgroup.procs", "tasks", "cgroup.subtree_control"):
                        with contextlib.suppress(FileNotFoundError):
                            os.chown(d / f, owner, -1)
        except OSError:
            ShardCgroup(self.version, dirs).remove()
            raise
        return ShardCgroup(self.version, dirs)
