"""An assignment graded by the course's unit tests and their JUnit XML report, with no
autograder written for it: a package directory holding ``gradeline.yaml`` with
``type: unittest`` and the staff's tests, run by ``grader.judge.unittests``.

    gradeline.yaml
        type: unittest
        command: python3 -m pytest -q --junitxml=$GRADELINE_REPORTS/pytest.xml tests
        tests: tests                 # the staff's tests in the package (default: tests)
        tests_at: tests              # where they appear in the submission's tree
        visibility:                  # test files (globs, relative to tests) -> Gradescope's
          "test_hidden*.py": hidden  # visibilities; files named by none are in every run
        points: {"*TestEdge*": 2}    # a test's points by its id (fnmatch), first match wins
        default_points: 1
        setup: setup                 # optional: a directory with setup.sh (and what it
                                     # needs, e.g. a pom.xml to warm) built into the
                                     # assignment's image; without it the grading image
        timeout_s: 60                # one run's wall time; memory_mib, processes as for
        max_score: 10                # type gradescope; languages too

The command runs once per visibility that has test files, with only that visibility's
files (and the shared ones) present, read-only, so that a hidden test's source is only
in a run whose results the student does not see before staff release them.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from grader.core.limits import Limits
from grader.core.visibility import COURSE_VISIBILITY
from grader.formats.gradescope import package as agp
from grader.formats.pkgfs import PackageFS

UNITTEST_KEYS = {"type", "command", "tests", "tests_at", "visibility", "points",
                 "default_points", "setup", "timeout_s", "memory_mib", "processes",
                 "max_score", "languages"}
#: the visibilities in the course file's words, in the order their runs go (visible
#: first); Gradescope's names for them are taken too
VISIBILITIES = tuple(g.removeprefix("gradescope/") for g in agp.GROUPS)


@dataclass(frozen=True, slots=True)
class UnitTests:
    """How a unit-test assignment is run and scored."""

    command: str
    tests: Path  # the staff's test directory in the package
    tests_at: str  # its place in the submission's tree (relative)
    visibility: tuple[tuple[str, str], ...]  # (glob over test files, visibility)
    points: tuple[tuple[str, float], ...]  # (glob over test ids, points)
    default_points: float
    setup: Path | None  # a directory with setup.sh: the assignment's image
    files: tuple[tuple[str, tuple[str, ...]], ...]  # visibility -> its test files

    def files_of(self) -> dict[str, tuple[str, ...]]:
        """Each visibility's test files (relative); "" holds the shared ones. Walked once,
        when the package is loaded, not per run."""
        return dict(self.files)

    def runs(self) -> list[str]:
        """The visibilities with test files of their own, or the visible one alone."""
        files = self.files_of()
        mine = [v for v in VISIBILITIES if v != "visible" and files[v]]
        return ["visible", *mine] if files["visible"] or files[""] or not mine else mine


def _test_files(tests: Path, visibility: tuple[tuple[str, str], ...]
                ) -> tuple[tuple[str, tuple[str, ...]], ...]:
    out: dict[str, list[str]] = {v: [] for v in ("", *VISIBILITIES)}
    for p in sorted(tests.rglob("*")):
        if not p.is_file() or "__pycache__" in p.parts:
            continue
        rel = p.relative_to(tests).as_posix()
        out[next((v for glob, v in visibility if fnmatch.fnmatchcase(rel, glob)), "")].append(rel)
    return tuple((v, tuple(files)) for v, files in out.items())


def is_unittest_package(gl: dict[str, Any]) -> bool:
    """Whether ``gradeline.yaml`` (read) makes the package a unit-test assignment."""
    return gl.get("type") == "unittest"


def _relative(fs: PackageFS, gl_path: Path, key: str, value: Any) -> str:
    if not isinstance(value, str) or not value or PurePosixPath(value).is_absolute() or \
            ".." in PurePosixPath(value).parts:
        raise fs.error(gl_path, f"{key} must be a relative path inside the tree, not {value!r}")
    return PurePosixPath(value).as_posix()


def _mapping(fs: PackageFS, gl_path: Path, gl: dict[str, Any], key: str) -> dict[str, Any]:
    value = gl.get(key) or {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise fs.error(gl_path, f"{key} must map globs to values, not {value!r}")
    return value


def load_unit_tests(fs: PackageFS, root: Path, gl: dict[str, Any], gl_path: Path) -> UnitTests:
    """The checked ``type: unittest`` configuration; :raises ProblemFormatError:."""
    unknown = sorted(set(gl) - UNITTEST_KEYS)
    if unknown:
        raise fs.error(gl_path, f"unknown keys {unknown} for type unittest; known: "
                                f"{sorted(UNITTEST_KEYS)}")
    if "max_score" not in gl:
        raise fs.error(gl_path, "type unittest needs max_score: the assignment's total (a "
                                "run that stops or does not build names no tests to count)")
    command = gl.get("command")
    if not isinstance(command, str) or not command.strip():
        raise fs.error(gl_path, "type unittest needs command: the test command, writing its "
                                "JUnit XML report into $GRADELINE_REPORTS (e.g. python3 -m "
                                "pytest --junitxml=$GRADELINE_REPORTS/pytest.xml tests)")
    tests = root / _relative(fs, gl_path, "tests", gl.get("tests", "tests"))
    if not tests.is_dir() or tests.is_symlink():
        raise fs.error(gl_path, f"no test directory {fs.rel(tests)} in the package (tests: "
                                "names it)")
    for p in tests.rglob("*"):
        fs.check_link(p)
    vis = _mapping(fs, gl_path, gl, "visibility")
    vis = {k: COURSE_VISIBILITY.get(v, v) if isinstance(v, str) else v for k, v in vis.items()}
    bad = {k: v for k, v in vis.items() if v not in VISIBILITIES}
    if bad:
        raise fs.error(gl_path, f"visibility {bad}: each must be one of {list(VISIBILITIES)} "
                                "(or Gradescope's after_due_date, after_published)")
    points = _mapping(fs, gl_path, gl, "points")
    visibility = tuple((str(k), str(v)) for k, v in vis.items())
    setup = None
    if "setup" in gl or (root / "setup").is_dir():
        setup = root / _relative(fs, gl_path, "setup", gl.get("setup", "setup"))
        if not (setup / "setup.sh").is_file():
            raise fs.error(gl_path, f"setup {fs.rel(setup)} has no setup.sh")
    return UnitTests(
        command=command.strip(), tests=tests,
        tests_at=_relative(fs, gl_path, "tests_at", gl.get("tests_at", "tests")),
        visibility=visibility, files=_test_files(tests, visibility),
        points=tuple((k, fs.number(gl_path, f"points[{k!r}]", v, low=0.0))
                     for k, v in points.items()),
        default_points=fs.number(gl_path, "default_points", gl.get("default_points", 1.0),
                                 low=0.0),
        setup=setup)


def unittest_limits(fs: PackageFS, gl: dict[str, Any], gl_path: Path) -> Limits:
    """One run's limits: as a Gradescope autograder's (``timeout_s``, ``memory_mib``,
    ``processes``), a minute by default rather than Gradescope's ten."""
    return agp.autograder_limits(fs, {"timeout_s": 60, **gl}, gl_path)
