"""A Kattis problem package (legacy, 2023-07 and 2025-09) read into a ``Problem``.

Layout read here::

    problem.yaml                      problem_format_version, type, limits, languages,
                                      (legacy) validation, validator_flags, grading
    gradeline.yaml                    (optional) course points per group, languages,
                                      compile flags, time limit, the resources a
                                      parallel program runs on (formats.resources),
                                      its performance tests (formats.performance)
    .timelimit                        the time limit ``gradeline check`` derived from
                                      the accepted submissions (when problem.yaml has none)
    data/sample, data/secret          test data (``grader.formats.kattis.testdata``)
    output_validator(s)/              custom output validator (interactor)
    include/<language>|default/       files added to every submission of a language
    submissions/<expected>/           self-check submissions (``gradeline check``)

What the loader does not support is an error naming the file and the feature
(submit-answer problems, custom graders, static validators, minimisation), never a
problem silently graded as something else.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from grader.formats.gradeline_yaml import GRADELINE_KEYS, compile_flags, course_points
from grader.formats.kattis.cases import flags
from grader.formats.kattis.constants import parse_constants
from grader.formats.kattis.metadata import (
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
from grader.formats.kattis.package_limits import read_limits
from grader.formats.kattis.testdata import load_testdata
from grader.formats.performance import read_performance, versioned
from grader.formats.pkgfs import PackageFS
from grader.formats.problem import Problem, package_version
from grader.formats.resources import read_reruns, read_setup, read_shape, shaped_limits
from grader.formats.tree import TestCase, TestGroup


def load_kattis(fs: PackageFS, *, require_time_limit: bool = True) -> Problem:
    """The Kattis package at ``fs.root``, checked (see ``formats.load.load_problem``)."""
    root = fs.root
    name = root.name
    py, gl_path = root / "problem.yaml", root / "gradeline.yaml"
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
    lims = read_limits(fs, py, lim, legacy, gl, gl_path)
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
    if lims.time_limit_s is None and require_time_limit:
        raise fs.error(py, "gives no time limit and none was derived yet: run `gradeline "
                           "check` on the package (it derives one from the accepted "
                           "submissions, as the spec says, and records it in .timelimit), "
                           "or set time_limit_s in gradeline.yaml")
    shape = read_shape(fs, gl, gl_path)
    setup = read_setup(fs, root, gl, gl_path)
    perf = read_performance(fs, gl, gl_path, shape, languages,
                            interactive=bool(types & {"interactive", "multi-pass"}))
    return Problem(
        short_name=name, title=title_of(meta.get("name", name)), path=root,
        version=versioned(package_version(root), perf), limits=shaped_limits(lims.run, shape),
        compile_limits=lims.compile, validator_limits=lims.validator, validation=v.kind,
        validator_flags=v.flags, validator_dir=v.directory, groups=groups, languages=languages,
        compile_flags=cflags, format_version=version,
        types=frozenset(types), time_limit_source=lims.time_limit_source or "unset",
        time_multipliers=lims.time_multipliers, validation_passes=lims.validation_passes,
        include=include, constants=constants, code_limit_bytes=lims.code_bytes,
        allow_file_writing=allow_writing,
        ordered_cases=_ordered(td.cases, groups), nodes=td.nodes, score_root=td.root,
        scoring_model="kattis" if scoring else "points", validator_scores=v.scores,
        shape=shape, reruns=read_reruns(fs, gl, gl_path, shape), setup=setup,
        autograder_image="assignment" if setup is not None else "base", performance=perf)


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


