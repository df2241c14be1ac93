"""The limits of ``problem.yaml`` (legacy and 2023-07/2025-09 keys) and gradeline's own
time limit overrides: run, compilation and validator limits, the time multipliers, and
where the time limit came from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from grader.core.limits import MIB, Limits
from grader.formats.pkgfs import PackageFS

#: gradeline's time limit when a package gives none and none was derived yet
#: (``gradeline check`` measures the accepted submissions under this one)
MEASURING_TIME_LIMIT_S = 10.0
#: ``validation_passes`` with ``validation: custom multi-pass`` is DOMjudge's extension
LEGACY_LIMITS = ("time_multiplier", "time_safety_margin", "memory", "output", "code",
                 "compilation_time", "compilation_memory", "validation_time",
                 "validation_memory", "validation_output", "time_limit", "validation_passes")
NEW_LIMITS = ("time_multipliers", "time_limit", "time_resolution", "memory", "output", "code",
              "compilation_time", "compilation_memory", "validation_time",
              "validation_memory", "validation_output", "validation_passes")
#: the spec's "typical system defaults" (MiB, KiB, seconds), used where a package is silent
SPEC_DEFAULTS = {"memory": 2048, "output": 8, "code": 128, "compilation_time": 60,
                 "compilation_memory": 2048, "validation_time": 60, "validation_memory": 2048,
                 "validation_output": 8, "validation_passes": 2}


@dataclass(frozen=True, slots=True)
class TimeMultipliers:
    """How a time limit follows from the submissions' run times.

    2023-07/2025-09: limit >= T_ac * ``ac_to_time_limit``, limit * ``time_limit_to_tle``
    <= T_tle, the smallest multiple of ``resolution``; legacy: T_ac * ``ac_to_time_limit``
    (its ``time_multiplier``, 5) rounded, and ``time_limit_to_tle`` its safety margin."""

    ac_to_time_limit: float = 2.0
    time_limit_to_tle: float = 1.5
    resolution: float = 1.0
    legacy: bool = False


def _number(fs: PackageFS, path: Path, key: str, value: Any, minimum: float = 0.0) -> float:
    return fs.number(path, key, value, above=minimum)


class PackageLimits(NamedTuple):
    """What a package's limits come to, each named."""

    run: Limits  # a submission's run (its CPU time: the time limit, or the measuring one)
    compile: Limits
    validator: Limits
    time_multipliers: TimeMultipliers
    validation_passes: int
    code_bytes: int
    time_limit_source: str | None  # gradeline.yaml, problem.yaml, .timelimit or None
    time_limit_s: float | None  # None: still to be derived (gradeline check)


