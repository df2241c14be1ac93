"""Runs one command under limits and measures it; the runtime adapters build the command.

The spec, as in DOMjudge's runguard: the command runs in a new session, as the
sandbox uid, in a fresh cgroup (memory, pids, cpuset) when one is available,
with rlimits (CPU, file size, stack, core) and CPU affinity set before exec.
When the wall-clock limit passes it and everything in its cgroup get SIGKILL.
After it ends, anything left in its cgroup is killed too: no process survives
its run.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import logging
import math
import os
import resource
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.errors import SandboxError
from grader.limits import Limits
from grader.sandbox.cgroups import CgroupManager, RunCgroup
from grader.sandbox.meta import RunMeta, TerminationReason

log = logging.getLogger(__name__)

#: Memory is measured as the cgroup's peak charge: the quantity the limit enforces.
#: rusage cannot stand in for it: bwrap's PID-namespace monitor exits without
#: reaping the program (its ru_maxrss never reaches us), and our direct child's
#: ru_maxrss includes this Python process's RSS (Linux keeps it across exec).
#: Without a cgroup, memory is reported as not measured.
MEMORY_ERROR_MARKERS = (b"MemoryError", b"bad_alloc", b"Cannot allocate memory",
                        b"out of memory")


@dataclass(frozen=True, slots=True)
class Identity:
    """Who the sandboxed command runs as (None: as the caller)."""

    uid: int | None = None
    gid: int | None = None


AS_CALLER = Identity()
RUNTIME_NAMES = {"bwrap", "apptainer", "starter", "starter-suid"}
PR_SET_CHILD_SUBREAPER = 36


@functools.cache
def _become_subreaper() -> bool:
    """Orphans of our runs (bwrap's namespace init, once the outer bwrap has exited
    without waiting for it) are reparented to us instead of PID 1, so we can reap
    them at once rather than leave zombies for a lazy init."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _children() -> list[int]:
    pids: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path("/proc/self/task").iterdir():
            with contextlib.suppress(OSError):
                pids += [int(x) for x in (task / "children").read_text().split()]
    return pids


def _reap_orphans(uid: int, timeout_s: float = 2.0) -> None:
    """Wait for our runtime's orphaned processes (only those: uid and name match)."""
    deadline = time.monotonic() + timeout_s
    while True:
        pending = []
        for pid in _children():
            try:
                st = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            fields = dict(line.split(":\t", 1) for line in st.splitlines() if ":\t" in line)
            if fields.get("Name", "").strip() in RUNTIME_NAMES and \
                    int(fields.get("Uid", "-1").split()[0]) == uid:
                pending.append(pid)
        for pid in pending:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
        if not pending or time.monotonic() > deadline:
            return
        time.sleep(0.002)


@dataclass(frozen=True, slots=True)
class RawOutcome:
    """What the supervisor observed, before the adapter interprets the exit status."""

    status: int  # raw wait status of the direct child (the runtime, e.g. bwrap)
    wall_time_s: float
    cpu_time_s: float
    memory_bytes: int | None  # cgroup peak charge; None: not measured
    oom_killed: bool
    memory_error_reported: bool  # rlimit fallback: stderr shows an allocation failure
    wall_timed_out: bool
    stdout_bytes: int
    stderr_bytes: int
    cgroup: bool  # limits were enforced by a cgroup


def _preexec(limits: Limits, cpus: Sequence[int] | None, ident: Identity,
             procs_files: Sequence[str], use_cgroup_memory: bool,
             use_cgroup_pids: bool) -> Callable[[], None]:
    """The child-side setup; only os/resource calls (runs between fork and exec)."""
    pid_bytes_holder: list[bytes] = []

    def setup() -> None:
        pid_bytes_holder.append(str(os.getpid()).encode())
        for f in procs_files:
            fd = os.open(f, os.O_WRONLY)
            try:
                os.write(fd, pid_bytes_holder[0])
            finally:
                os.close(fd)
        hard_cpu = math.ceil(limits.cpu_hard_s)
        resource.setrlimit(resource.RLIMIT_CPU, (hard_cpu, hard_cpu + 1))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NOFILE, (512, 512))
        if limits.output_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limits.output_bytes, limits.output_bytes))
        if limits.stack_bytes is not None:
            resource.setrlimit(resource.RLIMIT_STACK, (limits.stack_bytes, limits.stack_bytes))
        if limits.memory_bytes is not None and not use_cgroup_memory:
            # Fallback without a memory cgroup: cap the address space (coarser).
            cap = limits.memory_bytes + 64 * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        if limits.processes is not None and not use_cgroup_pids and ident.uid is not None:
            # Fallback: per-uid process cap; sound only because each CPU slot has its own uid.
            resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
        if cpus:
            os.sched_setaffinity(0, cpus)
        if ident.gid is not None:
            os.setgroups([])
            os.setresgid(ident.gid, ident.gid, ident.gid)
        if ident.uid is not None:
            os.setresuid(ident.uid, ident.uid, ident.uid)

    return setup


