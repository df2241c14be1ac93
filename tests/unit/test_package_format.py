"""Problem packages as they are in the wild: format versions, types, limits with the
spec's defaults, test data configuration with inheritance, symlinked test cases,
scoring trees -- and malformed packages, which must end in a clear error naming the
file, never a traceback."""

from __future__ import annotations

import contextlib
import math
import os
import random
import shutil
from pathlib import Path

import pytest
import yaml

from grader.core.errors import ProblemFormatError
from grader.core.limits import MIB
from grader.core.result import TestResult
from grader.core.verdict import Verdict
from grader.formats.load import load_problem
from grader.formats.scoring import score_kattis, score_submission

from ..support import EXAMPLES, add_cases, write_files


def legacy_scoring(tmp: Path) -> Path:
    """A legacy scoring package whose subtasks share cases by symlink (as IOI-style
    packages do): subtask 2 contains subtask 1's cases plus its own."""
    root = tmp / "subtasks"
    write_files(root, {
        "problem.yaml": "name: Subtasks\ntype: scoring\nlimits: {time_limit: 1}\n",
        "data/testdata.yaml": "on_reject: continue\ngrader_flags: ignore_sample\n",
        "data/sample/testdata.yaml": "accept_score: 0\ngrader_flags: sum\n",
        "data/secret/testdata.yaml": "on_reject: continue\ngrader_flags: sum\n",
        "data/secret/g1/testdata.yaml": "accept_score: 10\ngrader_flags: min\non_reject: break\n",
        "data/secret/g2/testdata.yaml": "accept_score: 30\ngrader_flags: min\non_reject: break\n",
    })
    add_cases(root, "sample", 1)
    add_cases(root, "secret/g1", 2)
    add_cases(root, "secret/g2", 1, start=3)
    for name in ("01", "02"):
        for ext in ("in", "ans"):
            (root / f"data/secret/g2/{name}.{ext}").symlink_to(f"../g1/{name}.{ext}")
    return root


def res(name: str, group: str, v: Verdict, points: float | None = None) -> TestResult:
    return TestResult(name, group, v, points=points)


def test_early_2023_07_draft_with_legacy_test_data_keys(tmp_path: Path) -> None:
    """problemtools' oddecho: a 2023-07-draft problem.yaml over testdata.yaml files with
    legacy keys (grader_flags, accept_score, range); read with the legacy rules, as
    problemtools reads it, not refused and not ignored."""
    root = legacy_scoring(tmp_path)
    (root / "problem.yaml").write_text("problem_format_version: 2023-07-draft\nname: S\n"
                                       "uuid: 1\ntype: scoring\nlimits: {time_limit: 1}\n")
    p = load_problem(root)
    assert p.format_version == "2023-07-draft" and p.legacy_data
    assert p.max_score == pytest.approx(40.0)
    ok = [res(c.name, c.group, Verdict.AC) for c in p.cases]
    assert score_kattis(p, ok)[:2] == (pytest.approx(40.0), Verdict.AC)
    assert not load_problem(new_scoring(tmp_path / "n")).legacy_data


def test_legacy_scoring_with_symlinked_subtasks(tmp_path: Path) -> None:
    p = load_problem(legacy_scoring(tmp_path))
    assert p.format_version == "legacy" and p.is_scoring and p.scoring_model == "kattis"
    assert [c.name for c in p.cases] == ["sample/01", "secret/g1/01", "secret/g1/02",
                                         "secret/g2/01", "secret/g2/02", "secret/g2/03"]
    # the linked case is the shared file itself (its content hash dedupes nothing twice)
    g2 = p.group("secret/g2").cases[0]
    assert g2.input_path == (tmp_path / "subtasks/data/secret/g1/01.in").resolve()
    # g1: min of 10s; g2: min of 30s; secret: sum -> 40; sample ignored
    assert p.max_score == pytest.approx(40.0)
    ok = [res(c.name, c.group, Verdict.AC) for c in p.cases]
    assert score_kattis(p, ok)[:2] == (pytest.approx(40.0), Verdict.AC)
    # failing a shared case fails both subtasks
    one_wrong = [res(c.name, c.group, Verdict.WA if c.name.endswith("g2/03") else Verdict.AC)
                 for c in p.cases]
    score, verdict, groups = score_kattis(p, one_wrong)
    assert verdict is Verdict.WA and score == 0.0  # worst_error: the result is rejected
    by = {g.name: g for g in groups}
    assert by["secret/g1"].score == pytest.approx(10.0)
    assert by["secret/g2"].score == 0.0  # min(30, 30, reject 0)
    assert "min" in by["secret/g2"].scoring