def _stack_and_processes(fs: PackageFS, gl: dict[str, Any], gl_path: Path, memory: int
                         ) -> tuple[int, int]:
    """gradeline.yaml's ``stack_mib`` (1 MiB to 1 TiB) and ``processes`` (a whole number).

    The default stack is below the memory limit, so that runaway recursion is a SIGSEGV
    (RE), not a race with the OOM killer: at most 64 MiB and at most half the memory."""
    stack = min(64 * MIB, memory // 2)
    if "stack_mib" in gl:
        stack = int(fs.number(gl_path, "stack_mib", gl["stack_mib"], low=1, high=MIB) * MIB)
    procs = fs.number(gl_path, "processes", gl.get("processes", 32), low=1, high=1 << 22)
    if not procs.is_integer():
        raise fs.error(gl_path, f"processes must be a whole number, not {procs:g}")
    return stack, int(procs)


def read_limits(fs: PackageFS, path: Path, lim: dict[str, Any], legacy: bool,
                gl: dict[str, Any], gl_path: Path) -> PackageLimits:
    """The package's limits from problem.yaml's ``limits`` (``lim``) and gradeline.yaml
    (``gl``), checked against the spec of its format version."""
    known = LEGACY_LIMITS if legacy else NEW_LIMITS
    unknown = sorted(str(k) for k in lim if str(k) not in known)
    if unknown:
        raise fs.error(path, f"unknown limits {unknown}; known: {sorted(known)}")

    def get(key: str) -> float:
        if key in lim:
            return _number(fs, path, f"limits.{key}", lim[key])
        return float(SPEC_DEFAULTS[key])

    if legacy:
        tm = TimeMultipliers(get_opt(fs, path, lim, "time_multiplier", 5.0),
                             get_opt(fs, path, lim, "time_safety_margin", 2.0), 1.0, True)
    else:
        mult = lim.get("time_multipliers") or {}
        if not isinstance(mult, dict) or set(map(str, mult)) - {"ac_to_time_limit",
                                                                 "time_limit_to_tle"}:
            raise fs.error(path, f"limits.time_multipliers must map ac_to_time_limit and "
                                 f"time_limit_to_tle to numbers >= 1, not {mult!r}")
        tm = TimeMultipliers(get_opt(fs, path, mult, "ac_to_time_limit", 2.0, 1.0),
                             get_opt(fs, path, mult, "time_limit_to_tle", 1.5, 1.0),
                             get_opt(fs, path, lim, "time_resolution", 1.0))
    time_limit: float | None = None
    source: str | None = None
    if "time_limit_s" in gl:
        time_limit = _number(fs, gl_path, "time_limit_s", gl["time_limit_s"])
        source = "gradeline.yaml"
    elif "time_limit" in lim:
        time_limit = _number(fs, path, "limits.time_limit", lim["time_limit"])
        source = "problem.yaml"
    else:
        tl = fs.root / ".timelimit"
        if tl.is_file():
            try:
                time_limit = _number(fs, tl, ".timelimit", float(tl.read_text().split()[0]))
            except (ValueError, IndexError, OSError):
                raise fs.error(tl, "must hold a time limit in seconds") from None
            source = ".timelimit"
    memory = int(get("memory") * MIB)
    output = int(get("output") * MIB)
    stack, procs = _stack_and_processes(fs, gl, gl_path, memory)
    wall: float | None = None  # None: Limits' default, max(2x, x+1)
    if "wall_time_s" in gl:
        wall = _number(fs, gl_path, "wall_time_s", gl["wall_time_s"])
        if time_limit is not None and wall < time_limit:
            raise fs.error(gl_path, f"wall_time_s ({wall:g}) must not be "
                               f"below the time limit ({time_limit:g} s)")
    limits = Limits(cpu_time_s=time_limit or MEASURING_TIME_LIMIT_S, wall_time_s=wall,
                    memory_bytes=memory, output_bytes=output, stack_bytes=stack,
                    processes=procs)
    compile_limits = Limits(cpu_time_s=get("compilation_time"),
                            wall_time_s=2 * get("compilation_time"),
                            memory_bytes=int(get("compilation_memory") * MIB),
                            stack_bytes=64 * MIB, processes=32, output_bytes=256 * MIB,
                            tmpfs_bytes=512 * MIB)
    validator_limits = Limits(cpu_time_s=get("validation_time"),
                              wall_time_s=2 * get("validation_time"),
                              memory_bytes=int(get("validation_memory") * MIB),
                              stack_bytes=64 * MIB, processes=16,
                              output_bytes=int(get("validation_output") * MIB),
                              tmpfs_bytes=64 * MIB)
    passes = 2
    if "validation_passes" in lim:
        v = lim["validation_passes"]
        if isinstance(v, bool) or not isinstance(v, int) or v < 2:
            raise fs.error(path, f"limits.validation_passes must be an integer >= 2, not {v!r}")
        passes = v
    code = int(get("code") * 1024)
    return PackageLimits(limits, compile_limits, validator_limits, tm, passes, code, source,
                         time_limit)


def get_opt(fs: PackageFS, path: Path, m: Mapping[str, Any], key: str, default: float,
            minimum: float = 0.0) -> float:
    """An optional number of a mapping, at least ``minimum`` (> 0 when 0)."""
    if key not in m:
        return default
    if minimum:
        return fs.number(path, key, m[key], low=minimum)
    return fs.number(path, key, m[key], above=0.0)
