"""The one entry that reads an assignment package: it looks at what the package is and
hands it to its format's reader (a Kattis problem package; a Gradescope autograder,
Otter's among them; the course's unit tests). Every loading error names the problem
and the file (``ProblemFormatError``); symbolic links must stay inside the package."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from grader.core.errors import ProblemFormatError
from grader.formats.gradescope import package as agp
from grader.formats.gradescope.autograder import AutograderError, check_source
from grader.formats.kattis.metadata import languages_of, title_of
from grader.formats.kattis.package import load_kattis
from grader.formats.pkgfs import PackageFS
from grader.formats.problem import Problem, package_version
from grader.formats.unittests import package as utp

#: gradeline.yaml's ``type:`` of a package that is not a Kattis problem package
PACKAGE_TYPES = ("gradescope", "unittest")


def load_problem(path: str | Path, *, require_time_limit: bool = True) -> Problem:
    """Load and check an assignment package of any type.

    :param require_time_limit: False to load a package whose time limit is still to
        be derived (``gradeline check``); its runs then use MEASURING_TIME_LIMIT_S.
    :raises ProblemFormatError: naming the problem and file on any defect.
    """
    root = Path(path).resolve()
    if not root.is_dir():
        raise ProblemFormatError(root.name, str(root), "is not a directory")
    fs = PackageFS(root.name, root)
    gl_path = root / "gradeline.yaml"
    gl = fs.read_yaml(gl_path)
    if "type" in gl and gl["type"] not in PACKAGE_TYPES:
        raise fs.error(gl_path, f"type: {gl['type']!r} is not a package type: use "
                                f"{' or '.join(PACKAGE_TYPES)} (a Kattis package has no "
                                "type: here)")
    if agp.is_autograder_package(gl) or utp.is_unittest_package(gl):
        return _load_autograder_package(fs, root, gl, gl_path)
    return load_kattis(fs, require_time_limit=require_time_limit)


def _load_autograder_package(fs: PackageFS, root: Path, gl: dict[str, Any],
                             gl_path: Path) -> Problem:
    """A package graded by a Gradescope autograder or by unit tests."""
    unit = None
    if utp.is_unittest_package(gl):
        unit = utp.load_unit_tests(fs, root, gl, gl_path)
        limits = utp.unittest_limits(fs, gl, gl_path)
    else:
        agp.check_keys(fs, gl, gl_path)
        limits = agp.autograder_limits(fs, gl, gl_path)
    meta = fs.read_yaml(root / "problem.yaml")
    source = None if unit else agp.autograder_source(fs, root, gl, gl_path)
    if source is not None:
        _checked(fs, source, crc=False)
    return Problem(
        short_name=root.name, title=title_of(meta.get("name", root.name)), path=root,
        version=package_version(root), limits=limits, compile_limits=limits,
        validator_limits=limits, validation="default", validator_flags=(),
        validator_dir=None, groups=agp.autograder_groups(),
        languages=languages_of(fs, {}, root / "problem.yaml", gl, gl_path),
        types=frozenset({"scoring"}), time_limit_source="gradeline.yaml",
        autograder=source,
        autograder_max_score=agp.declared_max_score(fs, gl, gl_path),
        autograder_image=("assignment" if unit.setup else "base") if unit else
        agp.image_choice(fs, gl, gl_path), unit_tests=unit)


def _checked(fs: PackageFS, source: Path, *, crc: bool) -> None:
    try:
        check_source(source, crc=crc)
    except AutograderError as e:
        raise fs.error(source, str(e).removeprefix(f"{source}: ")) from None


def verify_package(problem: Problem) -> None:
    """What only the checks (``gradeline check``, ``course check``) afford beyond a load:
    every member of an autograder's zip read back against its checksum, so that a zip
    damaged in transfer is refused before the rush, not found by each student's run.

    :raises ProblemFormatError: naming the package and the file.
    """
    if problem.autograder is not None and not problem.autograder.is_dir():
        _checked(PackageFS(problem.short_name, problem.path), problem.autograder, crc=True)


def is_package(path: Path) -> bool:
    """Whether ``path`` holds an assignment package (a problem.yaml, or a gradeline.yaml
    of an autograder assignment)."""
    return (path / "problem.yaml").is_file() or (path / "gradeline.yaml").is_file()
