"""The test data of a problem package as every format version lays it out.

Two shapes, one model:

* **legacy** (``testdata.yaml``): every directory under ``data/`` is a test data group;
  a group holds test cases and subgroups in lexicographic order, and its result is its
  items' results aggregated by the default grader (``grader_flags``), with
  ``on_reject: break`` (the default) stopping the group at its first rejection;
  ``accept_score``/``reject_score``/``range`` give scoring problems their numbers.
* **2023-07 / 2025-09** (``test_group.yaml``): ``data/sample`` holds cases,
  ``data/secret`` holds cases *or* test data groups; a group scores by
  ``score_aggregation`` (``pass-fail``, ``sum``, ``min``) up to ``max_score``,
  ``require_pass`` makes it depend on earlier groups, and plain subdirectories of a
  group only organise its cases (the 2023-07 draft also allows nested groups).

Either way the result is the same three things: the ``TestGroup``s gradeline runs
(the directories that hold cases, as the course's ``gradeline.yaml`` names them), the
cases in the order a judge runs them, and a scoring tree of ``Node``s above them.
Settings (``args``, validator arguments) inherit downwards; scoring settings do not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from grader.formats.kattis.cases import GROUP_KEYS, NOT_GRADED, CaseLoader, flags
from grader.formats.kattis.constants import Constants, substitute
from grader.formats.kattis.legacy_data import LegacyLoader, legacy_keys_in
from grader.formats.pkgfs import PackageFS
from grader.formats.tree import (
    Aggregation,
    Node,
    OnReject,
    TestCase,
    TestData,
    TestGroup,
)

#: legacy testdata.yaml keys met in a newer package, and what replaced them
LEGACY_MOVED = {
    "on_reject": "2023-07/2025-09 have no on_reject (pass-fail groups stop at their first "
                 "rejection, sum groups run every case)",
    "grader_flags": "write score_aggregation (pass-fail, sum, min) in test_group.yaml",
    "range": "write max_score in test_group.yaml",
    "accept_score": "write max_score in test_group.yaml",
    "reject_score": "a rejected case scores 0 in 2023-07/2025-09",
    "output_validator_flags": "write output_validator_args in test_group.yaml",
    "input_validator_flags": "write input_validator_args in test_group.yaml",
}

class NewLoader(CaseLoader):
    """The 2023-07/2025-09 walk: sample cases, secret cases or groups, test_group.yaml."""

    def group_config(self, d: Path) -> tuple[Path, dict[str, Any]]:
        for fname in ("test_group.yaml", "testdata.yaml"):
            p = d / fname
            if p.exists() or p.is_symlink():
                return p, self.fs.read_yaml(p, GROUP_KEYS, what=" (test data configuration)",
                                            moved=LEGACY_MOVED,
                                            transform=lambda t: substitute(t, self.constants))
        return d / "test_group.yaml", {}

    def inherit(self, path: Path, cfg: Mapping[str, Any],
                parent: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(parent)
        if "args" in cfg:
            out["args"] = cfg["args"]
        if "output_validator_args" in cfg:
            out["vflags"] = (*self.base_flags, *flags(self.fs, path,
                                                      cfg["output_validator_args"]))
        return out

    def scoring_settings(self, path: Path, cfg: Mapping[str, Any], default_agg: str,
                         default_max: float | None
                         ) -> tuple[Aggregation, float | None, bool, tuple[str, ...]]:
        """(aggregation, max_score, max given, require_pass) from 2025-09 keys or the
        2023-07 drafts' ``scoring:`` map."""
        fs = self.fs
        sc = cfg.get("scoring")
        if sc is not None and not isinstance(sc, dict):
            raise fs.error(path, "scoring must be a mapping (score, aggregation, "
                                 "require_pass)")
        sc = sc or {}
        agg = cfg.get("score_aggregation", sc.get("aggregation", default_agg))
        if agg not in ("pass-fail", "sum", "min"):
            raise fs.error(path, f"score aggregation must be pass-fail, sum or min, not "
                                 f"{agg!r}")
        raw = cfg.get("max_score", sc.get("score"))
        given = raw is not None
        mx: float | None = default_max
        if given:
            if raw == "unbounded":
                mx = None
            elif isinstance(raw, bool) or not isinstance(raw, int | float) or raw < 0:
                raise fs.error(path, f"max_score must be a non-negative number or "
                                     f"'unbounded', not {raw!r}")
            else:
                mx = float(raw)
        req = cfg.get("require_pass", sc.get("require_pass", []))
        req = [req] if isinstance(req, str) else req
        if not isinstance(req, list) or not all(isinstance(r, str) for r in req):
            raise fs.error(path, f"require_pass must be a group name or a list, not {req!r}")
        if not self.scoring and ({"max_score", "score_aggregation", "require_pass"} & set(cfg)
                                 or sc):
            raise fs.error(path, "max_score, score_aggregation, require_pass and scoring "
                                 "are only for problems of type scoring")
        return agg, mx, given, tuple(req)

    def new_group(self, d: Path, parent: Mapping[str, Any], ancestors: tuple[str, ...],
                  default_agg: str, default_max: float | None) -> str:
        """A group (``secret``, a test data group, a 2023-07 nested group) and, in
        judging order, its cases and subgroups."""
        fs = self.fs
        name = self.name_of(d)
        path, cfg = self.group_config(d)
        for k in ("static_validation_score", "static_validation", "static_validator_args"):
            if k in cfg:
                raise fs.error(path, f"{k}: static validation is not supported by gradeline")
        inherited = self.inherit(path, cfg, parent)
        agg, mx, _, req = self.scoring_settings(path, cfg, default_agg, default_max)
        me = (name, *ancestors)
        entries = list(fs.entries(d))
        self.check_pairs(entries)
        direct = [p for p in entries if p.name.endswith(".in") and fs.is_file(p)]
        dirs = [p for p in entries if fs.is_dir(p) and not p.name.endswith(".files")]
        if name == "secret":
            subgroups = self.secret_groups(d, direct, dirs)
        else:
            subgroups = [p for p in dirs if self.has_config(p)]
            if subgroups and self.version.startswith("2025"):
                raise fs.error(subgroups[0], "is a test data group inside a test data group "
                                             "(2025-09 allows directories there, not groups)")
        plain = [p for p in dirs if p not in subgroups]
        # the maximum score of each unscored item (2023-07: (M - S) / (A + T))
        explicit: dict[str, float | None] = {}
        for g in subgroups:
            gp, gc = self.group_config(g)
            _, gmx, given, _ = self.scoring_settings(gp, gc, "pass-fail", None)
            if given:
                explicit[g.name] = gmx
        n_plain = sum(len(self.plain_dir_cases(p, name, me, inherited, dry=True))
                      for p in plain)
        unscored = len(subgroups) - len(explicit) + len(direct) + n_plain
        share: float | None = None
        if mx is not None:
            rest = mx - sum(v for v in explicit.values() if v is not None)
            if agg == "sum" and rest < -1e-9:
                raise fs.error(path, f"the groups' max_score add up to more than its own "
                                     f"({mx:g})")
            share = (rest / unscored if unscored else 0.0) if agg == "sum" else mx
        if self.scoring and self.version.startswith("2025") and name == "secret" \
                and mx is not None:
            missing = [g.name for g in subgroups if g.name not in explicit]
            if missing and agg != "pass-fail":
                raise fs.error(d / missing[0] / "test_group.yaml", "needs a max_score (2025-09:"
                               " the groups of a bounded secret must each give one)")
        keyed: list[tuple[str, Path, str]] = []
        keyed += [(p.name[:-3], p, "case") for p in direct]
        keyed += [(p.name, p, "group") for p in subgroups]
        keyed += [(p.name, p, "dir") for p in plain]
        items: list[str] = []
        my_cases: list[TestCase] = []
        case_max: dict[str, float | None] = {}
        for _, p, kind in sorted(keyed, key=lambda t: t[0]):
            if kind == "group":
                items.append(self.new_group(p, inherited, me, "pass-fail",
                                            explicit.get(p.name, share)))
                continue
            found = [self.case(p, name, me, inherited)] if kind == "case" else \
                self.plain_dir_cases(p, name, me, inherited)
            for c in found:
                my_cases.append(c)
                self.cases.append(c)
                items.append(c.name)
                case_max[c.name] = share
        if my_cases:
            vflags = tuple(inherited.get("vflags", self.base_flags))
            stop: OnReject = "break" if self.scoring and agg != "sum" else "continue"
            self.groups.append(TestGroup(name, 0.0, "proportional", vflags, tuple(my_cases),
                                         stop))
        self.nodes[name] = Node(name, tuple(items), agg, mx,
                                "break" if self.scoring and agg != "sum" else "continue",
                                require_pass=req, case_max=case_max)
        return name

    def secret_groups(self, d: Path, direct: Sequence[Path], dirs: Sequence[Path]
                      ) -> list[Path]:
        """The test data groups of ``data/secret``. 2025-09: a subdirectory with a
        ``test_group.yaml`` is a group, and once there is one, every subdirectory is one
        and no case may sit directly in secret; without any, subdirectories only organise
        secret's cases, beside cases of its own. The 2023-07 drafts made every
        subdirectory a group unless secret held cases of its own."""
        configured = [p for p in dirs if self.has_config(p)]
        if self.version.startswith("2025"):
            groups = list(dirs) if configured else []
        else:
            groups = [] if direct and not configured else list(dirs)
        if direct and groups:
            g = (configured or groups)[0]
            raise self.fs.error(d, f"holds test cases ({direct[0].name}) beside test data "
                                   f"groups ({g.name}/ has a test_group.yaml): the spec "
                                   "allows one or the other; move the cases into a group, "
                                   "or drop the groups' test_group.yaml")
        return groups

    def has_config(self, d: Path) -> bool:
        """Whether ``d`` has a group configuration (as ``group_config`` reads one)."""
        return any((d / f).exists() or (d / f).is_symlink()
                   for f in ("test_group.yaml", "testdata.yaml"))

    def plain_dir_cases(self, d: Path, group: str, ancestors: tuple[str, ...],
                        inherited: Mapping[str, Any], *, dry: bool = False
                        ) -> list[TestCase]:
        """The cases under a directory that only organises a group's cases
        (``dry``: the .in files only, nothing checked yet)."""
        out: list[TestCase] = []
        entries = list(self.fs.entries(d))
        self.check_pairs(entries)
        for p in entries:
            if p.name.endswith(".in") and self.fs.is_file(p):
                out.append(TestCase(p.name, group, p, p) if dry else
                           self.case(p, group, ancestors, inherited))
            elif self.fs.is_dir(p) and not p.name.endswith(".files"):
                if not dry and (p / "test_group.yaml").exists():
                    raise self.fs.error(p, "a test data group must be a direct "
                                           "subdirectory of data/secret")
                out.extend(self.plain_dir_cases(p, group, ancestors, inherited, dry=dry))
        return out

    def data_settings(self) -> dict[str, Any]:
        """What ``data/`` itself configures for sample and secret: ``data/test_group.yaml``
        (BAPCtools' convention; the spec starts at sample/ and secret/) gives settings
        that inherit, such as ``output_validator_args``; a scoring key there is refused,
        and so is anything else in ``data/`` that no format version defines."""
        fs = self.fs
        for p in fs.entries(self.data):
            known = p.name in ("sample", "secret", "test_group.yaml", "testdata.yaml",
                               *NOT_GRADED) or p.name.startswith(".")
            if not known:
                raise fs.error(p, "is not part of the test data (data/ holds sample/, "
                                  "secret/, test_group.yaml and the validators' "
                                  f"{', '.join(NOT_GRADED)}): move it or remove it")
        path, cfg = self.group_config(self.data)
        for k in ("max_score", "score_aggregation", "require_pass", "scoring",
                  "static_validation_score"):
            if k in cfg:
                raise fs.error(path, f"{k} belongs in data/secret/test_group.yaml or a "
                                     "group's, not in data/ (it is not inherited)")
        return self.inherit(path, cfg, {"vflags": self.base_flags})

    def load_new(self) -> TestData:
        fs = self.fs
        sample, secret = self.data / "sample", self.data / "secret"
        if not fs.is_dir(secret):
            raise fs.error(secret, "missing (the secret test data lives there)")
        top = self.data_settings()
        if fs.is_dir(sample):
            path, cfg = self.group_config(sample)
            for k in ("max_score", "score_aggregation", "require_pass", "scoring"):
                if k in cfg:
                    raise fs.error(path, f"{k} is not permitted in sample")
            inherited = self.inherit(path, cfg, top)
            cases = []
            entries = list(fs.entries(sample))
            self.check_pairs(entries)
            for p in entries:
                if p.name.endswith(".in") and fs.is_file(p):
                    cases.append(self.case(p, "sample", ("sample",), inherited))
                elif fs.is_dir(p) and not p.name.endswith(".files"):
                    raise fs.error(p, "data/sample must not contain test data groups")
            if cases:
                self.groups.append(TestGroup("sample", 0.0, "proportional",
                                             tuple(inherited["vflags"]), tuple(cases)))
                self.cases.extend(cases)
            self.nodes["sample"] = Node("sample", tuple(c.name for c in cases), "pass-fail",
                                        0.0)
        self.new_group(secret, top, (), "sum", 100.0)
        if not any(g.name == "secret" or g.name.startswith("secret/") for g in self.groups):
            raise fs.error(secret, "has no test cases (*.in)")
        self.check_require_pass()
        return TestData(tuple(self.groups), tuple(self.cases), self.nodes, "secret")

def load_testdata(fs: PackageFS, *, legacy: bool, scoring: bool,
                  validator_flags: tuple[str, ...], version: str,
                  constants: Constants | None = None) -> TestData:
    """The test data of the package in ``fs`` (see the module docstring); ``constants``
    are substituted in test_group.yaml (2025-09)."""
    data = fs.root / "data"
    if not fs.is_dir(data):
        raise fs.error(data, "missing (tests live in data/sample and data/secret)")
    legacy = legacy or (version == "2023-07-draft" and legacy_keys_in(fs))
    if legacy:
        return LegacyLoader(fs, legacy=True, scoring=scoring, validator_flags=validator_flags,
                            new_version=version, constants=constants).load_legacy()
    return NewLoader(fs, legacy=False, scoring=scoring, validator_flags=validator_flags,
                     new_version=version, constants=constants).load_new()
