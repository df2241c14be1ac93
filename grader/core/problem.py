"""Assignments as ICPC/Kattis problem packages (legacy, 2023-07 and 2025-09 formats),
plus gradeline's small ``gradeline.yaml``.

Layout read here::

    problem.yaml                      problem_format_version, type, limits, languages,
                                      (legacy) validation, validator_flags, grading
    gradeline.yaml                    (optional) course points per group, languages,
                                      compile flags, time limit
    .timelimit                        the time limit ``gradeline check`` derived from
                                      the accepted submissions (when problem.yaml has none)
    data/sample, data/secret          test data (``grader.core.testdata``)
    output_validator(s)/              custom output validator (interactor)
    include/<language>|default/       files added to every submission of a language
    submissions/<expected>/           self-check submissions (``gradeline check``)

What the loader does not support is an error naming the file and the feature
(submit-answer problems, custom graders, static validators, minimisation), never a
problem silently graded as something else. Every loading error names the problem and
the file (ProblemFormatError); symbolic links must stay inside the package.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from grader.core.constants import Constants, parse_constants
from grader.core.errors import ProblemFormatError
from grader.core.languages import load_languages
from grader.core.limits import MIB, Limits
from grader.core.pkgfs import PackageFS
from grader.core.testdata import (
    ON_REJECT,
    SCORINGS,
    Node,
    OnReject,
    Scoring,
    TestCase,
    TestGroup,
    flags,
    full_score,
    load_testdata,
)

__all__ = ["ON_REJECT", "SCORINGS", "Node", "OnReject", "Problem", "Scoring", "TestCase",
           "TestGroup", "TimeMultipliers", "load_problem", "package_version"]

GRADELINE_KEYS = {"time_limit_s", "wall_time_s", "languages", "compile_flags", "groups",
                  "total_points", "stack_mib", "processes"}
DEFAULT_TOTAL_POINTS = 100.0
#: gradeline's time limit when a package gives none and none was derived yet
#: (``gradeline check`` measures the accepted submissions under this one)
MEASURING_TIME_LIMIT_S = 10.0

LEGACY = ("legacy", "legacy-icpc")
NEW = ("2023-07-draft", "2023-07", "2025-09-draft", "2025-09", "draft")
FORMAT_VERSIONS = (*LEGACY, *NEW)
TYPES = ("pass-fail", "scoring", "interactive", "multi-pass", "submit-answer")
INCOMPATIBLE = {("pass-fail", "scoring"), ("submit-answer", "multi-pass"),
                ("submit-answer", "interactive")}

LEGACY_PROBLEM_KEYS = ("problem_format_version", "type", "name", "uuid", "author", "source",
                       "source_url", "license", "rights_owner", "limits", "validation",
                       "validator_flags", "grading", "keywords", "languages")
NEW_PROBLEM_KEYS = ("problem_format_version", "type", "name", "uuid", "version", "credits",
                    "source", "license", "rights_owner", "embargo_until", "limits", "keywords",
                    "languages", "allow_file_writing", "constants")
#: legacy keys of problem.yaml and where 2023-07/2025-09 moved them (the error's remedy)
MOVED_KEYS = {
    "source_url": "write source: {name: ..., url: ...}",
    "author": "write credits: {authors: ...}",
    "validation": "write type: (pass-fail, scoring, interactive, multi-pass) and put a "
                  "custom validator in output_validator/",
    "validator_flags": "write output_validator_args in data/secret/test_group.yaml",
    "grading": "write max_score and score_aggregation in data/secret/test_group.yaml",
}
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
    time_multipliers: TimeMultipliers = TimeMultipliers()
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
        if self.scoring_model == "kattis":
            return full_score(self.nodes, self.score_root)
        return sum(g.points for g in self.groups)

    def group(self, name: str) -> TestGroup:
        for g in self.groups:
            if g.name == name:
                return g
        raise KeyError(name)

    def included_files(self, language: str) -> Path | None:
        """The ``include/`` directory for a language (its own, else ``default``)."""
        return self.include.get(language) or self.include.get("default")


def _number(problem: str, path: Path, key: str, value: Any, minimum: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= minimum \
            or not math.isfinite(value):
        raise ProblemFormatError(problem, str(path), f"{key} must be a number > {minimum}, "
                                 f"not {value!r}")
    return float(value)


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


def _types(fs: PackageFS, path: Path, meta: dict[str, Any], legacy: bool) -> frozenset[str]:
    raw = meta.get("type", "pass-fail")
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list) or not items or not all(isinstance(t, str) for t in items):
        raise fs.error(path, f"type must be a string or a non-empty list, not {raw!r}")
    allowed = ("pass-fail", "scoring") if legacy else TYPES
    bad = [t for t in items if t not in allowed]
    if bad and isinstance(raw, str) and all(w in allowed for w in raw.split()):
        raise fs.error(path, f"type {raw!r}: several types are a list, "
                             f"type: [{', '.join(raw.split())}]")
    if bad:
        raise fs.error(path, f"type {bad[0]!r} is not a problem type of this format version "
                             f"(known: {', '.join(allowed)})")
    if len(set(items)) != len(items):
        raise fs.error(path, f"type {items} repeats a value")
    for a, b in INCOMPATIBLE:
        if a in items and b in items:
            raise fs.error(path, f"type {a} and {b} cannot be combined")
    types = set(items)
    if "scoring" not in types:
        types.add("pass-fail")
    if "submit-answer" in types:
        raise fs.error(path, "type submit-answer (submissions are answer files, not programs) "
                             "is not supported by gradeline")
    return frozenset(types)


def _legacy_validation(fs: PackageFS, path: Path, meta: dict[str, Any],
                       types: set[str]) -> tuple[str, bool]:
    """(default|custom, validator gives scores) from legacy ``validation``; DOMjudge's
    extension ``custom multi-pass`` (its example problems use it) is the 2025-09 type."""
    words = str(meta.get("validation", "default")).split()
    if not words or words[0] not in ("default", "custom"):
        raise fs.error(path, f"validation {meta.get('validation')!r} must start with default "
                             "or custom")
    extra = words[1:]
    for w in extra:
        if w not in ("interactive", "score", "multi-pass") or words[0] != "custom":
            raise fs.error(path, f"validation {meta.get('validation')!r}: only custom may be "
                                 "followed by interactive, multi-pass and/or score")
    if "interactive" in extra:
        types.add("interactive")
    if "multi-pass" in extra:
        types.add("multi-pass")
    if "score" in extra and "scoring" not in types:
        raise fs.error(path, "validation custom score is only for scoring problems")
    return words[0], "score" in extra


def _limits(fs: PackageFS, path: Path, lim: dict[str, Any], legacy: bool,
            gl: dict[str, Any], gl_path: Path) -> tuple[Limits, Limits, Limits, TimeMultipliers,
                                                       int, int, str | None, float | None]:
    name = fs.name
    known = LEGACY_LIMITS if legacy else NEW_LIMITS
    unknown = sorted(str(k) for k in lim if str(k) not in known)
    if unknown:
        raise fs.error(path, f"unknown limits {unknown}; known: {sorted(known)}")

    def get(key: str) -> float:
        if key in lim:
            return _number(name, path, f"limits.{key}", lim[key])
        return float(SPEC_DEFAULTS[key])

    if legacy:
        tm = TimeMultipliers(get_opt(name, path, lim, "time_multiplier", 5.0),
                             get_opt(name, path, lim, "time_safety_margin", 2.0), 1.0, True)
    else:
        mult = lim.get("time_multipliers") or {}
        if not isinstance(mult, dict) or set(map(str, mult)) - {"ac_to_time_limit",
                                                                 "time_limit_to_tle"}:
            raise fs.error(path, f"limits.time_multipliers must map ac_to_time_limit and "
                                 f"time_limit_to_tle to numbers >= 1, not {mult!r}")
        tm = TimeMultipliers(get_opt(name, path, mult, "ac_to_time_limit", 2.0, 1.0),
                             get_opt(name, path, mult, "time_limit_to_tle", 1.5, 1.0),
                             get_opt(name, path, lim, "time_resolution", 1.0))
    time_limit: float | None = None
    source: str | None = None
    if "time_limit_s" in gl:
        time_limit = _number(name, gl_path, "time_limit_s", gl["time_limit_s"])
        source = "gradeline.yaml"
    elif "time_limit" in lim:
        time_limit = _number(name, path, "limits.time_limit", lim["time_limit"])
        source = "problem.yaml"
    else:
        tl = fs.root / ".timelimit"
        if tl.is_file():
            try:
                time_limit = _number(name, tl, ".timelimit", float(tl.read_text().split()[0]))
            except (ValueError, IndexError, OSError):
                raise fs.error(tl, "must hold a time limit in seconds") from None
            source = ".timelimit"
    memory = int(get("memory") * MIB)
    output = int(get("output") * MIB)
    # Stack below the memory limit, so that runaway recursion is a SIGSEGV (RE), not a
    # race with the OOM killer: at most 64 MiB and at most half the memory limit.
    stack = min(64 * MIB, memory // 2)
    if "stack_mib" in gl:
        stack = int(_number(name, gl_path, "stack_mib", gl["stack_mib"]) * MIB)
    procs = int(_number(name, gl_path, "processes", gl.get("processes", 32)))
    wall: float | None = None  # None: Limits' default, max(2x, x+1)
    if "wall_time_s" in gl:
        wall = _number(name, gl_path, "wall_time_s", gl["wall_time_s"])
        if time_limit is not None and wall < time_limit:
            raise ProblemFormatError(name, str(gl_path), f"wall_time_s ({wall:g}) must not be "
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
    return (limits, compile_limits, validator_limits, tm, passes, code, source, time_limit)


def get_opt(problem: str, path: Path, m: Mapping[str, Any], key: str, default: float,
            minimum: float = 0.0) -> float:
    """An optional number of a mapping, at least ``minimum`` (> 0 when 0)."""
    if key not in m:
        return default
    v = m[key]
    if isinstance(v, bool) or not isinstance(v, int | float) or v < minimum or v <= 0:
        raise ProblemFormatError(problem, str(path), f"{key} must be a number "
                                 f"{'>= ' + format(minimum, 'g') if minimum else '> 0'}, "
                                 f"not {v!r}")
    return float(v)


def _languages(fs: PackageFS, meta: dict[str, Any], py: Path, gl: dict[str, Any],
               gl_path: Path) -> tuple[str, ...] | None:
    """Accepted languages: problem.yaml's ``languages`` (Kattis codes) narrowed by
    gradeline.yaml's. Codes gradeline cannot grade are left out; none left is an error."""
    known = load_languages()
    allowed: tuple[str, ...] | None = None
    raw = meta.get("languages")
    if raw is not None and raw != "all":
        items = raw.split() if isinstance(raw, str) else raw
        if not isinstance(items, list) or not items or \
                not all(isinstance(x, str) for x in items):
            raise fs.error(py, f"languages must be 'all' or a list of language codes, "
                               f"not {raw!r}")
        allowed = tuple(x for x in items if x in known)
        if not allowed:
            raise fs.error(py, f"languages {items}: gradeline grades none of them (it knows "
                               f"{', '.join(sorted(known))})")
    if "languages" in gl:
        langs = gl["languages"]
        if not isinstance(langs, list) or not langs:
            raise fs.error(gl_path, "languages must be a non-empty list")
        bad = [str(x) for x in langs if str(x) not in known]
        if bad:
            raise fs.error(gl_path, f"unknown languages {bad}; known: {sorted(known)}")
        mine = tuple(str(x) for x in langs)
        if allowed is not None:
            outside = [x for x in mine if x not in allowed]
            if outside:
                raise fs.error(gl_path, f"languages {outside} are not allowed by "
                                        f"problem.yaml ({', '.join(allowed)})")
        allowed = mine
    return allowed


