"""What a package's example submissions must do, and the time limit they imply.

``submissions/<dir>/`` gives each submission default requirements (``accepted``: every
test AC; ``wrong_answer``: AC or WA with at least one WA; ...), and
``submissions/submissions.yaml`` adds rules by glob pattern -- ``permitted`` and
``required`` verdict sets, a ``score`` or score range, a ``message`` some
judgemessage must contain, ``use_for_time_limit``, ``language`` -- for the whole
submission or only for the test cases of a named group (2025-09). gradeline's own
directories (``memory_limit_exceeded``, ``output_limit_exceeded``, ``compile_error``)
keep their meaning, and so does ``partially_accepted``: legacy, AC with less than the
maximum score; 2023-07/2025-09 (which judge scoring submissions by score), a score
strictly between 0 and the maximum, whatever the verdict.

Time limits (2023-07/2025-09): the slowest passed test (AC) of every submission that
may not time out gives ``T_ac``, the slowest of every submission that must time out gives
``T_tle``; the limit is the smallest multiple of ``time_resolution`` with
``T_ac * ac_to_time_limit <= limit`` and ``limit * time_limit_to_tle <= T_tle``.
Legacy packages: ``T_ac * time_multiplier``, rounded, at least 1 s.

Pure functions over verdicts and times; the runs happen elsewhere.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.core.errors import ProblemFormatError
from grader.core.result import SubmissionResult, TestResult
from grader.core.verdict import Verdict
from grader.formats.kattis.metadata import NEW
from grader.formats.problem import Problem

KATTIS = ("AC", "WA", "TLE", "RTE")
#: Kattis's four test verdicts from gradeline's: exceeding memory or output ends a
#: run abnormally (RTE, as the spec's categories count it)
TO_KATTIS = {Verdict.AC: "AC", Verdict.WA: "WA", Verdict.TLE: "TLE", Verdict.RE: "RTE",
             Verdict.MLE: "RTE", Verdict.OLE: "RTE"}
RULE_KEYS = ("language", "entrypoint", "authors", "model_solution", "permitted", "required",
             "score", "message", "use_for_time_limit")
DEFAULTS: dict[str, dict[str, Any]] = {
    "accepted": {"permitted": ["AC"]},
    "rejected": {"required": ["RTE", "TLE", "WA"]},
    "wrong_answer": {"permitted": ["AC", "WA"], "required": ["WA"]},
    "time_limit_exceeded": {"permitted": ["AC", "TLE"], "required": ["TLE"]},
    "run_time_error": {"permitted": ["AC", "RTE"], "required": ["RTE"]},
    "brute_force": {"permitted": ["AC", "RTE", "TLE"], "required": ["RTE", "TLE"],
                    "use_for_time_limit": False},
}
#: gradeline's directories: the submission's own verdict, as before
WHOLE = {"memory_limit_exceeded": Verdict.MLE, "output_limit_exceeded": Verdict.OLE,
         "compile_error": Verdict.CE}


@dataclass(frozen=True, slots=True)
class Rule:
    """One requirement on a submission, for all its tests or those of ``cases``."""

    source: str  # where it came from, for messages
    cases: str = ""  # a test-case glob ("" = every case)
    permitted: frozenset[str] | None = None
    required: frozenset[str] | None = None
    score: tuple[float, float] | None = None
    message: str | None = None
    use_for_time_limit: bool | str | None = None  # None: as permitted/required imply


@dataclass
class Expectation:
    """Everything a submission must satisfy."""

    path: Path
    rules: list[Rule] = field(default_factory=list)
    whole: Verdict | None = None  # gradeline's memory/output/compile directories
    partial: bool = False  # partially_accepted (legacy; kept for newer versions too)
    by_score: bool = False  # 2023-07/2025-09: partial means 0 < score < max, any verdict
    language: str | None = None

    @property
    def label(self) -> str:
        return self.path.parent.name + "/" + self.path.name


def _expand_braces(pattern: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    return [x for alt in m.group(1).split(",")
            for x in _expand_braces(pattern[:m.start()] + alt + pattern[m.end():])]


def glob_match(pattern: str, path: str) -> bool:
    """The spec's globs: ``*`` within one path part, braces, a match on a path or on any
    of its parents."""
    parts = path.split("/")
    for pat in _expand_braces(pattern):
        pp = pat.strip("/").split("/")
        if len(pp) <= len(parts) and all(fnmatch.fnmatchcase(a, b)
                                         for a, b in zip(parts[:len(pp)], pp, strict=False)):
            return True
    return False


def _verdicts(problem_name: str, path: Path, key: str, value: Any) -> frozenset[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) and v in KATTIS
                                              for v in items):
        raise ProblemFormatError(problem_name, str(path), f"{key} must be a list of "
                                 f"{', '.join(KATTIS)}, not {value!r}")
    return frozenset(items)


def _rule(problem: str, path: Path, where: str, cases: str, cfg: Mapping[str, Any]) -> Rule:
    score: tuple[float, float] | None = None
    if "score" in cfg:
        s = cfg["score"]
        if isinstance(s, int | float) and not isinstance(s, bool):
            score = (float(s), float(s))
        elif isinstance(s, list) and len(s) == 2 and all(isinstance(x, int | float)
                                                         for x in s):
            score = (float(s[0]), float(s[1]))
        else:
            raise ProblemFormatError(problem, str(path), f"{where}: score must be a number "
                                     f"or two numbers, not {s!r}")
    use = cfg.get("use_for_time_limit")
    if use not in (None, True, False, "lower", "upper"):
        raise ProblemFormatError(problem, str(path), f"{where}: use_for_time_limit must be "
                                 f"true, false, lower or upper, not {use!r}")
    msg = cfg.get("message")
    return Rule(f"{path.name}: {where}", cases,
                _verdicts(problem, path, "permitted", cfg["permitted"])
                if "permitted" in cfg else None,
                _verdicts(problem, path, "required", cfg["required"])
                if "required" in cfg else None,
                score, None if msg is None else str(msg), use)


def expectations(problem: Problem, submissions: Iterable[Path],
                 yaml_rules: Mapping[str, Any], yaml_path: Path) -> list[Expectation]:
    """Each submission's requirements: its directory's defaults (overridable in
    submissions.yaml by the directory's name) and every matching glob rule."""
    name = problem.short_name
    root = problem.path / "submissions"
    out: list[Expectation] = []
    overrides = {k: v for k, v in yaml_rules.items() if k in DEFAULTS}
    for sub in submissions:
        rel = str(sub.relative_to(root))
        d = rel.split("/")[0]
        exp = Expectation(sub)
        if d in WHOLE:
            exp.whole = WHOLE[d]
        elif d == "partially_accepted":
            exp.partial = True
            exp.by_score = problem.format_version in NEW
            exp.rules.append(Rule("partially_accepted", permitted=frozenset(KATTIS)))
        elif d in DEFAULTS:
            cfg = {**DEFAULTS[d], **(overrides.get(d) or {})}
            exp.rules.append(_rule(name, yaml_path, d, "", cfg))
        for pat, cfg in yaml_rules.items():
            if pat in DEFAULTS and pat == d:
                continue  # the directory's own defaults, replaced above
            if not glob_match(pat, rel):
                continue
            if not isinstance(cfg, dict):
                raise ProblemFormatError(name, str(yaml_path), f"{pat}: must be a mapping")
            top = {k: v for k, v in cfg.items() if k in RULE_KEYS}
            groups = {k: v for k, v in cfg.items() if k not in RULE_KEYS}
            for g, gcfg in groups.items():
                if not (g.startswith(("sample", "secret"))) or not isinstance(gcfg, dict):
                    raise ProblemFormatError(name, str(yaml_path), f"{pat}: unknown key "
                                             f"{g!r} (a rule key or a test group)")
                bad = set(gcfg) - {"permitted", "required", "score", "message",
                                   "use_for_time_limit"}
                if bad:
                    raise ProblemFormatError(name, str(yaml_path), f"{pat}/{g}: unknown keys "
                                             f"{sorted(bad)}")
                exp.rules.append(_rule(name, yaml_path, f"{pat} {g}", g, gcfg))
            if "language" in top:
                exp.language = str(top["language"])
            if set(top) & {"permitted", "required", "score", "message", "use_for_time_limit"}:
                exp.rules.append(_rule(name, yaml_path, pat, "", top))
        if not exp.rules and exp.whole is None:
            continue  # a directory nothing says anything about
        out.append(exp)
    return out


@dataclass(frozen=True, slots=True)
class Check:
    """Whether one submission did what its rules say, and if not, why."""

    ok: bool
    problems: tuple[str, ...]


def _tests_for(rule: Rule, tests: Sequence[TestResult]) -> list[TestResult]:
    if not rule.cases:
        return list(tests)
    return [t for t in tests if glob_match(rule.cases, t.name)]


def check(exp: Expectation, result: SubmissionResult, *, max_score: float) -> Check:
    """Evaluate every rule of ``exp`` on ``result``."""
    bad: list[str] = []
    if exp.whole is not None:
        if result.verdict is not exp.whole:
            bad.append(f"expected {exp.whole.value}, got {result.verdict.value}")
        return Check(not bad, tuple(bad))
    if result.verdict is Verdict.JE:
        return Check(False, (f"judge error: {result.message or result.verdict.value}",))
    if result.verdict is Verdict.CE:
        return Check(False, ("did not compile",))
    for rule in exp.rules:
        tests = _tests_for(rule, result.tests)
        got = [TO_KATTIS.get(t.verdict, "RTE") for t in tests]
        if rule.permitted is not None:
            off = sorted({g for g in got if g not in rule.permitted})
            if off:
                first = next(t for t in tests if TO_KATTIS.get(t.verdict) in off)
                bad.append(f"{rule.source}: got {first.verdict.value} on {first.name}, "
                           f"permitted {sorted(rule.permitted)}")
        if rule.required is not None and not any(g in rule.required for g in got):
            bad.append(f"{rule.source}: no test got one of {sorted(rule.required)}")
        if rule.score is not None:
            score = result.score
            if rule.cases:
                score = next((g.score for g in result.groups if g.name == rule.cases), score)
            lo, hi = rule.score
            if not lo - 1e-6 <= score <= hi + 1e-6:
                bad.append(f"{rule.source}: score {score:g} not in [{lo:g}, {hi:g}]")
        if rule.message is not None and not any(rule.message in t.feedback for t in tests):
            bad.append(f"{rule.source}: no judge message contains {rule.message!r}")
    if exp.partial and exp.by_score and not 1e-9 < result.score < max_score - 1e-9:
        bad.append(f"partially_accepted: score {result.score:g} is not strictly between 0 "
                   f"and {max_score:g}")
    elif exp.partial and not exp.by_score and (result.verdict is not Verdict.AC or
                                               result.score >= max_score - 1e-9):
        bad.append(f"partially_accepted: got {result.verdict.value} with score "
                   f"{result.score:g} of {max_score:g}")
    return Check(not bad, tuple(bad))


def bound_kind(rule: Rule) -> str | None:
    """"lower" (the rule forbids TLE), "upper" (it requires exactly TLE), or None."""
    if rule.use_for_time_limit is False:
        return None
    if rule.use_for_time_limit in ("lower", "upper"):
        return str(rule.use_for_time_limit)
    if rule.required == frozenset({"TLE"}):
        return "upper"
    if rule.permitted is not None and "TLE" not in rule.permitted:
        return "lower"
    return None


def slowest(exp: Expectation, result: SubmissionResult, kind: str) -> float | None:
    """The slowest test time over the cases the submission's ``kind`` rules cover.

    A lower bound counts only tests the run passed (AC, ended by itself): a wrong
    answer's time says nothing about what a correct run needs (an interactive
    submission may spin after the validator has already said WA), and a run the clock
    cut off has no time of its own (``timed_out`` says which ones were).
    """
    times = []
    for rule in exp.rules:
        if bound_kind(rule) == kind:
            times += [t.cpu_time_s for t in _tests_for(rule, result.tests)
                      if t.cpu_time_s is not None and
                      (kind != "lower" or (t.verdict is Verdict.AC and not t.termination))]
    return max(times) if times else None


def timed_out(exp: Expectation, result: SubmissionResult) -> list[str]:
    """The tests a lower-bound rule covers that the clock ended (TLE): measured under
    a generous limit, they leave no time limit to derive."""
    return sorted({t.name for rule in exp.rules if bound_kind(rule) == "lower"
                   for t in _tests_for(rule, result.tests) if t.verdict is Verdict.TLE})


@dataclass(frozen=True, slots=True)
class TimeLimit:
    limit_s: float
    t_ac: float
    t_tle: float | None
    note: str


def infer_time_limit(problem: Problem, t_ac: float, t_tle: float | None) -> TimeLimit:
    """The spec's time limit from the slowest allowed-to-pass and the fastest
    must-time-out runtimes (see the module docstring).

    :raises ValueError: when no multiple of the resolution satisfies both bounds.
    """
    tm = problem.time_multipliers
    if tm.legacy:
        limit = max(1.0, float(int(0.5 + t_ac * tm.ac_to_time_limit)))
        note = (f"slowest accepted run {t_ac:.3f} s x time_multiplier "
                f"{tm.ac_to_time_limit:g}, rounded")
        if t_tle is not None and t_tle < limit * tm.time_limit_to_tle:
            raise ValueError(f"a time_limit_exceeded submission ran only {t_tle:.3f} s: "
                             f"within the safety margin ({limit:g} s x "
                             f"{tm.time_limit_to_tle:g})")
        return TimeLimit(limit, t_ac, t_tle, note)
    res = tm.resolution
    limit = max(res, math.ceil(t_ac * tm.ac_to_time_limit / res - 1e-9) * res)
    note = (f"slowest accepted run {t_ac:.3f} s x ac_to_time_limit {tm.ac_to_time_limit:g}, "
            f"up to a multiple of {res:g} s")
    if t_tle is not None and limit * tm.time_limit_to_tle > t_tle + 1e-9:
        raise ValueError(f"no time limit fits: {limit:g} s x time_limit_to_tle "
                         f"{tm.time_limit_to_tle:g} is above the fastest time_limit_exceeded "
                         f"run ({t_tle:.3f} s)")
    return TimeLimit(round(limit, 6), t_ac, t_tle, note)
