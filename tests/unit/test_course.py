"""The course file and its policy: deadlines in the course's zone, extensions, grace
days, late penalties, which submission counts, visibility, and the LMS files."""

from __future__ import annotations

import csv
import io
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from grader.core.errors import ConfigError
from grader.course.load import load_course, read_roster
from grader.course.policy import Attempt, Grade, grade_course, penalty
from grader.course.sheets import (
    CANVAS_FIXED,
    MOODLE_FIXED,
    assignment_sheet,
    canvas_csv,
    course_sheet,
    moodle_csv,
)
from grader.course.spec import LatePolicy
from grader.course.visibility import group_visibility, unknown_rules, visible_groups

from ..support import COURSE_ROSTER, course_at, course_yaml


def test_a_course_file_reads_with_deadlines_in_its_time_zone(tmp_path: Path) -> None:
    c = load_course(course_yaml(tmp_path))
    hw1 = c.assignments["hw1"]
    assert hw1.deadline == course_at(1, 23, 59)
    assert hw1.deadline.utcoffset() == timedelta(hours=1)  # CET in December
    assert hw1.package == (tmp_path / "pk" / "hw1").resolve()
    assert hw1.counts == "last" and c.assignments["hw2"].counts == "best"
    assert c.students["bob"].extension == timedelta(days=2)
    assert c.deadline("bob", "hw1") == course_at(3, 23, 59)
    assert c.deadline("alice", "hw1") == course_at(1, 23, 59)
    assert c.slurm.account is None and c.bulk.nice == 1000


def test_the_course_names_its_slurm_account_and_live_qos(tmp_path: Path) -> None:
    c = load_course(course_yaml(tmp_path, slurm={"account": "cs101", "qos": "live"},
                                bulk={"qos": "bulk"}))
    assert (c.slurm.account, c.slurm.qos, c.bulk.qos) == ("cs101", "live", "bulk")


