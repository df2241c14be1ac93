"""Runs one command under limits and measures it; the runtime adapters build the command.

The spec, as in DOMjudge's runguard: the command runs in a new session, as the
sandbox uid, in a fresh cgroup (memory, pids, cpuset) when one is available,
with rlimits (CPU, file size, stack, core) and CPU affinity set before any
untrusted code runs. When the wall-clock limit passes, it and everything in its
cgroup get SIGKILL. After it ends, anything left in its cgroup is killed too:
no process survives its run.

Two ways to start, same guarantees:
- gated (bwrap): the runtime starts under util-linux ``prlimit`` and
  ``setpriv`` (rlimits and uid are inherited), blocked; we put its processes in
  the cgroup and pin them from outside, then release it. Spawning needs no
  ``preexec_fn``, so Python can vfork. (Setting rlimits from outside with
  prlimit(2) would need CAP_SYS_RESOURCE, which hardened roots may lack.)
- preexec (other runtimes): the child confines itself between fork and exec.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import logging
import math
import os
import resource
import select
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.adapters.sandbox.cgroups import CgroupManager, RunCgroup
from grader.adapters.sandbox.outcome import RawOutcome
from grader.core.errors import SandboxError
from grader.core.limits import Limits

log = logging.getLogger(__name__)

#: Memory is measured as the cgroup's peak charge: the quantity the limit enforces.
#: rusage cannot stand in for it: bwrap's PID-namespace monitor exits without
#: reaping the program (its ru_maxrss never reaches us), and our direct child's
#: ru_maxrss includes this Python process's RSS (Linux keeps it across exec).
#: Without a cgroup, memory is reported as not measured.
MEMORY_ERROR_MARKERS = (b"MemoryError", b"bad_alloc", b"Cannot allocate memory",
                        b"out of memory")
RUNTIME_NAMES = {"bwrap", "apptainer", "starter", "starter-suid"}
PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER = 36, 37
SETPRIV = shutil.which("setpriv", path="/usr/bin:/bin")
PRLIMIT = shutil.which("prlimit", path="/usr/bin:/bin")
_PRLIMIT_NAMES = {resource.RLIMIT_CPU: "cpu", resource.RLIMIT_CORE: "core",
                  resource.RLIMIT_NOFILE: "nofile", resource.RLIMIT_FSIZE: "fsize",
                  resource.RLIMIT_STACK: "stack", resource.RLIMIT_AS: "as",
                  resource.RLIMIT_NPROC: "nproc"}


@dataclass(frozen=True, slots=True)
class Identity:
    """Who the sandboxed command runs as (None: as the caller)."""

    uid: int | None = None
    gid: int | None = None


AS_CALLER = Identity()


@dataclass(frozen=True, slots=True)
class Gate:
    """A runtime that starts blocked (bwrap ``--block-fd``) and reports its first
    process on a status pipe (``--json-status-fd``).

    :param status_fd: read end of the runtime's status pipe (closed by the caller).
    :param release_fd: write end of the runtime's block pipe (closed by the caller).
    :param child_fds: the ends handed to the runtime; closed here once it started.
    :param child_pid: parses one status line: the pid to confine, or None.
    """

    status_fd: int
    release_fd: int
    child_fds: tuple[int, ...]
    child_pid: Callable[[str], int | None]


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _subreaper(on: bool | None = None) -> bool:
    """Read (``on`` None) or set whether orphaned descendants are reparented to us.

    A run is a subreaper only while it runs: bwrap's namespace init can outlive the
    outer bwrap by a moment, and as our orphan it is reaped at once (instead of left
    to a lazy init, or seen as a survivor). Left on for good, a long-running caller
    would collect every orphan of its other children (daemons it started) as zombies.
    """
    libc = _libc()
    if libc is None:
        return False
    if on is None:
        flag = ctypes.c_int(0)
        libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0)
        return bool(flag.value)
    return int(libc.prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)) == 0


def _wait_pid(pid: int, timeout_s: float) -> None:
    """Reap one orphan of ours, waiting (without polling) at most ``timeout_s``."""
    try:
        pidfd = os.pidfd_open(pid)
    except (ProcessLookupError, OSError):
        return
    try:
        select.select([pidfd], [], [], timeout_s)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
    finally:
        os.close(pidfd)


def _children() -> list[int]:
    pids: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path("/proc/self/task").iterdir():
            with contextlib.suppress(OSError):
                pids += [int(x) for x in (task / "children").read_text().split()]
    return pids


def _reap_orphans(uid: int, timeout_s: float = 2.0) -> None:
    """Reap our runtime's orphaned processes (only those: uid and name match)."""
    for pid in _children():
        try:
            st = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":\t", 1) for line in st.splitlines() if ":\t" in line)
        if fields.get("Name", "").strip() in RUNTIME_NAMES and \
                int(fields.get("Uid", "-1").split()[0]) == uid:
            _wait_pid(pid, timeout_s)


