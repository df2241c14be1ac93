"""What both test data layouts share: arguments, numbers and ranges as the spec writes
them, and a loader's walk state with the reading of one test case."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from grader.formats.kattis.constants import Constants
from grader.formats.pkgfs import PackageFS
from grader.formats.tree import Node, TestCase, TestGroup

#: test_group.yaml of 2025-09 and of the 2023-07 drafts (which had ``scoring:``)
GROUP_KEYS = ("max_score", "score_aggregation", "static_validation_score", "require_pass",
              "args", "input_validator_args", "static_validator_args",
              "output_validator_args", "input_visualizer_args", "output_visualizer_args",
              "full_feedback", "scoring", "static_validation", "hint", "description")
CASE_KEYS = ("args", "input_validator_args", "output_validator_args",
             "input_visualizer_args", "output_visualizer_args", "full_feedback", "hint",
             "description")
#: data/ directories that hold checks of the validators, not tests of submissions
NOT_GRADED = ("invalid_input", "invalid_output", "valid_output", "invalid_answer")


def flags(fs: PackageFS, path: Path, value: Any) -> tuple[str, ...]:
    """Arguments given as a string (shell words) or a list of strings/numbers."""
    if value is None:
        return ()
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError as e:
            raise fs.error(path, f"cannot split {value!r} into arguments: {e}") from None
    if isinstance(value, list) and all(isinstance(v, str | int | float) and
                                       not isinstance(v, bool) for v in value):
        return tuple(str(v) for v in value)
    raise fs.error(path, f"arguments must be a string or a list, not {value!r}")


def _number(fs: PackageFS, path: Path, key: str, value: Any) -> float:
    return fs.number(path, key, value)


def _range(fs: PackageFS, path: Path, value: Any) -> tuple[float, float]:
    parts = str(value).split()
    try:
        lo, hi = (float(p.replace("+inf", "inf")) for p in parts)
    except ValueError:
        raise fs.error(path, f"range must be two numbers (inf allowed), not {value!r}") \
            from None
    if lo > hi:
        raise fs.error(path, f"range {value!r}: the lower bound is above the upper")
    return lo, hi


class CaseLoader:
    """One walk over ``data/``: the state both layouts build, and one case read."""

    def __init__(self, fs: PackageFS, *, legacy: bool, scoring: bool,
                 validator_flags: tuple[str, ...], new_version: str,
                 constants: Constants | None = None) -> None:
        self.fs, self.legacy, self.scoring = fs, legacy, scoring
        self.constants = constants or {}
        self.base_flags = validator_flags
        self.version = new_version
        self.data = fs.root / "data"
        self.nodes: dict[str, Node] = {}
        self.groups: list[TestGroup] = []
        self.cases: list[TestCase] = []

    def name_of(self, d: Path) -> str:
        return str(d.relative_to(self.data)) if d != self.data else ""

    # -- cases ------------------------------------------------------------------------
    def case_files(self, d: Path) -> list[tuple[str, Path]]:
        """(base name, .in path) of the cases directly in ``d``, sorted by base name."""
        out = []
        for p in self.fs.entries(d):
            if p.name.endswith(".in") and self.fs.is_file(p):
                out.append((p.name[:-3], p))
        return out

    def check_pairs(self, entries: Sequence[Path]) -> None:
        """Refuse an answer without its input: the case would be dropped without a word
        (every case is found by its ``.in``), so a test the author wrote never runs."""
        names = {p.name for p in entries}
        for p in entries:
            if p.name.endswith(".ans") and p.name[:-4] + ".in" not in names:
                raise self.fs.error(p, f"has no matching .in file ({p.name[:-4]}.in): a "
                                       "test case is an .in and an .ans side by side; add "
                                       "the input, or remove the answer")

    def case(self, inp: Path, group: str, ancestors: tuple[str, ...],
             inherited: Mapping[str, Any]) -> TestCase:
        fs = self.fs
        base = inp.name[:-3]
        ans = inp.with_name(base + ".ans")
        if not fs.is_file(ans):
            raise fs.error(inp, f"has no matching .ans file ({base}.ans): a test case is an "
                                ".in and an .ans side by side; add the answer, or remove "
                                "the input")
        args = flags(fs, inp, inherited.get("args"))
        vflags = tuple(inherited.get("vflags", ()))
        yml = inp.with_name(base + ".yaml")
        if not self.legacy and (yml.exists() or yml.is_symlink()):
            cfg = fs.read_yaml(yml, CASE_KEYS, what=" (test case configuration)")
            if "args" in cfg:
                args = flags(fs, yml, cfg["args"])
            if "output_validator_args" in cfg:
                vflags = (*self.base_flags, *flags(fs, yml, cfg["output_validator_args"]))
        argf = inp.with_name(base + ".args")
        if argf.exists() or argf.is_symlink():
            args = flags(fs, argf, fs.read_text(argf).strip())
        files = inp.with_name(base + ".files")
        files_dir = fs.check_link(files) if fs.is_dir(files) else None
        rel = self.name_of(inp.parent)
        return TestCase(name=f"{rel}/{base}" if rel else base, group=group,
                        input_path=fs.check_link(inp), answer_path=fs.check_link(ans),
                        args=args, files=files_dir, validator_flags=vflags,
                        ancestors=ancestors)

    # -- legacy: every directory is a group --------------------------------------------
    def check_require_pass(self) -> None:
        for node in self.nodes.values():
            for r in node.require_pass:
                if r not in self.nodes:
                    raise self.fs.error(self.data / node.name, f"require_pass names {r!r}, "
                                        "which is not a test data group")
                if r >= node.name:
                    raise self.fs.error(self.data / node.name, f"require_pass names {r!r}, "
                                        "which does not come before it")
                if self.nodes[r].aggregation != "pass-fail":
                    raise self.fs.error(self.data / node.name, f"require_pass names {r!r}, "
                                        "which does not have pass-fail aggregation")
