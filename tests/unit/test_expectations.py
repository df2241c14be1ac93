"""Example-submission rules (directories, submissions.yaml) and the time limit they
imply -- pure functions over synthetic results."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.core.errors import ProblemFormatError
from grader.core.result import SubmissionResult, TestResult
from grader.core.verdict import Verdict
from grader.formats import expectations as ex
from grader.formats.load import load_problem

from ..support import add_cases, write_files


def package(tmp: Path, version: str = "2025-09", yaml_rules: str = "") -> Path:
    root = tmp / "pkg"
    head = f"problem_format_version: {version}\nname: P\nuuid: 1\n" if version != "legacy" \
        else "name: P\n"
    write_files(root, {"problem.yaml": head,
                 "data/secret/g1/test_group.yaml" if version != "legacy" else
                 "data/secret/g1/testdata.yaml": "",
                 "submissions/accepted/a.py": "", "submissions/wrong_answer/w.py": "",
                 "submissions/time_limit_exceeded/t.py": "",
                 "submissions/brute_force/b.py": "", "submissions/mine/m.py": "",
                 "submissions/submissions.yaml": yaml_rules})
    add_cases(root, "secret/g1", 2)
    add_cases(root, "secret/g2", 1)
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


def test_the_lower_bound_counts_only_passed_runs(tmp_path: Path) -> None:
    """problemtools' guess: a wrong answer spinning after the interactor said WA took
    13 s; the accepted runs took 0.15 s. Only tests that passed bound the limit."""
    e = exps(package(tmp_path))
    spin = result({**ALL_AC, "secret/g2/01": Verdict.WA},
                  {"secret/g1/01": 0.15, "secret/g1/02": 0.1, "secret/g2/01": 13.0})
    assert ex.slowest(e["wrong_answer/w.py"], spin, "lower") == pytest.approx(0.15)
    tests = tuple(TestResult(t.name, t.group, t.verdict, cpu_time_s=t.cpu_time_s,
                             termination="cpu-time" if t.name == "secret/g2/01" else None)
                  for t in result({**ALL_AC, "secret/g2/01": Verdict.TLE},
                                  {"secret/g2/01": 10.0}).tests)
    cut = SubmissionResult("p", "v", "s", "h", "python3", Verdict.TLE, 0.0, 100.0, None,
                           tests, ())
    assert ex.slowest(e["accepted/a.py"], cut, "lower") == pytest.approx(0.1)
    assert ex.timed_out(e["accepted/a.py"], cut) == ["secret/g2/01"]
    assert ex.timed_out(e["accepted/a.py"], spin) == []
    # an upper bound still counts what the run took
    assert ex.slowest(e["time_limit_exceeded/t.py"], cut, "upper") == pytest.approx(10.0)


def test_partially_accepted_is_judged_by_score_in_newer_versions(tmp_path: Path) -> None:
    """The format repository's 2025-09 scoring example: partially_accepted gets WA on
    some cases and 30 of 100 -- a partial score, which is what the directory says."""
    root = package(tmp_path)
    (root / "submissions/partially_accepted").mkdir()
    (root / "submissions/partially_accepted/p.py").write_text("")
    e = exps(root)["partially_accepted/p.py"]
    wa = {**ALL_AC, "secret/g2/01": Verdict.WA}
    assert ex.check(e, result(wa, score=30.0), max_score=100).ok
    for score in (0.0, 100.0):
        c = ex.check(e, result(wa, score=score), max_score=100)
        assert not c.ok and "not strictly between 0 and 100" in c.problems[0]
    legacy = package(tmp_path / "l", "legacy")
    (legacy / "submissions/partially_accepted").mkdir()
    (legacy / "submissions/partially_accepted/p.py").write_text("")
    el = exps(legacy)["partially_accepted/p.py"]
    assert not ex.check(el, result(wa, score=30.0), max_score=100).ok  # legacy: AC only
    assert ex.check(el, result(ALL_AC, score=30.0), max_score=100).ok


def test_check_skips_disabled_submissions_and_languages_it_lacks(tmp_path: Path) -> None:
    from grader.pipeline.selfcheck import skip_reason

    root = package(tmp_path)
    for name in ("old.py.disabled", "sol.pas", "sol.cob"):
        (root / "submissions/accepted" / name).write_text("")
    (root / "submissions/accepted/dir").mkdir()
    (root / "submissions/accepted/dir/main.py").write_text("")
    p = load_problem(root, require_time_limit=False)
    why = {e.label: skip_reason(p, e) for e in exps(root).values()}
    assert why["accepted/a.py"] is None and why["accepted/dir"] is None
    assert why["accepted/old.py.disabled"] == "disabled (*.disabled)"
    assert "cannot detect the language" in str(why["accepted/sol.pas"])
    assert "cannot detect the language" in str(why["accepted/sol.cob"])