def _rlimits(limits: Limits, use_cgroup_memory: bool, use_cgroup_pids: bool,
             dedicated_uid: bool) -> list[tuple[int, tuple[int, int]]]:
    """The rlimits of a run (see CONTRACT.md)."""
    hard_cpu = math.ceil(limits.cpu_hard_s)
    out = [(resource.RLIMIT_CPU, (hard_cpu, hard_cpu + 1)), (resource.RLIMIT_CORE, (0, 0)),
           (resource.RLIMIT_NOFILE, (512, 512))]
    if limits.output_bytes is not None:
        out.append((resource.RLIMIT_FSIZE, (limits.output_bytes, limits.output_bytes)))
    if limits.stack_bytes is not None:
        out.append((resource.RLIMIT_STACK, (limits.stack_bytes, limits.stack_bytes)))
    if limits.memory_bytes is not None and not use_cgroup_memory:
        # Fallback without a memory cgroup: cap the address space (coarser).
        cap = limits.memory_bytes + 64 * 1024 * 1024
        out.append((resource.RLIMIT_AS, (cap, cap)))
    if limits.processes is not None and not use_cgroup_pids and dedicated_uid:
        # Fallback: per-uid process cap; sound only because each CPU slot has its own uid.
        out.append((resource.RLIMIT_NPROC, (limits.processes, limits.processes)))
    return out


def _preexec(rlimits: list[tuple[int, tuple[int, int]]], cpus: Sequence[int] | None,
             ident: Identity, procs_files: Sequence[str]) -> Callable[[], None]:
    """The child-side setup; only os/resource calls (runs between fork and exec)."""

    def setup() -> None:
        pid = str(os.getpid()).encode()
        for f in procs_files:
            fd = os.open(f, os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)
        for res, value in rlimits:
            resource.setrlimit(res, value)
        if cpus:
            os.sched_setaffinity(0, cpus)
        if ident.gid is not None:
            os.setgroups([])
            os.setresgid(ident.gid, ident.gid, ident.gid)
        if ident.uid is not None:
            os.setresuid(ident.uid, ident.uid, ident.uid)

    return setup


def _prlimit_args(rlimits: list[tuple[int, tuple[int, int]]]) -> list[str]:
    return [f"--{_PRLIMIT_NAMES[res]}={soft}:{hard}" for res, (soft, hard) in rlimits]


def _confine(pids: Sequence[int], cg: RunCgroup | None, cpus: Sequence[int] | None) -> None:
    """From outside: put processes in the cgroup and pin them to ``cpus``.

    :raises ProcessLookupError: when a process is already gone.
    """
    for pid in pids:
        if cg is not None:
            data = str(pid).encode()
            for f in cg.procs_files:
                fd = os.open(f, os.O_WRONLY)
                try:
                    os.write(fd, data)
                finally:
                    os.close(fd)
        if cpus:
            os.sched_setaffinity(pid, cpus)


def _read_until_pid(gate: Gate, deadline: float) -> tuple[int | None, bytes]:
    """Read status lines until one names the pid to confine (None: the runtime died
    or the deadline passed). Returns everything read, for the caller to parse."""
    buf = b""
    while True:
        for line in buf.split(b"\n")[:-1]:
            pid = gate.child_pid(line.decode("utf-8", "replace"))
            if pid is not None:
                return pid, buf
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None, buf
        ready, _, _ = select.select([gate.status_fd], [], [], remaining)
        if not ready:
            return None, buf
        chunk = os.read(gate.status_fd, 65536)
        if not chunk:
            return None, buf
        buf += chunk


def _kill_tree(proc: subprocess.Popen[bytes], cg: RunCgroup | None) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    # Not proc.kill(): it polls first and may reap the child our wait4 is for.
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGKILL)
    if cg is not None:
        cg.kill_all()