def test_a_link_leaving_the_package_or_dangling_is_a_load_error(tmp_path: Path) -> None:
    root = legacy_scoring(tmp_path)
    outside = tmp_path / "secret.txt"
    outside.write_text("host file\n")
    (root / "data/secret/g1/09.in").symlink_to(outside)
    (root / "data/secret/g1/09.ans").write_text("x\n")
    with pytest.raises(ProblemFormatError, match=r"09.in: is a symbolic link .* outside"):
        load_problem(root)
    (root / "data/secret/g1/09.in").unlink()
    (root / "data/secret/g1/09.in").symlink_to("nowhere.in")
    with pytest.raises(ProblemFormatError, match=r"09.in: is a symbolic link to 'nowhere.in', "
                                                 r"which does not exist"):
        load_problem(root)


def new_scoring(tmp: Path, version: str = "2025-09", secret_cfg: str = "",
                g1: str = "max_score: 40\n", g2: str = "max_score: 60\nscore_aggregation: sum\n"
                ) -> Path:
    root = tmp / "newscore"
    write_files(root, {
        "problem.yaml": f"problem_format_version: {version}\nname: New\ntype: scoring\n"
                        "uuid: 1\nlimits: {time_limit: 2}\n",
        "data/secret/test_group.yaml": secret_cfg,
        "data/secret/g1/test_group.yaml": g1,
        "data/secret/g2/test_group.yaml": g2,
    })
    add_cases(root, "sample", 1)
    add_cases(root, "secret/g1", 2)
    add_cases(root, "secret/g2", 4)
    return root


def test_2025_09_scoring_groups_aggregate_and_explain(tmp_path: Path) -> None:
    p = load_problem(new_scoring(tmp_path))
    assert p.format_version == "2025-09" and p.max_score == pytest.approx(100.0)
    assert p.limits.cpu_time_s == 2.0 and p.time_limit_source == "problem.yaml"
    # spec defaults where the package is silent
    assert p.limits.memory_bytes == 2048 * MIB and p.limits.output_bytes == 8 * MIB
    assert p.code_limit_bytes == 128 * 1024
    tests = [res(c.name, c.group, Verdict.AC) for c in p.cases]
    tests[-1] = res(tests[-1].name, tests[-1].group, Verdict.WA)  # one of g2's four
    score, groups = score_submission(p, tests)
    by = {g.name: g for g in groups}
    assert by["secret/g1"].score == pytest.approx(40.0)  # pass-fail: all accepted
    assert by["secret/g2"].score == pytest.approx(45.0)  # sum: 3 of 4 x 15
    assert score == pytest.approx(85.0)
    # score.txt (absolute) and score_multiplier.txt (of the case's maximum 15)
    tests[-2] = res(tests[-2].name, tests[-2].group, Verdict.AC, points=7.5)
    assert score_submission(p, tests)[0] == pytest.approx(77.5)


def test_require_pass_and_its_errors(tmp_path: Path) -> None:
    root = new_scoring(tmp_path, g2="max_score: 60\nscore_aggregation: sum\n"
                                    "require_pass: secret/g1\n")
    p = load_problem(root)
    assert p.nodes["secret/g2"].require_pass == ("secret/g1",)
    tests = [res(c.name, c.group, Verdict.WA if c.name == "secret/g1/01" else Verdict.AC)
             for c in p.cases if not c.name.startswith("secret/g2")]
    score, groups = score_submission(p, tests)
    by = {g.name: g for g in groups}
    assert score == 0.0 and "requires secret/g1" in by["secret/g2"].scoring
    (root / "data/secret/g2/test_group.yaml").write_text(
        "max_score: 60\nrequire_pass: secret/g9\n")
    with pytest.raises(ProblemFormatError, match="not a test data group"):
        load_problem(root)


def test_2023_07_draft_infers_group_maxima(tmp_path: Path) -> None:
    # 2023-07: groups without a score share what the others leave: (100 - 40) / 1
    root = new_scoring(tmp_path, version="2023-07-draft", g1="scoring: {score: 40}\n",
                       g2="scoring: {aggregation: sum}\n")
    p = load_problem(root)
    assert p.nodes["secret/g2"].max_score == pytest.approx(60.0)
    assert p.nodes["secret/g2"].case_max["secret/g2/01"] == pytest.approx(15.0)
    # 2025-09 insists on an explicit max_score for each group of a bounded secret
    with pytest.raises(ProblemFormatError, match="needs a max_score"):
        load_problem(new_scoring(tmp_path / "b", g2="score_aggregation: sum\n"))


