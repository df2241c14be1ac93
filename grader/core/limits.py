"""Resource limits of one sandboxed run, in SI base units (seconds, bytes)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    """Limits of one run; ``None`` means "not limited by gradeline".

    :param cpu_time_s: soft CPU-time limit; a run that uses more is TLE.
    :param cpu_time_hard_s: CPU time after which the run is killed; ``None`` means
        ``cpu_time_s`` plus a margin, so that a slightly slow run is still measured.
    :param wall_time_s: wall-clock limit (sleeping or blocked programs); ``None``
        means ``max(2 * cpu_time_s, cpu_time_s + 1)``: DOMjudge's default overshoot
        for a 1 s limit (1 s or 10 %, whichever is more), always above the CPU kill
        point, so a CPU-bound run on an exclusive core ends by its CPU limit.
    :param memory_bytes: memory (RSS + page cache + tmpfs, cgroup-accounted) limit.
    :param stack_bytes: stack size limit (RLIMIT_STACK).
    :param processes: limit on processes and threads (cgroup pids.max).
    :param output_bytes: limit on any single file the run writes, stdout included
        (RLIMIT_FSIZE); reaching it on stdout is OLE.
    :param tmpfs_bytes: size of the private /tmp.
    :param runtime_bytes: memory the language's runtime commits for itself beyond the
        program's data (thread stacks, JIT code, GC tables): where no cgroup limits
        memory, the commit limit (RLIMIT_DATA) is widened by this much.
    :param reserve_bytes: address space the runtime reserves without committing it
        (Go's arenas, the JVM's class space, V8's cage): where no cgroup limits memory,
        the address-space backstop (RLIMIT_AS) is widened by this much. Both come from
        languages.yaml, so that a limit written for C is as fair to Go, Java or Node.
    :param cores: cores the run may keep busy at once (a parallel program's shape): its
        wall-clock limit is the one that ends it, CPU time summed over its threads is a
        guard (``formats.resources.shaped_limits``).
    """

    cpu_time_s: float
    cpu_time_hard_s: float | None = None
    wall_time_s: float | None = None
    memory_bytes: int | None = 256 * MIB
    stack_bytes: int | None = 64 * MIB
    processes: int | None = 32
    output_bytes: int | None = 64 * MIB
    tmpfs_bytes: int | None = 64 * MIB
    runtime_bytes: int = 0
    reserve_bytes: int = 0
    cores: int = 1

    def __post_init__(self) -> None:
        if not (self.cpu_time_s > 0 and math.isfinite(self.cpu_time_s)):
            raise ValueError(f"cpu_time_s must be a positive number, not {self.cpu_time_s!r}")
        for name in ("memory_bytes", "stack_bytes", "processes", "output_bytes", "tmpfs_bytes"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive or None, not {value!r}")
        if self.cores < 1:
            raise ValueError(f"cores must be at least 1, not {self.cores!r}")
        if self.runtime_bytes < 0 or self.reserve_bytes < 0:
            raise ValueError("runtime_bytes and reserve_bytes must not be negative")
        if self.cpu_time_hard_s is not None and self.cpu_time_hard_s < self.cpu_time_s:
            raise ValueError("cpu_time_hard_s must not be below cpu_time_s")

    @property
    def cpu_hard_s(self) -> float:
        """CPU seconds after which the run is killed."""
        if self.cpu_time_hard_s is not None:
            return self.cpu_time_hard_s
        return self.cpu_time_s * 1.25 + 0.5

    @property
    def wall_s(self) -> float:
        """Wall-clock seconds after which the run is killed."""
        if self.wall_time_s is not None:
            return self.wall_time_s
        return max(2 * self.cpu_time_s, self.cpu_time_s + 1.0)

    def scaled(self, *, cpu_time_s: float | None = None, **changes: int | None) -> Limits:
        """A copy with some fields changed (hard limits recomputed when derived)."""
        if cpu_time_s is not None:
            return replace(self, cpu_time_s=cpu_time_s, **changes)  # type: ignore[arg-type]
        return replace(self, **changes)  # type: ignore[arg-type]

    def slower(self, factor: float) -> Limits:
        """Every time limit times ``factor`` (a language's time multiplier): derived
        limits follow by themselves, a course's own wall or hard CPU limit keeps its
        ratio to the CPU limit, so a Java run is not held to a wall limit set for C."""
        def times(v: float | None) -> float | None:
            return None if v is None else v * factor
        return replace(self, cpu_time_s=self.cpu_time_s * factor,
                       cpu_time_hard_s=times(self.cpu_time_hard_s),
                       wall_time_s=times(self.wall_time_s))

    def for_runtime(self, runtime_bytes: int, reserve_bytes: int) -> Limits:
        """A copy for a language runtime that commits ``runtime_bytes`` for itself and
        reserves ``reserve_bytes`` of address space it never commits."""
        return replace(self, runtime_bytes=runtime_bytes, reserve_bytes=reserve_bytes)


#: Compilation gets its own, more generous limits (g++ is big), but bounded, so
#: that compile-time bombs (#include "/dev/zero", template explosions) end in CE.
DEFAULT_COMPILE_LIMITS = Limits(
    cpu_time_s=30.0,
    wall_time_s=60.0,
    memory_bytes=1024 * MIB,
    stack_bytes=64 * MIB,
    processes=32,
    output_bytes=256 * MIB,
    tmpfs_bytes=512 * MIB,
)

#: Custom output validators are trusted more than submissions, but still bounded.
DEFAULT_VALIDATOR_LIMITS = Limits(
    cpu_time_s=30.0,
    wall_time_s=60.0,
    memory_bytes=1024 * MIB,
    stack_bytes=64 * MIB,
    processes=16,
    output_bytes=64 * MIB,
    tmpfs_bytes=64 * MIB,
)
