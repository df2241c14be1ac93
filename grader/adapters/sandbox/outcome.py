"""From what the supervisor observed to a RunMeta: which limit ended a run, if any.

Kept apart from the supervisor (which starts and watches the run) because it is a
pure decision, tested on its own; the runtimes pass in the program's own exit
status, which each of them reports differently.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

from grader.core.limits import Limits
from grader.core.runmeta import RunMeta, TerminationReason


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