def test_types_and_what_is_refused(tmp_path: Path) -> None:
    base = {"data/secret/01.in": "1\n", "data/secret/01.ans": "1\n"}
    pkg = tmp_path / "t"

    def load(problem_yaml: str, extra: dict[str, str | None] | None = None) -> object:
        shutil.rmtree(pkg, ignore_errors=True)
        write_files(pkg, {"problem.yaml": problem_yaml, **base, **(extra or {})})
        return load_problem(pkg)

    head = "problem_format_version: 2025-09\nname: T\nuuid: x\nlimits: {time_limit: 1}\n"
    p = load(head + "type: [interactive, scoring]\n", {"output_validator/v.py": "print()\n"})
    assert p.is_interactive and p.is_scoring  # type: ignore[attr-defined]
    for text, msg in [
            ("type: interactive\n", "needs a custom output validator"),
            ("type: [pass-fail, scoring]\n", "cannot be combined"),
            ("type: [interactive, submit-answer]\n", "cannot be combined"),
            ("type: submit-answer\n", "not supported"),
            ("type: multipass\n", "not a problem type"),
            ("type: pass-fail interactive\n",
             "several types are a list, type: [pass-fail, interactive]"),
            ("type: [scoring, scoring]\n", "repeats"),
            ("validation: custom\n", "unknown keys ['validation']"),
            ("source_url: https://c.example\n", "source_url: write source: {name: ..., url"),
            ("frobnicate: 3\n", "unknown keys ['frobnicate']"),
            ("limits: {memory: lots}\n", "limits.memory must be a number"),
            ("limits: {time_multipliers: {ac_to_time_limit: 0.5}}\n", "ac_to_time_limit"),
            ("limits: {validation_passes: 1}\n", "validation_passes"),
            ("languages: [cobol]\n", "gradeline grades none of them")]:
        with pytest.raises(ProblemFormatError, match=msg.replace("[", r"\[").replace("]", r"\]")):
            load(head.replace("limits: {time_limit: 1}\n", "") + text
                 if text.startswith("limits") else head + text)
    with pytest.raises(ProblemFormatError, match="problem_format_version '2031-01'"):
        load("problem_format_version: 2031-01\nname: T\n")
    legacy = "name: T\nlimits: {time_limit: 1}\n"
    assert load(legacy + "validation: custom interactive\n",
                {"output_validators/v/v.py": "print()\n"}).is_interactive  # type: ignore
    domjudge = load(legacy + "validation: custom multi-pass\n"
                    "limits: {time_limit: 1, validation_passes: 26}\n",
                    {"output_validators/v/v.py": "print()\n"})
    assert domjudge.is_multi_pass and domjudge.validation_passes == 26  # type: ignore
    with pytest.raises(ProblemFormatError, match="custom graders"):
        load(legacy + "type: scoring\n", {"graders/g.py": "print()\n"})
    with pytest.raises(ProblemFormatError, match="minimisation"):
        load(legacy + "type: scoring\ngrading: {objective: min}\n")


def test_test_data_configuration_is_checked_and_inherited(tmp_path: Path) -> None:
    root = tmp_path / "cfg"
    write_files(root, {"problem.yaml": "problem_format_version: 2025-09\nname: C\nuuid: 1\n"
                                 "limits: {time_limit: 1}\n",
                 "data/secret/test_group.yaml": "args: [--fast]\noutput_validator_args: "
                                                "[float_tolerance, '1e-6']\n",
                 "data/secret/02.yaml": "args: [--slow, '3']\n",
                 "data/secret/02.files/extra.txt": "hello\n"})
    add_cases(root, "secret", 2)
    p = load_problem(root)
    one, two = p.cases
    assert one.args == ("--fast",) and two.args == ("--slow", "3")
    assert one.validator_flags == ("float_tolerance", "1e-6")  # inherited
    assert two.files is not None and (two.files / "extra.txt").read_text() == "hello\n"
    (root / "data/secret/02.yaml").write_text("argz: []\n")
    with pytest.raises(ProblemFormatError, match=r"02.yaml: unknown keys \['argz'\]"):
        load_problem(root)
    (root / "data/secret/02.yaml").write_text("args: [a\n")
    with pytest.raises(ProblemFormatError, match=r"02\.yaml: is not valid YAML"):
        load_problem(root)


