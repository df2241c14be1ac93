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
    status_text: str = ""  # what a gated runtime wrote on its status pipe
    released: bool = True  # gated: the runtime was confined and released


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
    elif raw.cpu_time_s > limits.cpu_time_s or sig == signal.SIGXCPU:
        termination = TerminationReason.CPU_TIME
    elif raw.wall_timed_out:
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


def split_exit(code: int) -> tuple[int | None, int | None]:
    """A shell-style exit code (128+N means signal N) as (exit_code, signal)."""
    if code > 128 and (code - 128) in {s.value for s in signal.Signals}:
        return None, code - 128
    return code, None