def supervise(
    argv: Sequence[str],
    *,
    limits: Limits,
    stdin: Path | None,
    stdout: Path,
    stderr: Path,
    cpus: Sequence[int] | None = None,
    identity: Identity = AS_CALLER,
    env: Mapping[str, str] | None = None,
    cgroups: CgroupManager | None = None,
    pass_fds: Sequence[int] = (),
    cwd: Path | None = None,
    gate: Gate | None = None,
) -> RawOutcome:
    """Run ``argv`` under ``limits``; return what was observed.

    :raises SandboxError: when the command cannot be started at all.
    """
    cg = None
    if cgroups is not None:
        try:
            cg = cgroups.create(memory_bytes=limits.memory_bytes, processes=limits.processes,
                                cpus=cpus)
        except OSError as e:
            raise SandboxError(f"cannot create a cgroup for the run: {e}. Run as root, "
                               "or set GRADELINE_CGROUPS=0 to fall back to rlimits") from e
    mem_cg = cg is not None and ("memory" in cg.dirs or "unified" in cg.dirs)
    pids_cg = cg is not None and ("pids" in cg.dirs or "unified" in cg.dirs)
    rlimits = _rlimits(limits, mem_cg, pids_cg, identity.uid is not None)
    if gate is not None and (PRLIMIT is None or (identity.uid is not None and SETPRIV is None)):
        raise SandboxError("prlimit and setpriv (util-linux) are needed to start the sandbox")
    if gate is not None:
        cmd = list(argv)
        if identity.uid is not None:
            gid = identity.gid if identity.gid is not None else identity.uid
            cmd = [str(SETPRIV), f"--reuid={identity.uid}", f"--regid={gid}", "--clear-groups",
                   "--", *cmd]
        cmd = [str(PRLIMIT), *_prlimit_args(rlimits), "--", *cmd]
        preexec = None
    else:
        cmd = list(argv)
        preexec = _preexec(rlimits, cpus, identity, cg.procs_files if cg else [])
    fin = os.open(stdin if stdin is not None else os.devnull, os.O_RDONLY)
    fout = os.open(stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    ferr = os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    timed_out = False
    was_subreaper = _subreaper()
    if not was_subreaper:
        _subreaper(True)
    inner: int | None = None
    status_buf = b""
    released = True
    try:
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                cmd, stdin=fin, stdout=fout, stderr=ferr, env=dict(env or {}),
                preexec_fn=preexec, start_new_session=True, pass_fds=tuple(pass_fds),
                cwd=cwd, close_fds=True,
            )
        except (OSError, subprocess.SubprocessError) as e:
            raise SandboxError(f"cannot start {argv[0]!r}: {e}") from e

        deadline = start + limits.wall_s
        pidfd = os.pidfd_open(proc.pid)
        try:
            if gate is not None:
                for fd in gate.child_fds:
                    os.close(fd)
                inner, status_buf = _read_until_pid(gate, deadline)
                released = False
                if inner is not None:
                    try:
                        _confine([proc.pid, inner], cg, cpus)
                        os.write(gate.release_fd, b"1")
                        released = True
                    except (ProcessLookupError, OSError) as e:
                        log.debug("runtime ended before it was released: %s", e)
                if not released:
                    _kill_tree(proc, cg)
            # The wall-clock limit: wait on the pidfd, no timer thread.
            ready, _, _ = select.select([pidfd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                timed_out = True
                _kill_tree(proc, cg)
            _, status, ru = os.wait4(proc.pid, 0)
        finally:
            os.close(pidfd)
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        # Nothing may outlive the run: kill leftovers (detached daemons) in the cgroup.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        if gate is not None:
            with contextlib.suppress(OSError):
                while chunk := os.read(gate.status_fd, 65536):
                    status_buf += chunk
        cpu = ru.ru_utime + ru.ru_stime
        memory_error = False
        if cg is None:
            with contextlib.suppress(OSError):
                with Path(stderr).open("rb") as f:
                    f.seek(max(0, os.fstat(f.fileno()).st_size - 4096))
                    tail = f.read()
                memory_error = any(m in tail for m in MEMORY_ERROR_MARKERS)
        if inner is not None:
            _wait_pid(inner, 2.0)
        else:
            _reap_orphans(identity.uid if identity.uid is not None else os.getuid())
        peak = None
        oom = False
        if cg is not None:
            cg.kill_all()
            cg_cpu = cg.cpu_time_s()
            if cg_cpu is not None:
                cpu = cg_cpu
            peak = cg.memory_peak_bytes()
            oom = cg.oom_killed()
        return RawOutcome(
            status=status, wall_time_s=wall, cpu_time_s=cpu,
            memory_bytes=peak, oom_killed=oom, memory_error_reported=memory_error,
            wall_timed_out=timed_out, stdout_bytes=os.fstat(fout).st_size,
            stderr_bytes=os.fstat(ferr).st_size, cgroup=cg is not None,
            status_text=status_buf.decode("utf-8", "replace"), released=released,
        )
    finally:
        for fd in (fin, fout, ferr):
            os.close(fd)
        if cg is not None:
            cg.remove()
        if not was_subreaper:
            _reap_orphans(identity.uid if identity.uid is not None else os.getuid(), 0.0)
            _subreaper(False)
