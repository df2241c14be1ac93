"""Example-submission rules (directories, submissions.yaml) and the time limit they
imply -- pure functions over synthetic results."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.core import expectations as ex
from grader.core.errors import ProblemFormatError
from grader.core.problem import load_problem
from grader.core.result import SubmissionResult, TestResult
from grader.core.verdict import Verdict

from .test_package_format import cases, write


def package(tmp: Path, version: str = "2025-09", yaml_rules: str = "") -> Path:
    root = tmp / "pkg"
    head = f"problem_format_version: {version}\nname: P\nuuid: 1\n" if version != "legacy" \
        else "name: P\n"
    write(root, {"problem.yaml": head,
                 "data/secret/g1/test_group.yaml" if version != "legacy" else
                 "data/secret/g1/testdata.yaml": "",
                 "submissions/accepted/a.py": "", "submissions/wrong_answer/w.py": "",
                 "submissions/time_limit_exceeded/t.py": "",
                 "submissions/brute_force/b.py": "", "submissions/mine/m.py": "",
                 "submissions/submissions.yaml": yaml_rules})
    cases(root, "secret/g1", 2)
    cases(root, "secret/g2", 1)
    return root


def result(verdicts: dict[str, Verdict], times: dict[str, float] | None = None,
           score: float = 0.0, feedback: dict[str, str] | None = None) -> SubmissionResult:
    tests = tuple(TestResult(n, n.rsplit("/", 1)[0], v, cpu_time_s=(times or {}).get(n, 0.1),
                             feedback=(feedback or {}).get(n, ""))
                  for n, v in verdicts.items())
    overall = next((v for v in verdicts.values() if v is not Verdict.AC), Verdict.AC)
    return SubmissionResult("p", "v", "s", "h", "python3", overall, score, 100.0, None,
                            tests, ())


ALL_AC = {"secret/g1/01": Verdict.AC, "secret/g1/02": Verdict.AC, "secret/g2/01": Verdict.AC}


def exps(root: Path) -> dict[str, ex.Expectation]:
    from grader.pipeline.selfcheck import package_expectations

    p = load_problem(root, require_time_limit=False)
    return {e.label: e for e in package_expectations(p)}


def test_directory_defaults(tmp_path: Path) -> None:
    e = exps(package(tmp_path))
    assert "mine/m.py" not in e  # a directory nothing says anything about
    assert ex.check(e["accepted/a.py"], result(ALL_AC), max_score=100).ok
    wa = {**ALL_AC, "secret/g2/01": Verdict.WA}
    assert ex.check(e["wrong_answer/w.py"], result(wa), max_score=100).ok
    assert not ex.check(e["accepted/a.py"], result(wa), max_score=100).ok
    # wrong_answer permits only AC and WA: an MLE (RTE in Kattis's categories) is not
    mle = {**ALL_AC, "secret/g2/01": Verdict.MLE}
    c = ex.check(e["wrong_answer/w.py"], result(mle), max_score=100)
    assert not c.ok and any("got MLE on secret/g2/01" in p for p in c.problems)
    assert not ex.check(e["time_limit_exceeded/t.py"], result(wa), max_score=100).ok


def test_submissions_yaml_rules_per_group_and_glob(tmp_path: Path) -> None:
    rules = ("mine/*.{py,cpp}:\n  secret/g1:\n    permitted: [AC]\n  secret/g2:\n"
             "    required: [TLE]\n  message: too slow\n")
    e = exps(package(tmp_path, yaml_rules=rules))["mine/m.py"]
    good = result({**ALL_AC, "secret/g2/01": Verdict.TLE},
                  feedback={"secret/g2/01": "far too slow"})
    assert ex.check(e, good, max_score=100).ok
    bad = result({**ALL_AC, "secret/g1/02": Verdict.WA, "secret/g2/01": Verdict.AC})
    problems = ex.check(e, bad, max_score=100).problems
    assert any("secret/g1" in p and "WA" in p for p in problems)
    assert any("no test got one of ['TLE']" in p for p in problems)
    assert any("no judge message contains 'too slow'" in p for p in problems)
    with pytest.raises(ProblemFormatError, match="permitted must be a list"):
        exps(package(tmp_path / "b", yaml_rules="accepted:\n  permitted: [OK]\n"))


def test_time_limit_inference(tmp_path: Path) -> None:
    p = load_problem(package(tmp_path), require_time_limit=False)
    assert p.time_limit_source == "unset"
    e = exps(package(tmp_path / "x"))
    assert ex.bound_kind(e["accepted/a.py"].rules[0]) == "lower"
    assert ex.bound_kind(e["time_limit_exceeded/t.py"].rules[0]) == "upper"
    assert ex.bound_kind(e["brute_force/b.py"].rules[0]) is None  # opted out by default
    slow = result(ALL_AC, {"secret/g1/01": 0.3, "secret/g1/02": 0.7, "secret/g2/01": 0.2})
    assert ex.slowest(e["accepted/a.py"], slow, "lower") == pytest.approx(0.7)
    # 2025-09: 0.7 s x 2.0 = 1.4 -> the next multiple of the 1 s resolution: 2 s
    tl = ex.infer_time_limit(p, 0.7, None)
    assert tl.limit_s == 2.0
    assert ex.infer_time_limit(p, 0.7, 3.0).limit_s == 2.0  # 2 x 1.5 <= 3
    with pytest.raises(ValueError, match="no time limit fits"):
        ex.infer_time_limit(p, 0.7, 2.5)  # 2 x 1.5 = 3 > 2.5
    # legacy: 0.7 s x 5 = 3.5 -> rounded to 4 s; a TLE run must not finish within 8 s
    legacy = load_problem(package(tmp_path / "l", "legacy"), require_time_limit=False)
    assert ex.infer_time_limit(legacy, 0.7, None).limit_s == 4.0
    with pytest.raises(ValueError, match="safety margin"):
        ex.infer_time_limit(legacy, 0.7, 5.0)