def _include(fs: PackageFS, root: Path, languages: tuple[str, ...] | None) -> dict[str, Path]:
    inc = root / "include"
    out: dict[str, Path] = {}
    if not fs.is_dir(inc):
        return out
    known = load_languages()
    for d in fs.entries(inc):
        if not fs.is_dir(d):
            raise fs.error(d, "include/ holds one directory per language (or default)")
        if d.name != "default" and d.name not in known:
            raise fs.error(d, f"include/{d.name}: gradeline does not know language "
                              f"{d.name!r} (known: {', '.join(sorted(known))})")
        if not any(fs.entries(fs.check_link(d))):
            raise fs.error(d, "is empty (include directories must not be)")
        out[d.name] = fs.check_link(d)
    return out


def _validator_dir(fs: PackageFS, root: Path) -> Path | None:
    for cand in ("output_validator", "output_validators"):
        d = root / cand
        if fs.is_dir(d):
            subs = [p for p in fs.entries(d)]
            if not subs:
                raise fs.error(d, "is empty")
            if cand == "output_validators":
                dirs = [p for p in subs if fs.is_dir(p)]
                if len(dirs) > 1:
                    raise fs.error(d, f"holds {len(dirs)} validators; gradeline runs one")
                return fs.check_link(dirs[0]) if dirs else fs.check_link(d)
            return fs.check_link(d)
    return None


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
    py = root / "problem.yaml"
    if not fs.is_file(py):
        raise fs.error(py, "missing (every problem package needs one)")
    raw_meta = fs.read_yaml(py)
    version = str(raw_meta.get("problem_format_version", "legacy")).strip()
    if version not in FORMAT_VERSIONS:
        raise fs.error(py, f"problem_format_version {version!r} is not one gradeline reads "
                           f"({', '.join(FORMAT_VERSIONS)})")
    legacy = version in LEGACY
    meta = fs.read_yaml(py, LEGACY_PROBLEM_KEYS if legacy else NEW_PROBLEM_KEYS,
                        what=f" (problem.yaml, format {version})",
                        moved=None if legacy else MOVED_KEYS)
    gl_path = root / "gradeline.yaml"
    gl = fs.read_yaml(gl_path, GRADELINE_KEYS, what=" (gradeline's additions)")
    types = set(_types(fs, py, meta, legacy))

    validator_scores = False
    vdir = _validator_dir(fs, root)
    validator_flags: tuple[str, ...] = ()
    if legacy:
        validation, validator_scores = _legacy_validation(fs, py, meta, types)
        validator_flags = flags(fs, py, meta.get("validator_flags"))
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
        if validation == "default":
            vdir = None
    else:
        validation = "custom" if vdir is not None else "default"
        if types & {"interactive", "multi-pass"} and vdir is None:
            raise fs.error(root / "output_validator", f"a {'/'.join(sorted(types))} problem "
                                                      "needs a custom output validator")
        validator_scores = "scoring" in types and vdir is not None
    if "submit-answer" in types:  # pragma: no cover -- refused in _types
        raise fs.error(py, "submit-answer is not supported")
    if (root / "static_validator").exists():
        raise fs.error(root / "static_validator", "static validators are not supported by "
                                                  "gradeline")
    if (root / "graders").exists() and legacy:
        raise fs.error(root / "graders", "custom graders are not supported by gradeline "
                                         "(the default grader's grader_flags are)")
    allow_writing = meta.get("allow_file_writing", False)
    if not isinstance(allow_writing, bool):
        raise fs.error(py, f"allow_file_writing must be true or false, not {allow_writing!r}")

    lim = meta.get("limits") or {}
    if not isinstance(lim, dict):
        raise fs.error(py, "limits must be a mapping")
    (limits, compile_limits, validator_limits, tm, passes, code, tl_source,
     time_limit) = _limits(fs, py, lim, legacy, gl, gl_path)

    languages = _languages(fs, meta, py, gl, gl_path)
    known = load_languages()
    compile_flags: dict[str, tuple[str, ...]] = {}
    cf = gl.get("compile_flags") or {}
    if not isinstance(cf, dict):
        raise fs.error(gl_path, "compile_flags must map language -> flags")
    for lid, fl in cf.items():
        if str(lid) not in known:
            raise fs.error(gl_path, f"compile_flags for unknown language {lid!r}")
        compile_flags[str(lid)] = flags(fs, gl_path, fl)

    scoring = "scoring" in types
    constants, why = parse_constants(None if legacy else meta.get("constants"))
    if why:
        raise fs.error(py, why)
    td = load_testdata(fs, legacy=legacy, scoring=scoring, validator_flags=validator_flags,
                       version=version, constants=constants)
    if scoring and ({"groups", "total_points"} & set(gl)):
        raise fs.error(gl_path, "groups and total_points give course points; a problem of "
                                "type scoring is scored by its own test data configuration")
    groups = td.groups if scoring else _points(fs, td.groups, gl, gl_path)
    include = _include(fs, root, languages)
    if time_limit is None and require_time_limit:
        raise fs.error(py, "gives no time limit and none was derived yet: run `gradeline "
                           "check` on the package (it derives one from the accepted "
                           "submissions, as the spec says, and records it in .timelimit), "
                           "or set time_limit_s in gradeline.yaml")
    return Problem(
        short_name=name,
        title=_title(meta.get("name", name)),
        path=root,
        version=package_version(root),
        limits=limits,
        compile_limits=compile_limits,
        validator_limits=validator_limits,
        validation="custom" if validation == "custom" else "default",
        validator_flags=validator_flags,
        validator_dir=vdir,
        groups=groups,
        languages=languages,
        compile_flags=compile_flags,
        format_version=version,
        types=frozenset(types),
        time_limit_source=tl_source or "unset",
        time_multipliers=tm,
        validation_passes=passes,
        include=include,
        constants=constants,
        code_limit_bytes=code,
        allow_file_writing=allow_writing,
        ordered_cases=_ordered(td.cases, groups),
        nodes=td.nodes,
        score_root=td.root,
        scoring_model="kattis" if scoring else "points",
        validator_scores=validator_scores,
    )