@pytest.mark.parametrize(("change", "says"), [
    ({"slurm": {"account": "cs101\n#SBATCH --uid=0"}}, "slurm.account: String should match"),
    ({"bulk": {"qos": "-x"}}, "bulk.qos: String should match"),
    ({"colour": "blue"}, "unknown key 'colour'; the keys here are course, timezone"),
    ({"timezone": "Mars/Olympus"}, "timezone: unknown time zone"),
    ({"late": {"penalty_per_day": 150}}, "late.penalty_per_day: Input should be less"),
    ({"late": {"max_late": "soon"}}, "late.max_late: a duration is written"),
    ({"assignments": [{"name": "hw1", "package": "p", "deadline": "tomorrow"}]},
     "assignments[0].deadline: a time is written"),
    ({"assignments": [{"name": "a", "package": "p", "deadline": "2026-12-01 23:59"},
                      {"name": "a", "package": "q", "deadline": "2026-12-02 23:59"}]},
     "assignment names must be unique: a"),
    ({"assignments": []}, "assignments: List should have at least 1 item"),
    ({"extensions": [{"student": "carol", "assignment": "hw1", "extra": "1d"}]},
     "extensions[0]: student 'carol' is not in the roster"),
    ({"extensions": [{"student": "alice", "assignment": "hw9", "extra": "1d"}]},
     "extensions[0]: no assignment 'hw9'"),
    ({"extensions": [{"student": "alice", "until": "2026-12-05 12:00", "extra": "1d"}]},
     "give either until (a new deadline) or extra"),
])
def test_a_wrong_course_file_is_an_error_naming_the_place(tmp_path: Path,
                                                          change: dict[str, object],
                                                          says: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_course(course_yaml(tmp_path, **change))
    assert str(e.value).startswith(str(tmp_path / "course.yaml"))
    assert says in str(e.value)


@pytest.mark.parametrize(("roster", "says"), [
    ("student,name\nalice,Alice\n", "missing email"),
    ("student,name,email,shoe\n", "unknown shoe"),
    ("student,name,email\nalice,A,a@x\nalice,B,b@x\n", "roster.csv:3: student 'alice' "
                                                       "appears twice"),
    ("student,name,email,extension\nalice,A,a@x,later\n", "roster.csv:2: extension"),
])
def test_a_wrong_roster_is_an_error_naming_its_line(tmp_path: Path, roster: str,
                                                    says: str) -> None:
    p = course_yaml(tmp_path)
    (tmp_path / "roster.csv").write_text(roster)
    with pytest.raises(ConfigError, match=r"roster\.csv") as e:
        load_course(p)
    assert says in str(e.value)


def test_penalty_counts_days_and_hours_begun_up_to_the_cap() -> None:
    pol = LatePolicy(penalty_per_day=10, penalty_per_hour=1, cap=30)
    assert penalty(timedelta(0), pol) == 0
    assert penalty(timedelta(minutes=1), pol) == 11  # a day and an hour begun
    assert penalty(timedelta(hours=25), pol) == 30  # 20 + 25, capped


def grades(tmp_path: Path, attempts: list[Attempt], **over: object
           ) -> dict[tuple[str, str], Grade]:
    c = load_course(course_yaml(tmp_path, **over))
    return {(g.student, g.assignment): g for g in grade_course(c, attempts,
                                                               {"hw2": 100.0})}


def test_grace_days_cover_lateness_in_deadline_order_then_the_penalty(tmp_path: Path
                                                                      ) -> None:
    tries = [Attempt("a1", "alice", "hw1", course_at(3, 1), 1.0, 1.0),  # 25 h late: 2 days
             Attempt("a2", "alice", "hw2", course_at(9, 2), 1.0, 0.8)]  # 2 h late: pool empty
    g = grades(tmp_path, tries)
    hw1, hw2 = g[("alice", "hw1")], g[("alice", "hw2")]
    assert (hw1.grace_days, hw1.penalty_pct, hw1.points) == (2, 0.0, 20.0)
    assert (hw2.grace_days, hw2.penalty_pct) == (0, 10.0)
    assert hw2.final == pytest.approx(0.72) and hw2.points == pytest.approx(72.0)


def test_an_assignment_caps_the_grace_days_it_may_take(tmp_path: Path) -> None:
    g = grades(tmp_path, [Attempt("a2", "alice", "hw2", course_at(10, 12), 1.0, 1.0)])  # 36 h
    hw2 = g[("alice", "hw2")]
    assert (hw2.grace_days, hw2.penalty_pct) == (1, 10.0)


def test_an_extension_moves_the_students_deadline_and_a_change_recomputes(tmp_path: Path
                                                                           ) -> None:
    late = [Attempt("b1", "bob", "hw1", course_at(3, 12), 1.0, 1.0)]  # bob's roster: +2 days
    assert grades(tmp_path, late)[("bob", "hw1")].late == timedelta(0)
    moved = grades(tmp_path, late, extensions=[
        {"student": "bob", "assignment": "hw1", "until": "2026-12-02 12:00"}])
    g = moved[("bob", "hw1")]
    assert g.late == timedelta(days=1) and g.grace_days == 1


def test_past_max_late_nothing_counts_and_a_missing_one_is_zero(tmp_path: Path) -> None:
    g = grades(tmp_path, [Attempt("a1", "alice", "hw1", course_at(6, 12), 1.0, 1.0)])
    assert g[("alice", "hw1")].status == "too late"
    assert g[("bob", "hw1")].status == "missing" and g[("bob", "hw1")].points == 0


def test_last_best_and_chosen_pick_their_submission(tmp_path: Path) -> None:
    tries = [Attempt("x1", "alice", "hw1", course_at(1, 10), 0.9, 0.9),
             Attempt("x2", "alice", "hw1", course_at(1, 12), 0.5, 0.5, chosen=True),
             Attempt("x3", "alice", "hw1", course_at(1, 14), 0.7, None)]
    assert grades(tmp_path, tries)[("alice", "hw1")].spool_id == "x3"
    assert grades(tmp_path, tries)[("alice", "hw1")].status == "pending"

    def pick(counts: str) -> str | None:
        over = {"assignments": [{"name": "hw1", "package": "p", "deadline":
                                 "2026-12-01 23:59", "counts": counts}]}
        return grades(tmp_path, tries, **over)[("alice", "hw1")].spool_id

    assert pick("best") == "x1"
    assert pick("chosen") == "x2"
    tie = [*tries, Attempt("x4", "alice", "hw1", course_at(1, 15), 0.9, None)]
    over = {"assignments": [{"name": "hw1", "package": "p", "deadline": "2026-12-01 23:59",
                             "counts": "best"}]}
    assert grades(tmp_path, tie, **over)[("alice", "hw1")].spool_id == "x4"


def test_the_lms_files_have_their_documented_columns(tmp_path: Path) -> None:
    c = load_course(course_yaml(tmp_path))
    gs = grade_course(c, [Attempt("a1", "alice", "hw1", course_at(1, 12), 1.0, 0.5),
                          Attempt("b1", "bob", "hw2", course_at(8, 12), 1.0, None)], {"hw2": 100.0})
    possible = {"hw1": 20.0, "hw2": 100.0}
    canvas = list(csv.reader(io.StringIO(canvas_csv(c, gs, possible))))
    assert canvas[0] == [*CANVAS_FIXED, "hw1", "hw2"]
    assert canvas[1] == ["Points Possible", "", "", "", "", "20", "100"]
    assert canvas[2] == ["Adams, Alice", "", "S1", "alice", "A", "10", "0"]
    assert canvas[3] == ["Brown, Bob", "", "S2", "bob", "B", "0", ""]  # pending: empty
    moodle = list(csv.reader(io.StringIO(moodle_csv(c, gs))))
    assert moodle[0] == [*MOODLE_FIXED, "hw1", "hw2"]
    assert moodle[1] == ["Alice", "Adams", "S1", "alice@example.org", "10", "0"]
    sheet = list(csv.DictReader(io.StringIO(assignment_sheet(c, "hw1", gs))))
    assert sheet[0]["status"] == "final" and sheet[0]["points"] == "10"
    total = list(csv.reader(io.StringIO(course_sheet(c, gs, possible))))
    assert total[1][:3] == ["alice", "Alice Adams", "alice@example.org"]
    assert total[1][-2:] == ["10", "0"] and total[2][-1] == "1"  # bob: one pending


def test_visibility_defaults_and_rules() -> None:
    groups = ["sample", "secret/small", "secret/large"]
    assert group_visibility(groups, {}) == {"sample": "visible",
                                            "secret/small": "after_release",
                                            "secret/large": "after_release"}
    rules = {"secret": "after_deadline", "secret/small": "visible"}
    assert group_visibility(groups, rules)["secret/small"] == "visible"
    assert group_visibility(groups, rules)["secret/large"] == "after_deadline"
    assert visible_groups(groups, rules) == {"sample", "secret/small"}
    assert unknown_rules(groups, {"secret/smal": "visible", "secret": "hidden"}) == \
        ["secret/smal"]


def test_course_check_reads_the_packages_and_names_a_rule_that_matches_no_group(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from grader.cli import main as cli

    from ..support import EXAMPLES

    (tmp_path / "pk").mkdir()
    for name in ("hw1", "hw2"):
        shutil.copytree(EXAMPLES / "bigsum", tmp_path / "pk" / name)
    p = course_yaml(tmp_path)
    assert cli.main(["course", "check", "--course-file", str(p)]) == 0
    out = capsys.readouterr().out
    assert "course cs101 (Europe/Berlin): 2 assignment(s), 2 student(s)" in out
    assert "hw1: due 2026-12-01T23:59+01:00, counts last, 20 points; sample visible, " \
           "secret/large after_release, secret/small after_release" in out
    p = course_yaml(tmp_path, assignments=[{"name": "hw1", "package": "pk/hw1",
                                            "deadline": "2026-12-01 23:59",
                                            "visibility": {"secret/smal": "visible"}}])
    assert cli.main(["course", "check", "--course-file", str(p)]) == 1
    assert "visibility names 'secret/smal', which is no test group" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["release", "hw9"], ["choose", "hw9", "alice", "x1"],
                                  ["deadline", "hw9"], ["grades", "hw9"],
                                  ["similarity", "hw9"]])
