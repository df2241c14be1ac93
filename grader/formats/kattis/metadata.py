"""``problem.yaml`` beyond its limits: the format versions and their keys, the problem
type, (legacy) validation, the output validator, languages and ``include/``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from grader.core.languages import load_languages
from grader.formats.pkgfs import PackageFS

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


def problem_types(fs: PackageFS, path: Path, meta: dict[str, Any], legacy: bool) -> frozenset[str]:
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


def legacy_validation(fs: PackageFS, path: Path, meta: dict[str, Any],
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


def validator_dir(fs: PackageFS, root: Path) -> Path | None:
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


def languages_of(fs: PackageFS, meta: dict[str, Any], py: Path, gl: dict[str, Any],
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


def include_dirs(fs: PackageFS, root: Path, languages: tuple[str, ...] | None) -> dict[str, Path]:
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


def title_of(raw: Any) -> str:
    if isinstance(raw, dict):
        return str(raw.get("en") or next(iter(raw.values()), ""))
    return str(raw)