def test_time_limit_recorded_by_check_and_required(tmp_path: Path) -> None:
    root = tmp_path / "tl"
    write_files(root, {"problem.yaml": "problem_format_version: 2025-09\nname: T\nuuid: 1\n"})
    add_cases(root, "secret", 1)
    with pytest.raises(ProblemFormatError, match="run `gradeline check`"):
        load_problem(root)
    assert load_problem(root, require_time_limit=False).time_limit_source == "unset"
    before = load_problem(root, require_time_limit=False).version
    (root / ".timelimit").write_text("3\n")
    p = load_problem(root)
    assert p.limits.cpu_time_s == 3.0 and p.time_limit_source == ".timelimit"
    assert p.version != before  # a new time limit is a new version of the package


def test_include_and_language_restrictions(tmp_path: Path) -> None:
    root = tmp_path / "inc"
    write_files(root, {"problem.yaml": "problem_format_version: 2025-09\nname: I\nuuid: 1\n"
                                 "limits: {time_limit: 1}\nlanguages: [cpp, python3, cobol]\n",
                 "include/cpp/driver.cpp": "int main(){}\n",
                 "include/default/data.txt": "x\n"})
    add_cases(root, "secret", 1)
    p = load_problem(root)
    assert p.languages == ("cpp", "python3")  # cobol is left out: gradeline has none
    assert p.included_files("cpp") == (root / "include/cpp").resolve()
    assert p.included_files("python3") == (root / "include/default").resolve()
    write_files(root, {"include/klingon/x.kl": "x\n"})
    with pytest.raises(ProblemFormatError, match="include/klingon"):
        load_problem(root)


def test_legacy_on_reject_break_propagates_up_the_tree(tmp_path: Path) -> None:
    from grader.formats.kattis.runplan import RunPlan

    p = load_problem(legacy_scoring(tmp_path))
    plan = RunPlan(p, None)
    order = []
    for c in p.cases:
        if plan.should_run(c):
            order.append(c.name)
            plan.record(c, Verdict.WA if c.name == "secret/g1/01" else Verdict.AC)
    # g1 breaks at its first rejection; secret continues (on_reject: continue) into g2
    assert order == ["sample/01", "secret/g1/01", "secret/g2/01", "secret/g2/02",
                     "secret/g2/03"]
    # with secret breaking too, the rejection in g1 also ends secret: g2 never runs
    (p.path / "data/secret/testdata.yaml").write_text("on_reject: break\ngrader_flags: sum\n")
    p = load_problem(p.path)
    plan = RunPlan(p, None)
    order = []
    for c in p.cases:
        if plan.should_run(c):
            order.append(c.name)
            plan.record(c, Verdict.WA if c.name == "secret/g1/01" else Verdict.AC)
    assert order == ["sample/01", "secret/g1/01"]


# -- no input ends in a traceback ---------------------------------------------------------
MUTATIONS = [
    lambda r, rng: (r / "problem.yaml").write_text(": : :\n\t- [\n"),
    lambda r, rng: (r / "problem.yaml").write_text("- a list\n"),
    lambda r, rng: (r / "problem.yaml").write_bytes(b"\xff\xfe name: x\n"),
    lambda r, rng: (r / "problem.yaml").write_text(yaml.safe_dump(
        {"problem_format_version": rng.choice(["2025-09", "2023-07-draft", "legacy", 7, None]),
         "type": rng.choice(["scoring", ["interactive"], 3, "", None]),
         "limits": rng.choice([{"time_limit": "x"}, {"memory": -1}, [], None,
                               {"time_multipliers": 3}])})),
    lambda r, rng: shutil.rmtree(r / "data"),
    lambda r, rng: shutil.rmtree(r / "data" / "secret"),
    lambda r, rng: next((r / "data").rglob("*.ans")).unlink(),
    lambda r, rng: next((r / "data").rglob("*.in")).write_bytes(os.urandom(64)),
    lambda r, rng: (next((r / "data").rglob("*.in")).parent / "testdata.yaml").write_text(
        rng.choice(["on_reject: maybe\n", "range: a b\n", "grader_flags: fancy\n",
                    "accept_score: many\n", "[1, 2\n", "grading: custom\n"])),
    lambda r, rng: (next((r / "data").rglob("*.in")).parent / "test_group.yaml").write_text(
        rng.choice(["max_score: -3\n", "score_aggregation: mean\n", "require_pass: 3\n",
                    "scoring: 7\n", "args: {a: b}\n"])),
    lambda r, rng: next((r / "data").rglob("*.in")).with_suffix(".yaml").write_text(
        rng.choice(["args: 3\n", "weird: 1\n", "full_feedback: yes\n"])),
    lambda r, rng: (r / "data" / "secret" / "zz.in").symlink_to(
        rng.choice(["/etc/shadow", "../../..", "missing.in", "zz.in"])),
    lambda r, rng: (r / "gradeline.yaml").write_text(rng.choice(
        ["groups: 3\n", "languages: []\n", "time_limit_s: inf\n", "total_points: x\n",
         "wall_time_s: 0\n",
         "compile_flags: [a]\n"])),
    lambda r, rng: (r / "include" / rng.choice(["cpp", "x", "default"])).mkdir(parents=True),
    lambda r, rng: (r / "output_validator").mkdir(),
    lambda r, rng: (r / ".timelimit").write_text(rng.choice(["", "abc", "-1", "nan"])),
]


