"""``gradeline.yaml``'s ``resources:`` and ``reruns:``: the shape a parallel program is
graded on (``core.shape``), the limits that follow from it, and how often a failed test
of a parallel program is run again before its verdict stands.

A parallel program's time limit is **wall time on its allocation**: its threads may
keep every core busy, so CPU time summed over them is recorded and bounded only as a
guard (the time limit times its cores, with the usual margin), and its process and
thread limit is sized from the shape.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

from grader.core.limits import MIB, Limits
from grader.core.shape import EXCLUSIVE, SERIAL, Shape
from grader.formats.pkgfs import PackageFS
from grader.formats.problem import Problem

RESOURCE_KEYS = ("cores", "nodes", "ranks", "threads", "gpus", "memory_mib", "exclusive")
#: a failed test of a parallel program is run this many times more (a data race
#: fails some runs only); serial programs are deterministic and run once
DEFAULT_RERUNS = 4
MAX_RERUNS = 20


def _count(fs: PackageFS, gl_path: Path, key: str, value: object, low: int,
           high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise fs.error(gl_path, f"{key} must be a whole number from {low} to {high}, not "
                                f"{value!r}")
    return value


def read_shape(fs: PackageFS, gl: dict[str, Any], gl_path: Path) -> Shape:
    """The package's shape (``resources:``), or the serial one when it names none.

    :raises ProblemFormatError: naming the key and what it may be.
    """
    spec = gl.get("resources")
    if spec is None:
        return SERIAL
    if not isinstance(spec, dict):
        raise fs.error(gl_path, "resources must be a mapping, e.g. resources: {cores: 4, "
                                "threads: 4}")
    unknown = sorted(set(map(str, spec)) - set(RESOURCE_KEYS))
    if unknown:
        raise fs.error(gl_path, f"resources: unknown keys {unknown} (known: "
                                f"{', '.join(RESOURCE_KEYS)})")
    cores = _count(fs, gl_path, "resources.cores", spec.get("cores", 1), 1, 1024)
    nodes = _count(fs, gl_path, "resources.nodes", spec.get("nodes", 1), 1, 64)
    ranks = _count(fs, gl_path, "resources.ranks", spec.get("ranks", nodes), 1, 4096)
    threads = _count(fs, gl_path, "resources.threads",
                     spec.get("threads", cores if ranks == 1 else 1), 1, 4096)
    gpus = _count(fs, gl_path, "resources.gpus", spec.get("gpus", 0), 0, 16)
    memory = spec.get("memory_mib")
    if memory is not None:
        memory = _count(fs, gl_path, "resources.memory_mib", memory, 1, 1 << 24)
    exclusive = spec.get("exclusive", "cores")
    if exclusive not in EXCLUSIVE:
        raise fs.error(gl_path, f"resources.exclusive must be one of {list(EXCLUSIVE)}, not "
                                f"{exclusive!r}")
    try:
        return Shape(cores, nodes, ranks, threads, gpus, memory, exclusive)
    except ValueError as e:
        raise fs.error(gl_path, f"resources: {e}") from None


def read_reruns(fs: PackageFS, gl: dict[str, Any], gl_path: Path, shape: Shape) -> int:
    """How often a failed test is run again (``reruns:``; default: 4 for a parallel
    shape, 0 for a serial one)."""
    if "reruns" not in gl:
        return DEFAULT_RERUNS if shape.parallel else 0
    return _count(fs, gl_path, "reruns", gl["reruns"], 0, MAX_RERUNS)


def shaped_limits(limits: Limits, shape: Shape) -> Limits:
    """A run's limits for ``shape`` (see the module docstring); the serial shape's are
    the package's own."""
    if shape.serial:
        return limits
    procs = max(limits.processes or 0, shape.processes)
    memory = shape.memory_mib * MIB if shape.memory_mib else limits.memory_bytes
    if not shape.parallel:  # one core, more threads or a GPU: the serial limits, resized
        return replace(limits, processes=procs, memory_bytes=memory)
    wall = limits.wall_time_s if limits.wall_time_s is not None else limits.cpu_time_s
    cores = shape.cores
    return replace(limits, cpu_time_s=limits.cpu_time_s * cores, cpu_time_hard_s=None,
                   wall_time_s=wall, processes=procs, memory_bytes=memory, cores=cores)


def read_setup(fs: PackageFS, root: Path, gl: dict[str, Any], gl_path: Path) -> Path | None:
    """``setup:``: a directory of the package with a ``setup.sh`` that makes the
    package's own image (run once, as root, with the network, when the image is built:
    a CUDA assignment's nvcc, a library the course needs), or None: the grading image."""
    if "setup" not in gl:
        return None
    value = gl["setup"]
    if not isinstance(value, str) or not value or PurePosixPath(value).is_absolute() or \
            ".." in PurePosixPath(value).parts:
        raise fs.error(gl_path, f"setup must be a directory of the package (e.g. setup), "
                                f"not {value!r}")
    path = root / value
    if not (path / "setup.sh").is_file():
        raise fs.error(gl_path, f"setup {value}: no setup.sh there (the script that makes "
                                "the package's image)")
    return path


def on_one_node(problem: Problem) -> Problem:
    """``problem`` graded with all its ranks on one node (``Shape.on_one_node``): its CPU
    guard grows with the cores the one run then holds; the wall limit stays."""
    shape = problem.shape
    if shape.nodes == 1:
        return problem
    one = shape.on_one_node()
    lim = problem.limits
    return replace(problem, shape=one, limits=replace(
        lim, cpu_time_s=lim.cpu_time_s * one.cores / shape.cores, cpu_time_hard_s=None,
        cores=one.cores))
