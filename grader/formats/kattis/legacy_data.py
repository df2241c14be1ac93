"""The legacy test data layout (``testdata.yaml``): every directory under ``data/`` is
a test data group scored by the default grader's ``grader_flags``, with ``on_reject``,
``accept_score``, ``reject_score`` and ``range``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from grader.formats.kattis.cases import GROUP_KEYS, NOT_GRADED, CaseLoader, _number, _range, flags
from grader.formats.pkgfs import PackageFS
from grader.formats.tree import ON_REJECT, Aggregation, Node, TestData, TestGroup, VerdictMode

LEGACY_KEYS = ("on_reject", "grading", "grader_flags", "input_validator_flags",
               "output_validator_flags", "accept_score", "reject_score", "range")


class LegacyLoader(CaseLoader):
    """The legacy walk: each directory a group, settings inherited per key."""

    def legacy_config(self, d: Path, parent: Mapping[str, Any]) -> dict[str, Any]:
        """testdata.yaml of ``d`` over what its parent resolved (per key)."""
        path = d / "testdata.yaml"
        cfg = self.fs.read_yaml(path, LEGACY_KEYS, what=" (legacy testdata.yaml)")
        out = dict(parent)
        out.update(cfg)
        out["_path"] = path if cfg else parent.get("_path", path)
        out["_explicit_on_reject"] = "on_reject" in cfg or parent.get("_explicit_on_reject",
                                                                      False)
        return out

    def legacy_node(self, d: Path, parent_cfg: Mapping[str, Any],
                    ancestors: tuple[str, ...]) -> str:
        fs = self.fs
        cfg = self.legacy_config(d, parent_cfg)
        path = cfg["_path"]
        name = self.name_of(d)
        if str(cfg.get("grading", "default")) != "default":
            raise fs.error(path, "grading: custom (a grader program) is not supported by "
                                 "gradeline; use the default grader's grader_flags")
        rej = str(cfg.get("on_reject", "break"))
        if rej not in ON_REJECT:
            raise fs.error(path, f"on_reject must be break or continue, not {rej!r}")
        if not self.scoring:
            for k in ("accept_score", "reject_score", "range"):
                if k in cfg and cfg["_path"] == path and k in fs.read_yaml(path):
                    raise fs.error(path, f"{k} may only be given for scoring problems")
        verdict_mode: VerdictMode = "worst_error"
        agg: Aggregation = "sum"
        ignore_sample = any_accepted = False
        for flag in flags(fs, path, cfg.get("grader_flags", "")):
            if flag in ("worst_error", "first_error", "always_accept"):
                verdict_mode = flag  # type: ignore[assignment]
            elif flag in ("sum", "avg", "min", "max"):
                agg = flag  # type: ignore[assignment]
            elif flag == "ignore_sample":
                ignore_sample = True
            elif flag == "accept_if_any_accepted":
                any_accepted = True
            else:
                raise fs.error(path, f"grader flag {flag!r} is not one of the default "
                                     "grader's (worst_error, first_error, always_accept, "
                                     "sum, avg, min, max, ignore_sample, "
                                     "accept_if_any_accepted)")
        if ignore_sample and d != self.data:
            raise fs.error(path, "ignore_sample may only be used on the root data group")
        vflags = (*self.base_flags, *flags(fs, path, cfg.get("output_validator_flags")))
        inherited = {"vflags": vflags}
        me = (name, *ancestors) if name else ancestors
        items: list[str] = []
        entries = list(fs.entries(d))
        self.check_pairs(entries)
        cases_here = {p.name[:-3]: p for p in entries if p.name.endswith(".in")
                      and fs.is_file(p)}
        subdirs = [p for p in entries if fs.is_dir(p) and not p.name.endswith(".files")
                   and p.name not in NOT_GRADED]
        if d == self.data:
            subdirs = [p for p in subdirs if p.name in ("sample", "secret")]
        group_name = name or "data"
        my_cases = []
        for key in sorted({*cases_here, *(p.name for p in subdirs)}):
            if key in cases_here:
                c = self.case(cases_here[key], group_name, me, inherited)
                my_cases.append(c)
                self.cases.append(c)
                items.append(c.name)
            for p in subdirs:
                if p.name == key:
                    if key in cases_here:
                        raise fs.error(p, f"is both a test case and a group ({key}.in)")
                    items.append(self.legacy_node(p, cfg, me))
        if my_cases:
            self.groups.append(TestGroup(group_name, 0.0, "proportional", vflags,
                                         tuple(my_cases),
                                         "break" if rej == "break" and (
                                             self.scoring or cfg["_explicit_on_reject"])
                                         else "continue"))
        lo, hi = _range(fs, path, cfg.get("range", "-inf +inf"))
        self.nodes[name] = Node(
            name, tuple(items), agg, None, rej if self.scoring or cfg["_explicit_on_reject"]
            else "continue", legacy=True, verdict_mode=verdict_mode,
            accept_score=_number(fs, path, "accept_score", cfg.get("accept_score", 1.0)),
            reject_score=_number(fs, path, "reject_score", cfg.get("reject_score", 0.0)),
            score_range=(lo, hi), ignore_sample=ignore_sample,
            accept_if_any_accepted=any_accepted)
        return name

    # -- 2023-07 / 2025-09 -------------------------------------------------------------
    def load_legacy(self) -> TestData:
        fs = self.fs
        if not fs.is_dir(self.data / "secret") and not fs.is_dir(self.data / "sample"):
            raise fs.error(self.data, "has neither sample/ nor secret/")
        self.legacy_node(self.data, {}, ())
        if not self.cases:
            raise fs.error(self.data, "no test cases (*.in) found")
        return TestData(tuple(self.groups), tuple(self.cases), self.nodes, "")


def legacy_keys_in(fs: PackageFS) -> bool:
    """Whether a testdata.yaml uses keys only the legacy format has: early 2023-07
    drafts kept the legacy test data rules (problemtools reads them so, e.g. its
    oddecho example), and then they are applied as legacy ones."""
    only_legacy = set(LEGACY_KEYS) - set(GROUP_KEYS)
    for p in sorted((fs.root / "data").rglob("testdata.yaml")):
        if only_legacy & set(fs.read_yaml(p)):
            return True
    return False
