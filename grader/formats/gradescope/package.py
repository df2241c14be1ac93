"""An assignment graded by a Gradescope autograder rather than by test data: a package
directory holding ``gradeline.yaml`` with ``type: gradescope`` and the autograder as
the course wrote it for Gradescope (``autograder.zip``, or an ``autograder/``
directory), run by ``grader.judge.gradescope``.

    gradeline.yaml
        type: gradescope
        autograder: autograder.zip   # default: autograder.zip, else autograder/
        timeout_s: 600               # one run_autograder's wall time (Gradescope's default)
        memory_mib: 1024             # its memory
        processes: 256               # its processes and threads
        max_score: 10                # optional; else the results' own max_score sum
        languages: [python3]         # optional: what a submission may be written in
        image: assignment            # its own image, built with setup.sh (default); or
                                     # base: the grading image as it is, setup.sh not run

The package is a :class:`~grader.formats.problem.Problem` with no test data and one
test group per visibility the autograder may give its tests (``gradescope/visible``,
``gradescope/after_deadline``, ``gradescope/after_release``, ``gradescope/hidden``),
so that a course's visibility rules, phases, exports and regrades work unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from grader.core.limits import MIB, Limits
from grader.formats.pkgfs import PackageFS
from grader.formats.tree import TestGroup

AUTOGRADER_KEYS = {"type", "autograder", "timeout_s", "memory_mib", "processes",
                   "max_score", "languages", "image"}
IMAGES = ("assignment", "base")
#: the groups an autograder's tests land in: Gradescope's visibilities, in the course
#: file's words (``grader.core.visibility.COURSE_VISIBILITY``)
GROUPS = ("gradescope/visible", "gradescope/after_deadline", "gradescope/after_release",
          "gradescope/hidden")
DEFAULT_TIMEOUT_S = 600.0
MAX_TIMEOUT_S = 2400.0  # Gradescope's own ceiling (40 minutes)
DEFAULT_MEMORY_MIB = 1024
DEFAULT_PROCESSES = 256
#: what the runtimes an autograder starts (Python, a JVM, Go) reserve and commit beyond
#: their data, where no cgroup limits memory (``Limits.runtime_bytes``/``reserve_bytes``)
RUNTIME_BYTES = 512 * MIB
RESERVE_BYTES = 16 * 1024 * MIB


def is_autograder_package(gl: dict[str, Any]) -> bool:
    """Whether ``gradeline.yaml`` (read) makes the package an autograder assignment."""
    return gl.get("type") == "gradescope"


def _number(fs: PackageFS, gl_path: Path, gl: dict[str, Any], key: str, default: float,
            low: float, high: float) -> float:
    return fs.number(gl_path, key, gl.get(key, default), low=low, high=high)


def check_keys(fs: PackageFS, gl: dict[str, Any], gl_path: Path) -> None:
    """A key this type does not read is a typo or a Kattis key that would be ignored."""
    unknown = sorted(set(gl) - AUTOGRADER_KEYS)
    if unknown:
        raise fs.error(gl_path, f"unknown keys {unknown} for type gradescope; known: "
                                f"{sorted(AUTOGRADER_KEYS)}")


def autograder_source(fs: PackageFS, root: Path, gl: dict[str, Any], gl_path: Path) -> Path:
    """The autograder as given: a zip or a directory inside the package."""
    given = gl.get("autograder")
    if given is None:
        for name in ("autograder.zip", "autograder"):
            if (root / name).exists():
                return root / name
        raise fs.error(gl_path, "type gradescope needs the autograder: put autograder.zip "
                                "(or an autograder/ directory) beside gradeline.yaml, or "
                                "name it with autograder:")
    if not isinstance(given, str) or not given or Path(given).is_absolute() or \
            ".." in Path(given).parts:
        raise fs.error(gl_path, f"autograder must be a path inside the package, not {given!r}")
    path = root / given
    if not path.exists():
        raise fs.error(gl_path, f"autograder {given!r}: no such file or directory in the "
                                "package")
    return path


def autograder_limits(fs: PackageFS, gl: dict[str, Any], gl_path: Path) -> Limits:
    """One run_autograder's limits: the time-out bounds its wall time and its CPU time
    alike (without a cgroup RLIMIT_CPU bounds each process, and the clock ends the run
    a second after the time-out, ``ContainerSandbox.wall_kill_s``)."""
    timeout = _number(fs, gl_path, gl, "timeout_s", DEFAULT_TIMEOUT_S, 1, MAX_TIMEOUT_S)
    memory = _number(fs, gl_path, gl, "memory_mib", DEFAULT_MEMORY_MIB, 64, 1 << 20)
    procs = _number(fs, gl_path, gl, "processes", DEFAULT_PROCESSES, 4, 1 << 16)
    return Limits(cpu_time_s=timeout, cpu_time_hard_s=timeout,
                  wall_time_s=timeout, memory_bytes=int(memory * MIB),
                  processes=int(procs), output_bytes=64 * MIB, tmpfs_bytes=256 * MIB,
                  runtime_bytes=RUNTIME_BYTES, reserve_bytes=RESERVE_BYTES)


def declared_max_score(fs: PackageFS, gl: dict[str, Any], gl_path: Path) -> float | None:
    """``max_score`` when the course gives it (else the results' own)."""
    if "max_score" not in gl:
        return None
    return _number(fs, gl_path, gl, "max_score", 0.0, 0.0, 1e9)


def image_choice(fs: PackageFS, gl: dict[str, Any], gl_path: Path) -> str:
    """``assignment`` (an image built with setup.sh) or ``base`` (the grading image)."""
    image = gl.get("image", "assignment")
    if image not in IMAGES:
        raise fs.error(gl_path, f"image must be one of {IMAGES}, not {image!r}")
    return str(image)


def autograder_groups() -> tuple[TestGroup, ...]:
    """One group per visibility, worth nothing ahead of a run (the results say)."""
    return tuple(TestGroup(g, 0.0, "proportional", (), ()) for g in GROUPS)
