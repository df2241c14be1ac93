"""The meta record of one sandboxed run: a typed value and its ``key: value`` text form.

See grader/adapters/sandbox/CONTRACT.md. Any key may be missing (not measured);
readers must ignore keys they do not know, and ``message`` is for humans.
"""

from __future__ import annotations

import signal as _signal
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from grader.core.limits import Limits


class TerminationReason(StrEnum):
    """Why the supervisor (not the program) ended a run."""

    CPU_TIME = "cpu-time"
    WALL_TIME = "wall-time"
    MEMORY = "memory"
    OUTPUT = "output"


@dataclass(frozen=True, slots=True)
class RunMeta:
    """What happened in one run. Optional fields mean "not measured"."""

    exit_code: int | None
    signal: int | None
    cpu_time_s: float
    wall_time_s: float
    memory_bytes: int | None = None  # peak cgroup charge (what the limit enforces)
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    termination: TerminationReason | None = None
    message: str = ""
    #: CLOCK_MONOTONIC (s) when the program's exit was seen: orders runs that ran
    #: together (an interactive test's submission and validator)
    exited_at: float | None = None
    #: the most threads the run's processes had at once (counted where asked: a
    #: parallel program's, to tell it oversubscribed its cores)
    threads_peak: int | None = None

    @property
    def ok(self) -> bool:
        """The program exited normally with code 0 and no limit was hit."""
        return self.termination is None and self.signal is None and self.exit_code == 0

    @property
    def signal_name(self) -> str | None:
        if self.signal is None:
            return None
        try:
            return _signal.Signals(self.signal).name
        except ValueError:
            return f"SIG{self.signal}"

    def to_text(self) -> str:
        """The flat ``key: value`` form (one line per measured key)."""
        lines = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            key = f.name.replace("_", "-")
            text = str(value).replace("\n", " ")
            lines.append(f"{key}: {text}")
        return "\n".join(lines) + "\n"

    @classmethod
    def from_text(cls, text: str) -> RunMeta:
        """Parse the ``key: value`` form; unknown keys are ignored.

        :raises ValueError: when a required key is missing or a value is malformed.
        """
        raw: dict[str, str] = {}
        for line in text.splitlines():
            if not line.strip():
                continue
            key, sep, value = line.partition(":")
            if not sep:
                raise ValueError(f"meta line without ':': {line!r}")
            raw[key.strip().replace("-", "_")] = value.strip()

        def opt_int(name: str) -> int | None:
            return int(raw[name]) if name in raw else None

        try:
            return cls(
                exit_code=opt_int("exit_code"),
                signal=opt_int("signal"),
                cpu_time_s=float(raw["cpu_time_s"]),
                wall_time_s=float(raw["wall_time_s"]),
                memory_bytes=opt_int("memory_bytes"),
                stdout_bytes=int(raw.get("stdout_bytes", 0)),
                stderr_bytes=int(raw.get("stderr_bytes", 0)),
                termination=TerminationReason(raw["termination"]) if "termination" in raw else None,
                message=raw.get("message", ""),
                exited_at=float(raw["exited_at"]) if "exited_at" in raw else None,
                threads_peak=opt_int("threads_peak"),
            )
        except KeyError as e:
            raise ValueError(f"meta lacks required key {e.args[0]!r}") from e


#: a run that used less CPU than this share of its wall time was mostly not running:
#: blocked (a deadlock, a read that never returns) or asleep
IDLE_FRACTION = 0.1


def describe_termination(meta: RunMeta, limits: Limits) -> str:
    """Why a run ended, in words for the student's feedback."""
    t = meta.termination
    if t is None:
        if meta.signal is not None:
            return f"killed by {meta.signal_name}"
        return f"exit code {meta.exit_code}" if meta.exit_code else ""
    if t == "cpu-time":
        return f"CPU time {meta.cpu_time_s:.2f} s over the {limits.cpu_time_s:g} s limit"
    if t == "wall-time":
        text = f"wall time {meta.wall_time_s:.2f} s over the {limits.wall_s:g} s limit"
        if meta.cpu_time_s < IDLE_FRACTION * meta.wall_time_s:
            text += (f": no CPU progress for {meta.wall_time_s - meta.cpu_time_s:.1f} s "
                     f"({meta.cpu_time_s:.2f} s of CPU), a deadlock or waiting for input")
        return text
    if t == "memory":
        return f"memory over the {(limits.memory_bytes or 0) / 2**20:g} MiB limit"
    return f"output over the {(limits.output_bytes or 0) / 2**20:g} MiB limit"
