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

import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from grader.core.constants import Constants, substitute
from grader.core.pkgfs import PackageFS

Scoring = Literal["all_or_nothing", "proportional"]
SCORINGS: tuple[Scoring, ...] = ("all_or_nothing", "proportional")
OnReject = Literal["continue", "break"]
ON_REJECT: tuple[OnReject, ...] = ("continue", "break")
#: how a scoring node combines its items (legacy graders add avg and max)
Aggregation = Literal["pass-fail", "sum", "min", "avg", "max"]
VerdictMode = Literal["worst_error", "first_error", "always_accept"]

LEGACY_KEYS = ("on_reject", "grading", "grader_flags", "input_validator_flags",
               "output_validator_flags", "accept_score", "reject_score", "range")
#: test_group.yaml of 2025-09 and of the 2023-07 drafts (which had ``scoring:``)
GROUP_KEYS = ("max_score", "score_aggregation", "static_validation_score", "require_pass",
              "args", "input_validator_args", "static_validator_args",
              "output_validator_args", "input_visualizer_args", "output_visualizer_args",
              "full_feedback", "scoring", "static_validation", "hint", "description")
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
CASE_KEYS = ("args", "input_validator_args", "output_validator_args",
             "input_visualizer_args", "output_visualizer_args", "full_feedback", "hint",
             "description")
#: data/ directories that hold checks of the validators, not tests of submissions
NOT_GRADED = ("invalid_input", "invalid_output", "valid_output", "invalid_answer")


@dataclass(frozen=True, slots=True)
class TestCase:
    """One test: input and judge answer (the answer never enters the student's sandbox).

    :param args: command-line arguments for the submission (``args``).
    :param files: a ``.files`` directory copied into the working directory before the run.
    :param ancestors: the scoring nodes holding this case, innermost first.
    """

    __test__ = False  # not a pytest class

    name: str  # e.g. "secret/group1/03"
    group: str  # the TestGroup it runs in, e.g. "secret/group1"
    input_path: Path
    answer_path: Path
    args: tuple[str, ...] = ()
    files: Path | None = None
    validator_flags: tuple[str, ...] = ()
    ancestors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TestGroup:
    """A directory of tests that is run (and, for course points, scored) together."""

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
class Node:
    """A node of the scoring tree (``secret``, a test data group, a legacy group).

    :param items: child node names and case names, in judging order.
    :param max_score: None when unbounded (scores come from the validator).
    :param case_max: the maximum score of each of its own cases (sum/min nodes).
    """

    name: str
    items: tuple[str, ...]
    aggregation: Aggregation
    max_score: float | None
    on_reject: OnReject = "continue"
    require_pass: tuple[str, ...] = ()
    case_max: Mapping[str, float | None] = field(default_factory=dict)
    # legacy default grader
    legacy: bool = False
    verdict_mode: VerdictMode = "worst_error"
    accept_score: float = 1.0
    reject_score: float = 0.0
    score_range: tuple[float, float] = (-math.inf, math.inf)
    ignore_sample: bool = False
    accept_if_any_accepted: bool = False


@dataclass(frozen=True, slots=True)
class TestData:
    """What ``load_testdata`` found."""

    groups: tuple[TestGroup, ...]  # with placeholder points; the caller sets points
    cases: tuple[TestCase, ...]  # in judging order
    nodes: Mapping[str, Node]  # scoring tree (keys: node names; "" is the legacy root)
    root: str  # the node whose score is the submission's


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
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fs.error(path, f"{key} must be a number, not {value!r}")
    return float(value)


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


class _Loader:
    """One walk over ``data/``."""

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

    def case(self, inp: Path, group: str, ancestors: tuple[str, ...],
             inherited: Mapping[str, Any]) -> TestCase:
        fs = self.fs
        base = inp.name[:-3]
        ans = inp.with_name(base + ".ans")
        if not fs.is_file(ans):
            raise fs.error(inp, "has no matching .ans file (every test case needs one)")
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
        entries = [p for p in fs.entries(d)]
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
        for p in self.fs.entries(d):
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
            for p in fs.entries(sample):
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

    def load_legacy(self) -> TestData:
        fs = self.fs
        if not fs.is_dir(self.data / "secret") and not fs.is_dir(self.data / "sample"):
            raise fs.error(self.data, "has neither sample/ nor secret/")
        self.legacy_node(self.data, {}, ())
        if not self.cases:
            raise fs.error(self.data, "no test cases (*.in) found")
        return TestData(tuple(self.groups), tuple(self.cases), self.nodes, "")


def load_testdata(fs: PackageFS, *, legacy: bool, scoring: bool,
                  validator_flags: tuple[str, ...], version: str,
                  constants: Constants | None = None) -> TestData:
    """The test data of the package in ``fs`` (see the module docstring); ``constants``
    are substituted in test_group.yaml (2025-09)."""
    data = fs.root / "data"
    if not fs.is_dir(data):
        raise fs.error(data, "missing (tests live in data/sample and data/secret)")
    legacy = legacy or (version == "2023-07-draft" and _legacy_keys_in(fs))
    loader = _Loader(fs, legacy=legacy, scoring=scoring, validator_flags=validator_flags,
                     new_version=version, constants=constants)
    return loader.load_legacy() if legacy else loader.load_new()


def _legacy_keys_in(fs: PackageFS) -> bool:
    """Whether a testdata.yaml uses keys only the legacy format has: early 2023-07
    drafts kept the legacy test data rules (problemtools reads them so, e.g. its
    oddecho example), and then they are applied as legacy ones."""
    only_legacy = set(LEGACY_KEYS) - set(GROUP_KEYS)
    for p in sorted((fs.root / "data").rglob("testdata.yaml")):
        if only_legacy & set(fs.read_yaml(p)):
            return True
    return False


def aggregate(how: str, scores: Sequence[float]) -> float:
    """Scores combined as the default grader and the 2023-07/2025-09 aggregations do."""
    if not scores:
        return 0.0
    if how == "min":
        return min(scores)
    if how == "max":
        return max(scores)
    if how == "avg":
        return sum(scores) / len(scores)
    return float(sum(scores))


def full_score(nodes: Mapping[str, Node], root: str) -> float:
    """The score of a submission that passes every case without validator scores: the
    problem's maximum (0 for an unbounded one, whose scores only a validator gives)."""

    def walk(name: str) -> float:
        n = nodes[name]
        if not n.legacy:
            return n.max_score or 0.0
        parts = [walk(it) if it in nodes else n.accept_score for it in n.items]
        if n.ignore_sample:
            parts = [walk(it) if it in nodes else n.accept_score for it in n.items
                     if it != "sample"]
        if not parts:
            return 0.0
        total = aggregate(n.aggregation, parts)
        lo, hi = n.score_range
        return min(max(total, lo), hi)

    return walk(root) if root in nodes else 0.0


def case_maxima(nodes: Mapping[str, Node]) -> dict[str, float | None]:
    """Every case's maximum score (2023-07/2025-09 sum/min groups)."""
    out: dict[str, float | None] = {}
    for n in nodes.values():
        out.update(n.case_max)
    return out


def node_order(nodes: Mapping[str, Node], root: str) -> Sequence[str]:
    """Node names, parents before children."""
    out: list[str] = []

    def walk(n: str) -> None:
        out.append(n)
        for it in nodes[n].items:
            if it in nodes:
                walk(it)

    walk(root)
    return out
