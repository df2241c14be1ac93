import shutil

import pytest

from grader.core.errors import ProblemFormatError
from grader.core.limits import MIB
from grader.formats.load import load_problem

from ..support import EXAMPLES


def test_bigsum_groups_points_and_limits():
    p = load_problem(EXAMPLES / "bigsum")
    assert [g.name for g in p.groups] == ["sample", "secret/large", "secret/small"]
    assert p.group("secret/small").points == 30
    assert p.group("secret/small").scoring == "all_or_nothing"
    assert p.group("secret/large").scoring == "proportional"
    assert p.max_score == 100
    assert p.limits.cpu_time_s == 1.0
    assert p.limits.memory_bytes == 256 * MIB
    assert p.limits.output_bytes == 8 * MIB
    assert p.cases[0].name == "sample/1"
    assert p.languages == ("c", "cpp", "python3")


def test_meanstd_float_flags_and_default_points():
    p = load_problem(EXAMPLES / "meanstd")
    assert p.validator_flags == ("float_tolerance", "1e-6")
    assert p.group("secret").validator_flags == ("float_tolerance", "1e-6")
    assert p.group("secret").points == 100 and p.group("sample").points == 0


def test_spread_custom_validator():
    p = load_problem(EXAMPLES / "spread")
    assert p.validation == "custom"
    assert p.validator_dir is not None and (p.validator_dir / "validate.py").is_file()


def test_version_ignores_submissions_but_not_data(problem_copy):
    d = problem_copy("bigsum")
    v0 = load_problem(d).version
    (d / "submissions" / "accepted" / "new.py").write_text("print(1)\n")
    assert load_problem(d).version == v0
    (d / "data" / "sample" / "1.ans").write_text("7\n")
    assert load_problem(d).version != v0


def test_testdata_yaml_flags_inherit(problem_copy):
    d = problem_copy("bigsum")
    (d / "data" / "secret" / "testdata.yaml").write_text("output_validator_flags: case_sensitive\n")
    p = load_problem(d)
    assert p.group("secret/large").validator_flags == ("case_sensitive",)
    assert p.group("sample").validator_flags == ()


@pytest.mark.parametrize(("mutate", "file", "message"), [
    (lambda d: (d / "problem.yaml").unlink(), "problem.yaml", "missing"),
    (lambda d: (d / "problem.yaml").write_text("name: [unclosed\n"), "problem.yaml",
     "not valid YAML"),
    (lambda d: (d / "problem.yaml").write_text("- a list\n"), "problem.yaml", "mapping"),
    (lambda d: (d / "data/secret/small/01.ans").unlink(), "01.in", "no matching .ans"),
    (lambda d: (d / "gradeline.yaml").write_text("time_limit: 1\n"), "gradeline.yaml",
     "unknown keys"),
    (lambda d: (d / "gradeline.yaml").write_text("languages: [cobol]\n"), "gradeline.yaml",
     "unknown languages"),
    (lambda d: (d / "gradeline.yaml").write_text("groups: {secret/huge: 10}\n"),
     "gradeline.yaml", "have no tests"),
    (lambda d: (d / "gradeline.yaml").write_text("time_limit_s: -1\n"), "gradeline.yaml",
     "must be a number"),
    (lambda d: (d / "problem.yaml").write_text("problem_format_version: 2025-09\n"
                                                "type: submit-answer\n"),
     "problem.yaml", "not supported"),
    (lambda d: (d / "problem.yaml").write_text("validation: custom\n"), "output_validators",
     "no output validator"),
    (lambda d: shutil.rmtree(d / "data"), "data", "missing"),
    (lambda d: (d / "gradeline.yaml").write_text("groups: {secret/small: {on_reject: stop}}\n"),
     "gradeline.yaml", "on_reject must be one of"),
    (lambda d: (d / "gradeline.yaml").write_text("time_limit_s: 2\nwall_time_s: 1\n"),
     "gradeline.yaml", "must not be below the time limit"),
])
def test_errors_name_problem_and_file(problem_copy, mutate, file, message):
    d = problem_copy("bigsum")
    mutate(d)
    with pytest.raises(ProblemFormatError) as e:
        load_problem(d)
    text = str(e.value)
    assert text.startswith("problem 'bigsum': ")
    assert file in text and message in text


def test_wall_limit_is_derived_unless_the_course_sets_it(problem_copy):
    d = problem_copy("bigsum")
    (d / "gradeline.yaml").write_text("time_limit_s: 1.5\n")
    assert load_problem(d).limits.wall_s == 3.0  # max(2x, x+1)
    (d / "gradeline.yaml").write_text("time_limit_s: 1.5\nwall_time_s: 10\n")
    p = load_problem(d)
    assert p.limits.wall_s == 10.0 and p.limits.cpu_time_s == 1.5


def test_on_reject_per_group(problem_copy):
    d = problem_copy("bigsum")
    (d / "gradeline.yaml").write_text(
        "time_limit_s: 1\ngroups:\n  sample: 0\n  secret/small: {points: 30, on_reject: break}\n"
        "  secret/large: {points: 70, scoring: proportional}\n")
    p = load_problem(d)
    assert p.group("secret/small").on_reject == "break"
    assert p.group("secret/large").on_reject == "continue"  # the default


def test_a_problem_restricted_to_some_groups_runs_and_scores_only_those():
    from grader.core.jobs import GradingJob

    p = load_problem(EXAMPLES / "bigsum")
    part = p.restricted(["sample", "secret/small"])
    assert [g.name for g in part.groups] == ["sample", "secret/small"]
    assert {c.group for c in part.cases} == {"sample", "secret/small"}
    assert part.max_score == 30 and p.max_score == 100
    assert part.version.startswith(p.version + "/groups-") and part.phase == "part"
    assert p.phase == "full"
    assert part.version == p.restricted(["secret/small", "sample"]).version
    assert part.version != p.restricted(["sample"]).version
    with pytest.raises(ProblemFormatError, match="no test groups"):
        p.restricted(["secret/huge"])
    job = GradingJob(p.path, p.path / "x.c", groups=("sample",))
    assert GradingJob.from_json(job.to_json()) == job
    assert GradingJob.from_json(GradingJob(p.path, p.path).to_json()).groups is None