def _title(raw: Any) -> str:
    if isinstance(raw, dict):
        return str(raw.get("en") or next(iter(raw.values()), ""))
    return str(raw)


def _ordered(cases: tuple[TestCase, ...], groups: tuple[TestGroup, ...]
             ) -> tuple[TestCase, ...]:
    """Judging order: the test data's own (lexicographic, depth first), with the
    sample first."""
    sample = [c for c in cases if c.group == "sample"]
    return (*sample, *(c for c in cases if c.group != "sample"))


def _points(fs: PackageFS, groups: tuple[TestGroup, ...], gl: dict[str, Any],
            gl_path: Path) -> tuple[TestGroup, ...]:
    """Course points per group from gradeline.yaml (default: the secret groups share
    total_points, per test)."""
    spec = gl.get("groups")
    if spec is not None and not isinstance(spec, dict):
        raise fs.error(gl_path, "groups must map group name -> settings")
    names = [g.name for g in groups]
    if spec is not None:
        missing = sorted(set(map(str, spec)) - set(names))
        if missing:
            raise fs.error(gl_path, f"groups {missing} have no tests under data/ (groups "
                                    f"found: {names})")
    secret = [g for g in names if not (g == "sample" or g.startswith("sample/"))]
    total = float(gl.get("total_points", DEFAULT_TOTAL_POINTS))
    out = []
    for g in groups:
        on_reject: OnReject = g.on_reject
        if spec is None:
            points = total / len(secret) if g.name in secret else 0.0
            scoring: Scoring = "proportional"
        else:
            gs = spec.get(g.name) or {}
            if isinstance(gs, int | float) and not isinstance(gs, bool):
                gs = {"points": gs}
            if not isinstance(gs, dict):
                raise fs.error(gl_path, f"groups.{g.name} must be a number or a mapping")
            unknown = set(map(str, gs)) - {"points", "scoring", "on_reject"}
            if unknown:
                raise fs.error(gl_path, f"groups.{g.name}: unknown keys {sorted(unknown)}")
            points = float(gs.get("points", 0.0))
            if points < 0:
                raise fs.error(gl_path, f"groups.{g.name}.points < 0")
            sc = str(gs.get("scoring", "all_or_nothing"))
            if sc not in SCORINGS:
                raise fs.error(gl_path, f"groups.{g.name}.scoring must be one of {SCORINGS}, "
                                        f"not {sc!r}")
            scoring = "proportional" if sc == "proportional" else "all_or_nothing"
            if "on_reject" in gs:
                rej = str(gs["on_reject"])
                if rej not in ON_REJECT:
                    raise fs.error(gl_path, f"groups.{g.name}.on_reject must be one of "
                                            f"{ON_REJECT}, not {rej!r}")
                on_reject = "break" if rej == "break" else "continue"
        out.append(TestGroup(g.name, points, scoring, g.validator_flags, g.cases, on_reject))
    return tuple(out)
