"""gradeline's additions to a package (``gradeline.yaml``): course points per group,
compile flags, and the keys it may hold (languages and time limits are read with
problem.yaml's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from grader.core.languages import load_languages
from grader.formats.kattis.cases import flags
from grader.formats.pkgfs import PackageFS
from grader.formats.tree import ON_REJECT, SCORINGS, OnReject, Scoring, TestGroup

GRADELINE_KEYS = {"time_limit_s", "wall_time_s", "languages", "compile_flags", "groups",
                  "total_points", "stack_mib", "processes", "resources", "reruns", "setup",
                  "performance"}
DEFAULT_TOTAL_POINTS = 100.0


def course_points(fs: PackageFS, groups: tuple[TestGroup, ...], gl: dict[str, Any],
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
    total = fs.number(gl_path, "total_points", gl.get("total_points", DEFAULT_TOTAL_POINTS),
                      low=0)
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
            points = fs.number(gl_path, f"groups.{g.name}.points", gs.get("points", 0.0),
                               low=0)
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


def compile_flags(fs: PackageFS, gl: dict[str, Any], gl_path: Path
                  ) -> dict[str, tuple[str, ...]]:
    """gradeline.yaml's extra compiler flags per language (known languages only)."""
    known = load_languages()
    out: dict[str, tuple[str, ...]] = {}
    cf = gl.get("compile_flags") or {}
    if not isinstance(cf, dict):
        raise fs.error(gl_path, "compile_flags must map language -> flags")
    for lid, fl in cf.items():
        if str(lid) not in known:
            raise fs.error(gl_path, f"compile_flags for unknown language {lid!r}")
        out[str(lid)] = flags(fs, gl_path, fl)
    return out
