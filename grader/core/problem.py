"""Assignments as ICPC/Kattis problem packages, plus gradeline's small ``gradeline.yaml``.

Layout read here::

    problem.yaml                      name, validation, validator_flags, limits
    gradeline.yaml                    (optional) points per group, languages,
                                      compile flags, time limit
    data/sample/*.in|.ans             sample tests (shown to students)
    data/secret/**/*.in|.ans          secret tests, nested groups allowed
    data/**/testdata.yaml             per-group output_validator_flags (inherited)
    output_validators/<name>/*        custom validator (validation: custom)
    submissions/<expected>/*          self-check submissions

Every loading error names the problem and the file (ProblemFormatError).
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from grader.core.errors import ProblemFormatError
from grader.core.languages import load_languages
from grader.core.limits import DEFAULT_COMPILE_LIMITS, DEFAULT_VALIDATOR_LIMITS, MIB, Limits

Scoring = Literal["all_or_nothing", "proportional"]
SCORINGS: tuple[Scoring, ...] = ("all_or_nothing", "proportional")
OnReject = Literal["continue", "break"]
ON_REJECT: tuple[OnReject, ...] = ("continue", "break")

GRADELINE_KEYS = {"time_limit_s", "languages", "compile_flags", "groups", "total_points",
                  "stack_mib", "processes"}
DEFAULT_TIME_LIMIT_S = 1.0
DEFAULT_TOTAL_POINTS = 100.0


@dataclass(frozen=True, slots=True)
class TestCase:
    """One test: input and judge answer (the answer never enters the student's sandbox)."""

    __test__ = False  # not a pytest class

    name: str  # e.g. "secret/group1/03"
    group: str  # e.g. "secret/group1"
    input_path: Path
    answer_path: Path


@dataclass(frozen=True, slots=True)
class TestGroup:
    """A directory of tests that is scored together."""

    __test__ = False  # not a pytest class

    name: str
    points: float
    scoring: Scoring
    validator_flags: tuple[str, ...]
    cases: tuple[TestCase, ...]
    #: Kattis ``on_reject``: "break" stops the group at its first rejected test (the
    #: rest are not run and count as failed); "continue" runs every test
    on_reject: OnReject = "continue"

    @property
    def is_sample(self) -> bool:
        return self.name == "sample" or self.name.startswith("sample/")


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

    @property
    def cases(self) -> list[TestCase]:
        return [c for g in self.groups for c in g.cases]

    @property
    def max_score(self) -> float:
        return sum(g.points for g in self.groups)

    def group(self, name: str) -> TestGroup:
        for g in self.groups:
            if g.name == name:
                return g
        raise KeyError(name)


def _read_yaml(problem: str, path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise ProblemFormatError(problem, str(path), f"not valid YAML: {e}") from e
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ProblemFormatError(problem, str(path), "must be a YAML mapping")
    return data


def _flags(problem: str, path: Path, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(shlex.split(value))
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return tuple(str(v) for v in value)
    raise ProblemFormatError(problem, str(path), f"flags must be a string or list, not {value!r}")


def _number(problem: str, path: Path, key: str, value: Any, minimum: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= minimum:
        raise ProblemFormatError(problem, str(path), f"{key} must be a number > {minimum}, "
                                 f"not {value!r}")
    return float(value)


def package_version(root: Path) -> str:
    """Content hash of the package minus ``submissions/`` (which does not affect grades)."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if rel.parts[0] == "submissions" or any(part.startswith(".") for part in rel.parts):
            continue
        if p.is_file():
            h.update(str(rel).encode("utf-8", "surrogateescape") + b"\0")
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def _testdata_flags(problem: str, data_dir: Path, group_dir: Path,
                    default: tuple[str, ...]) -> tuple[str, ...]:
    """output_validator_flags from the nearest testdata.yaml (inherited downwards)."""
    flags = default
    chain = [group_dir, *group_dir.parents]
    for d in reversed(chain):
        if d != data_dir and data_dir not in d.parents:
            continue
        td = d / "testdata.yaml"
        cfg = _read_yaml(problem, td)
        for key in ("output_validator_flags", "output_validator_args"):
            if key in cfg:
                flags = _flags(problem, td, cfg[key])
    return flags


def _step_limits(problem: str, path: Path, lim: dict[str, Any], step: str, base: Limits
                 ) -> Limits:
    """``limits.<step>_time`` (s) and ``<step>_memory`` (MiB) over a step's defaults."""
    if f"{step}_time" in lim:
        t = _number(problem, path, f"limits.{step}_time", lim[f"{step}_time"])
        base = base.scaled(cpu_time_s=t, wall_time_s=None)
    if f"{step}_memory" in lim:
        m = _number(problem, path, f"limits.{step}_memory", lim[f"{step}_memory"])
        base = base.scaled(memory_bytes=int(m * MIB))
    return base


def load_problem(path: str | Path) -> Problem:
    """Load and check a problem package.

    :raises ProblemFormatError: naming the problem and file on any defect.
    """
    root = Path(path).resolve()
    name = root.name
    if not root.is_dir():
        raise ProblemFormatError(name, str(root), "is not a directory")
    py_path = root / "problem.yaml"
    if not py_path.is_file():
        raise ProblemFormatError(name, str(py_path), "missing (every problem package needs one)")
    meta = _read_yaml(name, py_path)
    gl_path = root / "gradeline.yaml"
    gl = _read_yaml(name, gl_path)
    unknown = set(gl) - GRADELINE_KEYS
    if unknown:
        raise ProblemFormatError(name, str(gl_path), f"unknown keys {sorted(unknown)}; "
                                 f"known: {sorted(GRADELINE_KEYS)}")

    validation = str(meta.get("validation", "default")).strip()
    if validation not in ("default", "custom"):
        raise ProblemFormatError(name, str(py_path), f"validation {validation!r} is not "
                                 "supported (use 'default' or 'custom'; interactive "
                                 "problems are not graded by gradeline)")
    validator_flags = _flags(name, py_path, meta.get("validator_flags"))

    # Limits: problem.yaml (Kattis units: MiB, seconds), gradeline.yaml overrides time.
    lim = meta.get("limits") or {}
    if not isinstance(lim, dict):
        raise ProblemFormatError(name, str(py_path), "limits must be a mapping")
    time_limit = DEFAULT_TIME_LIMIT_S
    if "time_limit" in lim:
        time_limit = _number(name, py_path, "limits.time_limit", lim["time_limit"])
    if "time_limit_s" in gl:
        time_limit = _number(name, gl_path, "time_limit_s", gl["time_limit_s"])
    memory = int(_number(name, py_path, "limits.memory", lim.get("memory", 256)) * MIB)
    output = int(_number(name, py_path, "limits.output", lim.get("output", 64)) * MIB)
    # Stack below the memory limit, so that runaway recursion is a SIGSEGV (RE), not a
    # race with the OOM killer: at most 64 MiB and at most half the memory limit.
    stack = min(64 * MIB, memory // 2)
    if "stack_mib" in gl:
        stack = int(_number(name, gl_path, "stack_mib", gl["stack_mib"]) * MIB)
    procs = int(_number(name, gl_path, "processes", gl.get("processes", 32)))
    limits = Limits(cpu_time_s=time_limit, memory_bytes=memory, output_bytes=output,
                    stack_bytes=stack, processes=procs)
    compile_limits = _step_limits(name, py_path, lim, "compilation", DEFAULT_COMPILE_LIMITS)
    validator_limits = _step_limits(name, py_path, lim, "validation", DEFAULT_VALIDATOR_LIMITS)

    validator_dir: Path | None = None
    if validation == "custom":
        for cand in ("output_validators", "output_validator"):
            d = root / cand
            if d.is_dir():
                subs = sorted(p for p in d.iterdir() if p.is_dir())
                validator_dir = subs[0] if len(subs) == 1 else d
                break
        if validator_dir is None or not any(validator_dir.iterdir()):
            raise ProblemFormatError(name, str(root / "output_validators"),
                                     "validation is custom but no output validator was found")

    # Languages and flags.
    known = load_languages()
    languages: tuple[str, ...] | None = None
    if "languages" in gl:
        langs = gl["languages"]
        if not isinstance(langs, list) or not langs:
            raise ProblemFormatError(name, str(gl_path), "languages must be a non-empty list")
        bad = [str(x) for x in langs if str(x) not in known]
        if bad:
            raise ProblemFormatError(name, str(gl_path), f"unknown languages {bad}; "
                                     f"known: {sorted(known)}")
        languages = tuple(str(x) for x in langs)
    compile_flags: dict[str, tuple[str, ...]] = {}
    cf = gl.get("compile_flags") or {}
    if not isinstance(cf, dict):
        raise ProblemFormatError(name, str(gl_path), "compile_flags must map language -> flags")
    for lid, fl in cf.items():
        if str(lid) not in known:
            raise ProblemFormatError(name, str(gl_path), f"compile_flags for unknown "
                                     f"language {lid!r}")
        compile_flags[str(lid)] = _flags(name, gl_path, fl)

    groups = _load_groups(name, root, gl, gl_path, validator_flags)
    return Problem(
        short_name=name,
        title=str(meta.get("name", name)),
        path=root,
        version=package_version(root),
        limits=limits,
        compile_limits=compile_limits,
        validator_limits=validator_limits,
        validation="custom" if validation == "custom" else "default",
        validator_flags=validator_flags,
        validator_dir=validator_dir,
        groups=groups,
        languages=languages,
        compile_flags=compile_flags,
    )


def _load_groups(name: str, root: Path, gl: dict[str, Any], gl_path: Path,
                 validator_flags: tuple[str, ...]) -> tuple[TestGroup, ...]:
    data = root / "data"
    if not data.is_dir():
        raise ProblemFormatError(name, str(data), "missing (tests live in data/sample and "
                                 "data/secret)")
    # Every directory holding .in files is a group; sample first, then by name.
    group_dirs = sorted({p.parent for p in data.rglob("*.in")},
                        key=lambda d: (d.relative_to(data).parts[0] != "sample",
                                       str(d.relative_to(data))))
    if not group_dirs:
        raise ProblemFormatError(name, str(data), "no test cases (*.in) found")
    spec = gl.get("groups")
    if spec is not None and not isinstance(spec, dict):
        raise ProblemFormatError(name, str(gl_path), "groups must map group name -> settings")
    group_names = [str(d.relative_to(data)) for d in group_dirs]
    if spec is not None:
        missing = sorted(set(map(str, spec)) - set(group_names))
        if missing:
            raise ProblemFormatError(name, str(gl_path), f"groups {missing} have no tests "
                                     f"under data/ (groups found: {group_names})")
    secret = [g for g in group_names if not (g == "sample" or g.startswith("sample/"))]
    total = float(gl.get("total_points", DEFAULT_TOTAL_POINTS))

    groups = []
    for d, gname in zip(group_dirs, group_names, strict=True):
        cases = []
        for inp in sorted(d.glob("*.in")):
            ans = inp.with_suffix(".ans")
            if not ans.is_file():
                raise ProblemFormatError(name, str(inp), "has no matching .ans file")
            cases.append(TestCase(name=f"{gname}/{inp.stem}", group=gname,
                                  input_path=inp, answer_path=ans))
        on_reject: OnReject = "continue"
        if spec is None:
            # Default: the secret groups share total_points equally, per test.
            points = total / len(secret) if gname in secret else 0.0
            scoring: Scoring = "proportional"
        else:
            gs = spec.get(gname) or {}
            if isinstance(gs, int | float) and not isinstance(gs, bool):
                gs = {"points": gs}
            if not isinstance(gs, dict):
                raise ProblemFormatError(name, str(gl_path), f"groups.{gname} must be a number "
                                         "or a mapping")
            points = float(gs.get("points", 0.0))
            if points < 0:
                raise ProblemFormatError(name, str(gl_path), f"groups.{gname}.points < 0")
            sc = str(gs.get("scoring", "all_or_nothing"))
            if sc not in SCORINGS:
                raise ProblemFormatError(name, str(gl_path), f"groups.{gname}.scoring must be "
                                         f"one of {SCORINGS}, not {sc!r}")
            scoring = "proportional" if sc == "proportional" else "all_or_nothing"
            rej = str(gs.get("on_reject", "continue"))
            if rej not in ON_REJECT:
                raise ProblemFormatError(name, str(gl_path), f"groups.{gname}.on_reject must "
                                         f"be one of {ON_REJECT}, not {rej!r}")
            on_reject = "break" if rej == "break" else "continue"
        groups.append(TestGroup(
            name=gname, points=points, scoring=scoring,
            validator_flags=_testdata_flags(name, data, d, validator_flags),
            cases=tuple(cases), on_reject=on_reject,
        ))
    return tuple(groups)