@pytest.mark.parametrize("seed", range(60))
def test_mutated_packages_load_or_fail_with_a_reason(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    src = rng.choice([*(EXAMPLES / n for n in ("bigsum", "meanstd", "spread"))])
    root = tmp_path / src.name
    shutil.copytree(src, root, symlinks=True)
    if seed % 3 == 0:
        shutil.rmtree(root)
        root = legacy_scoring(tmp_path)
    for mutate in rng.sample(MUTATIONS, k=rng.randint(1, 3)):
        with contextlib.suppress(OSError, StopIteration):  # the mutation may not apply
            mutate(root, rng)
    try:
        p = load_problem(root)
    except ProblemFormatError as e:
        assert str(e).startswith(f"problem '{root.name}': ")
        return
    assert p.cases and math.isfinite(p.max_score)


def test_secret_cases_beside_directories_and_data_settings(tmp_path: Path) -> None:
    """2025-09: without a test_group.yaml, subdirectories of secret only organise its
    cases (cases may sit beside them); with one, they are groups and cases beside them
    are refused with the remedy. data/test_group.yaml (BAPCtools' place for settings
    every case shares) is applied, not ignored; what data/ may not hold is refused."""
    root = tmp_path / "mix"
    write_files(root, {"problem.yaml": "problem_format_version: 2025-09\nname: M\nuuid: 1\n"
                                 "limits: {time_limit: 1}\n",
                 "data/test_group.yaml": "output_validator_args: [float_tolerance, 1E-6]\n",
                 "data/secret/more/02.in": "2\n", "data/secret/more/02.ans": "2\n"})
    add_cases(root, "sample", 1)
    add_cases(root, "secret", 1)
    p = load_problem(root)
    names = [c.name for c in p.cases]
    assert names == ["sample/01", "secret/01", "secret/more/02"], names
    assert all(c.validator_flags == ("float_tolerance", "1E-6") for c in p.cases)
    assert [g.name for g in p.groups] == ["sample", "secret"]
    # a group's own output_validator_args replace what data/ gave
    write_files(root, {"data/secret/test_group.yaml": "output_validator_args: [case_sensitive]\n"})
    assert load_problem(root).cases[1].validator_flags == ("case_sensitive",)
    (root / "data/secret/test_group.yaml").unlink()
    write_files(root, {"data/secret/more/test_group.yaml": ""})
    with pytest.raises(ProblemFormatError, match=r"holds test cases \(01.in\) beside test "
                                                 r"data groups \(more/ has a test_group"):
        load_problem(root)
    (root / "data/secret/01.in").unlink()
    (root / "data/secret/01.ans").unlink()
    assert [g.name for g in load_problem(root).groups] == ["sample", "secret/more"]
    write_files(root, {"data/test_group.yaml": "max_score: 50\n"})
    with pytest.raises(ProblemFormatError, match="max_score belongs in data/secret"):
        load_problem(root)
    write_files(root, {"data/test_group.yaml": "", "data/extra.in": "1\n"})
    with pytest.raises(ProblemFormatError, match=r"extra\.in: is not part of the test data"):
        load_problem(root)