def _kill_tree(proc: subprocess.Popen[bytes], cg: RunCgroup | None) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
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
                               "or unset GRADELINE_CGROUPS to fall back to rlimits") from e
    mem_cg = cg is not None and ("memory" in cg.dirs or "unified" in cg.dirs)
    pids_cg = cg is not None and ("pids" in cg.dirs or "unified" in cg.dirs)
    preexec = _preexec(limits, cpus, identity, cg.procs_files if cg else [], mem_cg, pids_cg)
    fin = os.open(stdin if stdin is not None else os.devnull, os.O_RDONLY)
    fout = os.open(stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    ferr = os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    timed_out = threading.Event()
    _become_subreaper()
    try:
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                list(argv), stdin=fin, stdout=fout, stderr=ferr, env=dict(env or {}),
                preexec_fn=preexec, start_new_session=True, pass_fds=tuple(pass_fds),
                cwd=cwd, close_fds=True,
            )
        except (OSError, subprocess.SubprocessError) as e:
            raise SandboxError(f"cannot start {argv[0]!r}: {e}") from e

        def on_timeout() -> None:
            timed_out.set()
            _kill_tree(proc, cg)

        timer = threading.Timer(limits.wall_s, on_timeout)
        timer.daemon = True
        timer.start()
        try:
            _, status, ru = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        # Nothing may outlive the run: kill leftovers (detached daemons) in the cgroup.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        cpu = ru.ru_utime + ru.ru_stime
        memory_error = False
        if cg is None:
            with contextlib.suppress(OSError):
                with Path(stderr).open("rb") as f:
                    f.seek(max(0, os.fstat(f.fileno()).st_size - 4096))
                    tail = f.read()
                memory_error = any(m in tail for m in MEMORY_ERROR_MARKERS)
        peak = None
        oom = False
        _reap_orphans(identity.uid if identity.uid is not None else os.getuid())
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
            wall_timed_out=timed_out.is_set(), stdout_bytes=os.fstat(fout).st_size,
            stderr_bytes=os.fstat(ferr).st_size, cgroup=cg is not None,
        )
    finally:
        for fd in (fin, fout, ferr):
            os.close(fd)
        if cg is not None:
            cg.remove()


def interpret(raw: RawOutcome, limits: Limits, exit_code: int | None, sig: int | None,
              message: str = "") -> RunMeta:
    """Turn an observation plus the program's own exit status into a RunMeta.

    Order: memory (the OOM killer acted) > wall clock > CPU > output size.
    """
    termination: TerminationReason | None = None
    if raw.oom_killed:
        termination = TerminationReason.MEMORY
    elif not raw.cgroup and limits.memory_bytes is not None and (sig is not None or exit_code) \
            and raw.memory_error_reported:
        termination = TerminationReason.MEMORY  # rlimit fallback: a heuristic, see CONTRACT
    elif raw.wall_timed_out:
        termination = TerminationReason.WALL_TIME
    elif raw.cpu_time_s > limits.cpu_time_s or sig == signal.SIGXCPU:
        termination = TerminationReason.CPU_TIME
    elif sig == signal.SIGXFSZ or (limits.output_bytes is not None
                                   and raw.stdout_bytes >= limits.output_bytes):
        termination = TerminationReason.OUTPUT
    return RunMeta(
        exit_code=exit_code, signal=sig, cpu_time_s=round(raw.cpu_time_s, 6),
        wall_time_s=round(raw.wall_time_s, 6), memory_bytes=raw.memory_bytes,
        stdout_bytes=raw.stdout_bytes,
        stderr_bytes=raw.stderr_bytes, termination=termination, message=message,
    )


def split_exit(code: int) -> tuple[int | None, int | None]:
    """A shell-style exit code (128+N means signal N) as (exit_code, signal)."""
    if code > 128 and (code - 128) in {s.value for s in signal.Signals}:
        return None, code - 128
    return code, None
