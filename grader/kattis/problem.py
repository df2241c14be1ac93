"""Assignments as ICPC/Kattis problem packages (legacy, 2023-07 and 2025-09 formats),
plus gradeline's small ``gradeline.yaml``.

Layout read here::

    problem.yaml                      problem_format_version, type, limits, languages,
                                      (legacy) validation, validator_flags, grading
    gradeline.yaml                    (optional) course points per group, languages,
                                      compile flags, time limit
    .timelimit                        the time limit ``gradeline check`` derived from
                                      the accepted submissions (when problem.yaml has none)
    data/sample, data/secret          test data (``grader.kattis.testdata``)
    output_validator(s)/              custom output validator (interactor)
    include/<language>|default/       files added to every submission of a language
    submissions/<expected>/           self-check submissions (``gradeline check``)

or, for an assignment graded by a Gradescope autograder, ``gradeline.yaml`` with
``type: gradescope`` beside the autograder (``grader.kattis.autograder_package``).

What the loader does not support is an error naming the file and the feature
(submit-answer problems, custom graders, static validators, minimisation), never a
problem silently graded as something else. Every loading error names the problem and
the file (ProblemFormatError); symbolic links must stay inside the package.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from grader.core.errors import ProblemFormatError
from grader.core.limits import Limits
from grader.kattis import autograder_package as agp
from grader.kattis import unittest_package as utp
from grader.kattis.cases import flags
from grader.kattis.constants import Constants, parse_constants
from grader.kattis.gradeline_yaml import GRADELINE_KEYS, compile_flags, course_points
from grader.kattis.metadata import (
    FORMAT_VERSIONS,
    LEGACY,
    LEGACY_PROBLEM_KEYS,
    MOVED_KEYS,
    NEW_PROBLEM_KEYS,
    include_dirs,
    languages_of,
    legacy_validation,
    problem_types,
    title_of,
    validator_dir,
)
from grader.kattis.package_limits import TimeMultipliers, read_limits
from grader.kattis.pkgfs import PackageFS
from grader.kattis.testdata import load_testdata
from grader.kattis.tree import (
    ON_REJECT,
    SCORINGS,
    Node,
    OnReject,
    Scoring,
    TestCase,
    TestGroup,
    full_score,
)
from grader.kattis.unittest_package import UnitTests

__all__ = ["ON_REJECT", "SCORINGS", "Node", "OnReject", "Problem", "Scoring", "TestCase",
           "TestGroup", "TimeMultipliers", "is_package", "load_problem", "package_version"]


@dataclass(frozen=True, slots=True)
class Problem:
    """A loaded, validated assignment package."""

    short_name: str
    title: str
    path: Path
    version: str  # content hash of everything that affects grading
    limits: Limits
    compile_limits: Limits
    validator_limits: Limits
    validation: Literal["default", "custom"]
    validator_flags: tuple[str, ...]
    validator_dir: Path | None
    groups: tuple[TestGroup, ...]
    languages: tuple[str, ...] | None
    compile_flags: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    format_version: str = "legacy"
    types: frozenset[str] = frozenset({"pass-fail"})
    #: where the time limit came from: gradeline.yaml, problem.yaml, .timelimit, or
    #: "unset" (only when loaded to derive it)
    time_limit_source: str = "problem.yaml"
    time_multipliers: TimeMultipliers = field(default_factory=TimeMultipliers)
    validation_passes: int = 2
    include: Mapping[str, Path] = field(default_factory=dict)
    #: problem.yaml's constants (2025-09), substituted where the spec says
    constants: Constants = field(default_factory=dict)
    code_limit_bytes: int | None = None
    allow_file_writing: bool = False
    ordered_cases: tuple[TestCase, ...] = ()
    nodes: Mapping[str, Node] = field(default_factory=dict)
    score_root: str = ""
    #: "points": gradeline.yaml course points per group; "kattis": the package's own
    #: scoring (problems of type scoring)
    scoring_model: Literal["points", "kattis"] = "points"
    validator_scores: bool = False  # legacy "validation: custom score"
    #: a Gradescope autograder (zip or directory) grades it instead of test data
    autograder: Path | None = None
    autograder_max_score: float | None = None  # the course's, else the results' own
    autograder_image: str = "assignment"  # or "base": the grading image, setup.sh not run
    #: the course's unit tests and their JUnit report grade it instead of test data
    unit_tests: UnitTests | None = None

    @property
    def graded_by_autograder(self) -> bool:
        """A Gradescope autograder or unit tests grade it (no Kattis test data)."""
        return self.autograder is not None or self.unit_tests is not None

    @property
    def cases(self) -> list[TestCase]:
        """Every test case in judging order."""
        if self.ordered_cases:
            return list(self.ordered_cases)
        return [c for g in self.groups for c in g.cases]

    @property
    def is_scoring(self) -> bool:
        return "scoring" in self.types

    @property
    def is_interactive(self) -> bool:
        return "interactive" in self.types

    @property
    def is_multi_pass(self) -> bool:
        return "multi-pass" in self.types

    @property
    def legacy_data(self) -> bool:
        """The test data follows the legacy rules (a legacy package, or a 2023-07 draft
        written with legacy testdata.yaml keys, as problemtools reads it)."""
        node = self.nodes.get(self.score_root)
        return node is not None and node.legacy

    @property
    def max_score(self) -> float:
        if self.graded_by_autograder:
            return self.autograder_max_score or 0.0
        if self.scoring_model == "kattis":
            return full_score(self.nodes, self.score_root)
        return sum(g.points for g in self.groups)

    def group(self, name: str) -> TestGroup:
        for g in self.groups:
            if g.name == name:
                return g
        raise KeyError(name)

    def restricted(self, groups: Sequence[str]) -> Problem:
        """The problem with only these test groups run (a course's visible phase): its
        version says which, so results and reuse keep the phases apart. Course points
        count the groups kept; a package's own scoring counts cases not run as
        rejected, as when a group stops early."""
        keep = set(groups)
        unknown = keep - {g.name for g in self.groups}
        if unknown:
            raise ProblemFormatError(self.short_name, str(self.path),
                                     f"no test groups {sorted(unknown)} to run")
        tag = hashlib.sha256(",".join(sorted(keep)).encode()).hexdigest()[:12]
        return replace(self, groups=tuple(g for g in self.groups if g.name in keep),
                       ordered_cases=tuple(c for c in self.cases if c.group in keep),
                       version=f"{self.version}/groups-{tag}")

    @property
    def phase(self) -> str:
        """``full``, or ``part`` for a problem restricted to some of its groups."""
        return "part" if "/groups-" in self.version else "full"

    def included_files(self, language: str) -> Path | None:
        """The ``include/`` directory for a language (its own, else ``default``)."""
        return self.include.get(language) or self.include.get("default")


def package_version(root: Path) -> str:
    """Content hash of the package minus ``submissions/`` (which does not affect grades)
    and auxiliary dot files, but with the recorded ``.timelimit``."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if rel.parts[0] == "submissions" or (any(part.startswith(".") for part in rel.parts)
                                             and str(rel) != ".timelimit"):
            continue
        try:
            if p.is_file():
                h.update(str(rel).encode("utf-8", "surrogateescape") + b"\0")
                h.update(hashlib.sha256(p.read_bytes()).digest())
        except OSError as e:  # a dangling link: the loader names it
            h.update(f"{rel}:{type(e).__name__}".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def load_problem(path: str | Path, *, require_time_limit: bool = True) -> Problem:
    """Load and check a problem package.

    :param require_time_limit: False to load a package whose time limit is still to
        be derived (``gradeline check``); its runs then use MEASURING_TIME_LIMIT_S.
    :raises ProblemFormatError: naming the problem and file on any defect.
    """
    root = Path(path).resolve()
    name = root.name
    if not root.is_dir():
        raise ProblemFormatError(name, str(root), "is not a directory")
    fs = PackageFS(name, root)
    py, gl_path = root / "problem.yaml", root / "gradeline.yaml"
    gl_any = fs.read_yaml(gl_path)
    if agp.is_autograder_package(gl_any) or utp.is_unittest_package(gl_any):
        return _load_autograder_package(fs, root, gl_any, gl_path)
    version, meta = _read_problem_yaml(fs, py)
    legacy = version in LEGACY
    gl = fs.read_yaml(gl_path, GRADELINE_KEYS, what=" (gradeline's additions)")
    types = set(problem_types(fs, py, meta, legacy))
    v = _validation(fs, py, meta, types, legacy)
    _refuse_unsupported(fs, root, legacy)
    allow_writing = meta.get("allow_file_writing", False)
    if not isinstance(allow_writing, bool):
        raise fs.error(py, f"allow_file_writing must be true or false, not {allow_writing!r}")
    lim = meta.get("limits") or {}
    if not isinstance(lim, dict):
        raise fs.error(py, "limits must be a mapping")
    (limits, compile_limits, validator_limits, tm, passes, code, tl_source,
     time_limit) = read_limits(fs, py, lim, legacy, gl, gl_path)
    languages = languages_of(fs, meta, py, gl, gl_path)
    cflags = compile_flags(fs, gl, gl_path)
    scoring = "scoring" in types
    constants, why = parse_constants(None if legacy else meta.get("constants"))
    if why:
        raise fs.error(py, why)
    td = load_testdata(fs, legacy=legacy, scoring=scoring, validator_flags=v.flags,
                       version=version, constants=constants)
    if scoring and ({"groups", "total_points"} & set(gl)):
        raise fs.error(gl_path, "groups and total_points give course points; a problem of "
                                "type scoring is scored by its own test data configuration")
    groups = td.groups if scoring else course_points(fs, td.groups, gl, gl_path)
    include = include_dirs(fs, root, languages)
    if time_limit is None and require_time_limit:
        raise fs.error(py, "gives no time limit and none was derived yet: run `gradeline "
                           "check` on the package (it derives one from the accepted "
                           "submissions, as the spec says, and records it in .timelimit), "
                           "or set time_limit_s in gradeline.yaml")
    return Problem(
        short_name=name, title=title_of(meta.get("name", name)), path=root,
        version=package_version(root), limits=limits, compile_limits=compile_limits,
        validator_limits=validator_limits, validation=v.kind, validator_flags=v.flags,
        validator_dir=v.directory, groups=groups, languages=languages,
        compile_flags=cflags, format_version=version,
        types=frozenset(types), time_limit_source=tl_source or "unset", time_multipliers=tm,
        validation_passes=passes, include=include,
        constants=constants, code_limit_bytes=code, allow_file_writing=allow_writing,
        ordered_cases=_ordered(td.cases, groups), nodes=td.nodes, score_root=td.root,
        scoring_model="kattis" if scoring else "points", validator_scores=v.scores)


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
    return Problem(
        short_name=root.name, title=title_of(meta.get("name", root.name)), path=root,
        version=package_version(root), limits=limits, compile_limits=limits,
        validator_limits=limits, validation="default", validator_flags=(),
        validator_dir=None, groups=agp.autograder_groups(),
        languages=languages_of(fs, {}, root / "problem.yaml", gl, gl_path),
        types=frozenset({"scoring"}), time_limit_source="gradeline.yaml",
        autograder=None if unit else agp.autograder_source(fs, root, gl, gl_path),
        autograder_max_score=agp.declared_max_score(fs, gl, gl_path),
        autograder_image=("assignment" if unit.setup else "base") if unit else
        agp.image_choice(fs, gl, gl_path), unit_tests=unit)


def is_package(path: Path) -> bool:
    """Whether ``path`` holds an assignment package (a problem.yaml, or a gradeline.yaml
    of an autograder assignment)."""
    return (path / "problem.yaml").is_file() or (path / "gradeline.yaml").is_file()


def _read_problem_yaml(fs: PackageFS, py: Path) -> tuple[str, dict[str, Any]]:
    """(format version, problem.yaml) with the keys of that version and no others."""
    if not fs.is_file(py):
        raise fs.error(py, "missing (every problem package needs one)")
    raw_meta = fs.read_yaml(py)
    version = str(raw_meta.get("problem_format_version", "legacy")).strip()
    if version not in FORMAT_VERSIONS:
        raise fs.error(py, f"problem_format_version {version!r} is not one gradeline reads "
                           f"({', '.join(FORMAT_VERSIONS)})")
    legacy = version in LEGACY
    return version, fs.read_yaml(py, LEGACY_PROBLEM_KEYS if legacy else NEW_PROBLEM_KEYS,
                                 what=f" (problem.yaml, format {version})",
                                 moved=None if legacy else MOVED_KEYS)


@dataclass(frozen=True, slots=True)
class _Validation:
    kind: Literal["default", "custom"]
    scores: bool  # the validator gives scores
    directory: Path | None
    flags: tuple[str, ...]  # legacy validator_flags


def _validation(fs: PackageFS, py: Path, meta: dict[str, Any], types: set[str],
                legacy: bool) -> _Validation:
    """How output is validated: legacy ``validation`` and ``grading``, or (2023-07 and
    later) a custom validator when the package has one; ``types`` gains what legacy
    validation implies (interactive, multi-pass)."""
    root = fs.root
    vdir = validator_dir(fs, root)
    if not legacy:
        if types & {"interactive", "multi-pass"} and vdir is None:
            raise fs.error(root / "output_validator", f"a {'/'.join(sorted(types))} problem "
                                                      "needs a custom output validator")
        return _Validation("custom" if vdir is not None else "default",
                           "scoring" in types and vdir is not None, vdir, ())
    validation, scores = legacy_validation(fs, py, meta, types)
    grading = meta.get("grading") or {}
    if not isinstance(grading, dict):
        raise fs.error(py, "grading must be a mapping")
    if grading and "scoring" not in types:
        raise fs.error(py, "grading may only be given for scoring problems")
    if str(grading.get("objective", "max")) != "max":
        raise fs.error(py, "grading.objective min (minimisation) is not supported by "
                           "gradeline")
    if validation == "custom" and vdir is None:
        raise fs.error(root / "output_validators", "validation is custom but no output "
                                                   "validator was found")
    return _Validation("custom" if validation == "custom" else "default", scores,
                       vdir if validation == "custom" else None,
                       flags(fs, py, meta.get("validator_flags")))


def _refuse_unsupported(fs: PackageFS, root: Path, legacy: bool) -> None:
    """What gradeline does not grade is an error naming it, never ignored."""
    if (root / "static_validator").exists():
        raise fs.error(root / "static_validator", "static validators are not supported by "
                                                  "gradeline")
    if (root / "graders").exists() and legacy:
        raise fs.error(root / "graders", "custom graders are not supported by gradeline "
                                         "(the default grader's grader_flags are)")


def _ordered(cases: tuple[TestCase, ...], groups: tuple[TestGroup, ...]
             ) -> tuple[TestCase, ...]:
    """Judging order: the test data's own (lexicographic, depth first), with the
    sample first."""
    sample = [c for c in cases if c.group == "sample"]
    return (*sample, *(c for c in cases if c.group != "sample"))


