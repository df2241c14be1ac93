"""From what the supervisor observed to a RunMeta: which limit ended a run, if any.

Kept apart from the supervisor (which starts and watches the run) because it is a
pure decision, tested on its own; the runtimes pass in the program's own exit
status, which each of them reports differently.
"""

from __future__ import annotations

import contextlib
import os
import signal
from dataclasses import dataclass, replace

from grader.core.limits import Limits
from grader.core.runmeta import RunMeta, TerminationReason
from grader.judge.ports import RunRequest


@dataclass(frozen=True, slots=True)
class RawOutcome:
    """What gl-runner measured of one run, before it is interpreted."""

    wall_time_s: float
    cpu_time_s: float
    memory_bytes: int | None  # cgroup peak charge, else max RSS; None: not measured
    oom_killed: bool
    memory_error_reported: bool  # rlimit fallback: stderr shows an allocation failure
    wall_timed_out: bool
    stdout_bytes: int
    stderr_bytes: int
    cgroup: bool  # the memory limit was enforced by a cgroup


def interpret(raw: RawOutcome, limits: Limits, exit_code: int | None, sig: int | None,
              message: str = "") -> RunMeta:
    """Turn an observation plus the program's own exit status into a RunMeta.

    Order: memory (the OOM killer acted) > CPU > wall clock > output size. CPU
    before wall: a CPU-bound program on a loaded host can reach the wall limit
    first, but what it exceeded is its CPU time (the verdict is TLE either way).
    """
    termination: TerminationReason | None = None
    if raw.oom_killed:
        termination = TerminationReason.MEMORY
    elif not raw.cgroup and limits.memory_bytes is not None and (sig is not None or exit_code) \
            and raw.memory_error_reported:
        termination = TerminationReason.MEMORY  # rlimit fallback: a heuristic, see CONTRACT
    elif not raw.cgroup and limits.memory_bytes is not None and raw.memory_bytes is not None \
            and raw.memory_bytes >= limits.memory_bytes:
        # rlimit fallback: the address-space limit has headroom, so a program can hold
        # more than its memory limit resident (and then spin on failing allocations)
        termination = TerminationReason.MEMORY
    elif raw.cpu_time_s > limits.cpu_time_s or sig == signal.SIGXCPU:
        termination = TerminationReason.CPU_TIME
    elif raw.wall_timed_out or raw.wall_time_s > limits.wall_s:
        # over the limit is TLE even where the runner's clock waits longer (rlimits)
        termination = TerminationReason.WALL_TIME
    elif sig == signal.SIGXFSZ or (limits.output_bytes is not None
                                   and raw.stdout_bytes >= limits.output_bytes):
        termination = TerminationReason.OUTPUT
    return RunMeta(
        exit_code=exit_code, signal=sig, cpu_time_s=round(raw.cpu_time_s, 6),
        wall_time_s=round(raw.wall_time_s, 6), memory_bytes=raw.memory_bytes,
        stdout_bytes=raw.stdout_bytes,
        stderr_bytes=raw.stderr_bytes, termination=termination, message=message,
    )


MEMORY_ERROR_MARKERS = (b"MemoryError", b"bad_alloc", b"Cannot allocate memory",
                        b"out of memory", b"OutOfMemoryError", b"memory allocation of")


def from_reply(request: RunRequest, reply: dict[str, str]) -> RunMeta:
    """A run's RunMeta from gl-runner's reply (``key: value``), with what the run's
    standard error says of a failed allocation where no cgroup measured memory."""
    def num(key: str) -> int | None:
        return int(reply[key]) if key in reply else None

    cgroup = reply.get("cgroup") == "1"
    peak = num("memory-peak-bytes")
    memory_error = False
    if not cgroup:
        with contextlib.suppress(OSError), request.stderr.open("rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - 4096))
            tail = f.read()
            memory_error = any(m in tail for m in MEMORY_ERROR_MARKERS)
    raw = RawOutcome(
        wall_time_s=float(reply.get("wall-time-s", 0.0)),
        cpu_time_s=float(reply.get("cpu-time-s", 0.0)),
        memory_bytes=peak if cgroup else num("max-rss-bytes"),
        oom_killed=reply.get("oom-killed") == "1", memory_error_reported=memory_error,
        wall_timed_out=reply.get("wall-timed-out") == "1",
        stdout_bytes=num("stdout-bytes") or 0, stderr_bytes=num("stderr-bytes") or 0,
        cgroup=cgroup)
    message = f"cannot execute {request.argv[0]}: {reply['exec-error']}" \
        if "exec-error" in reply else ""
    meta = interpret(raw, request.limits, num("exit-code"), num("signal"), message)
    if "exited-at" in reply:
        meta = replace(meta, exited_at=float(reply["exited-at"]))
    if "threads-peak" in reply:
        meta = replace(meta, threads_peak=int(reply["threads-peak"]))
    return meta
