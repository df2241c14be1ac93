"""The Kattis default output validator, in-process (it runs outside the student's sandbox).

Flags (``validator_flags`` / ``output_validator_flags``): ``case_sensitive``,
``space_change_sensitive``, ``float_tolerance E`` (absolute and relative),
``float_absolute_tolerance E``, ``float_relative_tolerance E``. Without flags,
tokens are compared case-insensitively and whitespace differences are ignored.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.core.errors import ConfigError
from grader.core.verdict import Validation

_WS = re.compile(rb"(\s+)")
_FLOAT = re.compile(rb"[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|inf|infinity|nan)",
                    re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class DefaultValidatorOptions:
    """Parsed default-validator flags."""

    case_sensitive: bool = False
    space_change_sensitive: bool = False
    float_absolute_tolerance: float | None = None
    float_relative_tolerance: float | None = None

    @property
    def floats(self) -> bool:
        return self.float_absolute_tolerance is not None or \
            self.float_relative_tolerance is not None

    @classmethod
    def parse(cls, flags: Sequence[str]) -> DefaultValidatorOptions:
        """:raises ConfigError: on an unknown flag or a missing/invalid tolerance."""
        opts: dict[str, object] = {}
        it = iter(flags)
        for flag in it:
            if flag in ("case_sensitive", "space_change_sensitive"):
                opts[flag] = True
            elif flag in ("float_tolerance", "float_absolute_tolerance",
                          "float_relative_tolerance"):
                raw = next(it, None)
                try:
                    eps = float(raw) if raw is not None else math.nan
                except ValueError:
                    eps = math.nan
                if not (eps >= 0 and math.isfinite(eps)):
                    raise ConfigError(f"validator flag {flag} needs a non-negative number, "
                                      f"got {raw!r}")
                if flag == "float_tolerance":
                    opts["float_absolute_tolerance"] = eps
                    opts["float_relative_tolerance"] = eps
                else:
                    opts[flag] = eps
            else:
                raise ConfigError(f"unknown default validator flag {flag!r}")
        return cls(**opts)  # type: ignore[arg-type]


def _short(tok: bytes, limit: int = 40) -> str:
    text = tok.decode("utf-8", "replace")
    return text if len(text) <= limit else text[:limit] + "…"


def _tokens(data: bytes, keep_space: bool) -> list[bytes]:
    if keep_space:
        return [t for t in _WS.split(data) if t != b""]
    return data.split()


def _line_of(data: bytes, index: int, keep_space: bool) -> int:
    """1-based line of the index-th token of ``data`` (computed only on failure)."""
    pattern = rb"\s+|\S+" if keep_space else rb"\S+"
    for n, m in enumerate(re.finditer(pattern, data)):
        if n == index:
            return 1 + data.count(b"\n", 0, m.start())
    return 1 + data.count(b"\n")


def compare(team: bytes, judge: bytes, opts: DefaultValidatorOptions) -> Validation:
    """Compare team output with the judge answer; the feedback names the first difference."""
    keep = opts.space_change_sensitive
    jt, tt = _tokens(judge, keep), _tokens(team, keep)
    for i, j in enumerate(jt):
        where = f"token {i + 1}"  # the line number is computed only on failure
        if i >= len(tt):
            line = _line_of(judge, i, keep)
            return Validation(False, f"output ended early: expected {_short(j)!r} "
                                     f"({where}, line {line}), got end of output")
        t = tt[i]
        if keep and (j[:1].isspace() or t[:1].isspace()):
            if j != t:
                return Validation(False, f"whitespace differs at line {_line_of(judge, i, keep)}")
            continue
        if j == t or (not opts.case_sensitive and j.lower() == t.lower()):
            continue
        if opts.floats and _FLOAT.fullmatch(j):
            if not _FLOAT.fullmatch(t):
                return Validation(False, f"expected a number {_short(j)!r} at token {i + 1} "
                                         f"(line {_line_of(judge, i, keep)}), got {_short(t)!r}")
            jv, tv = float(j), float(t)
            diff = abs(jv - tv)
            abs_ok = opts.float_absolute_tolerance is not None and \
                diff <= opts.float_absolute_tolerance
            rel_ok = opts.float_relative_tolerance is not None and \
                diff <= opts.float_relative_tolerance * abs(jv)
            if abs_ok or rel_ok or (math.isnan(jv) and math.isnan(tv)):
                continue
            return Validation(False, f"number {_short(t)!r} differs from {_short(j)!r} by "
                                     f"{diff:.3g} at {where} (line {_line_of(judge, i, keep)})")
        return Validation(False, f"expected {_short(j)!r} at token {i + 1} "
                                 f"(line {_line_of(judge, i, keep)}), got {_short(t)!r}")
    if len(tt) > len(jt):
        return Validation(False, f"trailing output: {_short(tt[len(jt)])!r}")
    return Validation(True, "")


def validate_files(team_output: Path, judge_answer: Path, flags: Sequence[str]) -> Validation:
    """Default validation of two files."""
    return compare(team_output.read_bytes(), judge_answer.read_bytes(),
                   DefaultValidatorOptions.parse(flags))