def test_a_command_naming_no_assignment_of_the_course_is_refused_first(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    from grader.cli import main as cli

    p = course_yaml(tmp_path)
    with pytest.raises(SystemExit) as e:
        cli.main([*argv, "--course-file", str(p)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "course cs101 has no assignment 'hw9' (it has: hw1, hw2)" in err


def test_the_roster_takes_an_lms_id_column_and_keeps_it_unique() -> None:
    """An LMS's own id of a student (Canvas's user id) maps its downloads; optional."""
    assert read_roster(COURSE_ROSTER, "r.csv")["alice"].lms_id == ""
    r = read_roster("student,name,email,lms_id\na,A,a@e,7\nb,B,b@e,\n", "r.csv")
    assert (r["a"].lms_id, r["b"].lms_id) == ("7", "")
    with pytest.raises(ConfigError, match=r"r\.csv:3: lms_id '7' is also 'a'"):
        read_roster("student,name,email,lms_id\na,A,a@e,7\nb,B,b@e,7\n", "r.csv")


def test_course_check_names_graders_who_are_not_staff_and_a_replace_that_leaves_no_tests(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import copy

    from grader.cli import main as cli

    from ..support import EXAMPLES, RUBRIC, with_rubric

    (tmp_path / "pk").mkdir()
    for name in ("hw1", "hw2"):
        shutil.copytree(EXAMPLES / "bigsum", tmp_path / "pk" / name)
    rubric = copy.deepcopy(RUBRIC)
    questions = rubric["questions"]
    assert isinstance(questions, list)
    # ta1 by account, daemon (a Debian system account) by its primary group; ta2 and a
    # section's grader are neither
    questions[0]["graders"] = ["ta1", "ta2", "daemon"]
    questions[1]["sections"] = {"A": ["nosuch-grader"]}
    p = with_rubric(course_yaml(tmp_path, staff={"accounts": ["ta1"], "groups": ["daemon"]}),
                    rubric)
    assert cli.main(["course", "check", "--course-file", str(p)]) == 1
    out = capsys.readouterr().out
    assert "grader 'ta2' cannot open the grading page" in out
    assert "grader 'nosuch-grader' cannot open the grading page: no account of this host" \
        in out
    assert "'ta1'" not in out and "'daemon'" not in out
    assert "tests count for nothing" not in out  # add: the 20 points stay the tests'

    questions[0]["graders"], questions[1]["sections"] = ["ta1"], {}
    rubric["combine"] = "replace"
    p = with_rubric(course_yaml(tmp_path, staff={"accounts": ["ta1"]}), rubric)
    assert cli.main(["course", "check", "--course-file", str(p)]) == 0  # 10 of 20 left
    data = yaml.safe_load(p.read_text())
    data["assignments"][0]["points"] = 10
    p.write_text(yaml.safe_dump(data))
    assert cli.main(["course", "check", "--course-file", str(p)]) == 1
    assert "combine: replace and the rubric's 10 points take all 10 of the assignment's: " \
           "its tests count for nothing" in capsys.readouterr().out
