"""Teams: membership from the log of changes, who owns and sees a submission, the
students' own changes (until the lock), the hand-in rule for a team, a staff CSV, and
grades given to every member with lateness charged as declared."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from grader.core.errors import ConfigError, RefusedError
from grader.core.jobs import GradingJob
from grader.core.spoolmeta import SpoolMeta
from grader.course import teams as tm
from grader.course.grade_changes import GradeChange, Target
from grader.course.lms_grades import lms_postings
from grader.course.load import Course, load_course
from grader.course.policy import Attempt, Grade, grade_course
from grader.course.sheets import assignment_sheet, canvas_csv
from grader.course.staffview import Row
from grader.course.teams import Team, TeamEvent, Teams
from grader.pipeline.similarity_jobs import chosen

from ..support import course_at

ROSTER = "student,name,email,extension\nalice,A,a@x,\nbob,B,b@x,1d\ncarol,C,c@x,\n"


def course(tmp_path: Path, teams: dict[str, object] | None = None,
           solo: str = "2026-12-09 23:59", **over: object) -> Course:
    spec = {"min": 2, "max": 2, "formation": "self", "lock": "2026-12-01 12:00",
            **(teams or {})}
    (tmp_path / "roster.csv").write_text(ROSTER)
    (tmp_path / "course.yaml").write_text(yaml.safe_dump({
        "course": "cs", "timezone": "Europe/Berlin", "roster": "roster.csv",
        "late": {"penalty_per_day": 10}, **over,
        "assignments": [{"name": "pair", "package": "p", "deadline": "2026-12-02 23:59",
                         "points": 10, "teams": spec},
                        {"name": "solo", "package": "p", "deadline": solo}]}))
    return load_course(tmp_path / "course.yaml")


def red(*extra: TeamEvent) -> Teams:
    """alice makes team red on the 1st at 09:00, bob joins at 10:00."""
    return Teams([Team("pair", "red", "c0de", course_at(1, 9), "alice")],
                 [TeamEvent("pair", "red", "alice", "join", course_at(1, 9), "alice"),
                  TeamEvent("pair", "red", "bob", "join", course_at(1, 10), "bob"), *extra])


def test_membership_follows_the_log_and_a_submission_belongs_to_its_team_then() -> None:
    t = red(TeamEvent("pair", "red", "bob", "leave", course_at(1, 11), "bob"))
    assert t.team_at("pair", "bob", course_at(1, 9, 30)) is None
    assert t.team_at("pair", "bob", course_at(1, 10, 30)) == "red"
    assert t.team_at("pair", "bob") is None and t.team_at("pair", "alice") == "red"
    assert t.members("pair", "red", course_at(1, 10, 30)) == ("alice", "bob")
    assert t.owner("pair", "bob", course_at(1, 10, 30)) == ("team", "red")
    assert t.owner("pair", "bob", course_at(1, 12)) == ("student", "bob")
    # bob keeps seeing what his team handed in while he was in it, not what came after
    assert t.sees("pair", "bob", "alice", course_at(1, 10, 30))
    assert not t.sees("pair", "bob", "alice", course_at(1, 11, 30))
    assert not t.sees("pair", "carol", "alice", course_at(1, 10, 30))
    assert t.peers("pair", "bob") == {"alice", "bob"} and t.peers("pair", "carol") == {"carol"}


def test_a_later_member_sees_the_teams_earlier_work() -> None:
    t = red()
    assert t.sees("pair", "bob", "alice", course_at(1, 9, 30))  # before bob joined


def test_students_create_join_and_leave_until_the_lock(tmp_path: Path) -> None:
    c, t = course(tmp_path), Teams()
    team, ev = tm.create(c, t, "pair", "alice", "red", "c0de", course_at(1, 9))
    t = Teams([team], [ev])
    with pytest.raises(RefusedError, match="no team of pair has the code 'nope'"):
        tm.join(c, t, "pair", "bob", "nope", course_at(1, 10))
    t = Teams([team], [ev, tm.join(c, t, "pair", "bob", "c0de", course_at(1, 10))])
    for call, says in [
        (lambda: tm.join(c, t, "pair", "carol", "c0de", course_at(1, 10)), "full (2 members)"),
        (lambda: tm.create(c, t, "pair", "bob", "blue", "x", course_at(1, 10)),
         "you are in team red of pair: leave it first"),
        (lambda: tm.create(c, t, "pair", "carol", "red", "x", course_at(1, 10)),
         "has a team red already"),
        (lambda: tm.create(c, t, "pair", "carol", "../x", "x", course_at(1, 10)),
         "team name '../x'"),
        (lambda: tm.leave(c, t, "pair", "bob", course_at(1, 12)), "locked at 2026-12-01T12:00"),
        (lambda: tm.leave(c, t, "pair", "carol", course_at(1, 10)), "in no team of pair"),
        (lambda: tm.create(c, t, "solo", "carol", "x", "x", course_at(1, 10)),
         "solo is not team work"),
    ]:
        with pytest.raises(RefusedError, match=re.escape(says)):
            call()
    assert tm.leave(c, t, "pair", "bob", course_at(1, 11)).action == "leave"
    staff = course(tmp_path, {"formation": "staff"})
    with pytest.raises(RefusedError, match="formed by staff"):
        tm.create(staff, Teams(), "pair", "alice", "red", "x", course_at(1, 9))


def test_a_team_under_its_least_size_hands_nothing_in(tmp_path: Path) -> None:
    c = course(tmp_path)
    alone = Teams([Team("pair", "red", "c", course_at(1, 9), "alice")],
                  [TeamEvent("pair", "red", "alice", "join", course_at(1, 9), "alice")])
    assert "your team red has 1 member; pair takes hand-ins from teams of 2 to 2" in \
        tm.handin_refusal(c, alone, "pair", "alice", course_at(1, 9, 30))
    assert "you are in no team" in tm.handin_refusal(c, alone, "pair", "carol", course_at(1, 9))
    assert tm.handin_refusal(c, red(), "pair", "bob", course_at(1, 11)) == ""
    assert tm.handin_refusal(c, Teams(), "solo", "carol", course_at(1, 9)) == ""


def test_a_staff_csv_names_its_line_and_plans_the_least_changes(tmp_path: Path) -> None:
    c = course(tmp_path, {"formation": "staff", "min": 1})
    for text, says in [("team,student\nred,alice\nred,dave\n", ":3: 'dave' is not on the roster"),
                       ("team,student\nred,alice\nblue,alice\n", ":3: alice is in a team already"),
                       ("team,student\nred,alice\nred,bob\nred,carol\n", "team red has 3"),
                       ("team,who\nred,alice\n", ":1: the header must name team")]:
        with pytest.raises(ConfigError, match=re.escape(says)):
            tm.read_teams(text, "teams.csv", c, "pair")
    canvas = "name,canvas_user_id,user_id,login_id,sections,group_name\nA,1,S1,alice,,red\n"
    assert tm.read_teams(canvas, "g.csv", c, "pair") == {"red": ["alice"]}
    plan = tm.plan_import(red(), "pair", {"red": ["alice"], "blue": ["bob", "carol"]},
                          "ta", course_at(1, 13))
    assert plan.describe() == ["new team blue", "bob leaves red", "bob joins blue",
                               "carol joins blue"]
    assert tm.plan_import(red(), "pair", {"red": ["alice", "bob"]}, "ta",
                          course_at(1, 13)).describe() == []


def grades(c: Course, attempts: list[Attempt], t: Teams, changes: list[GradeChange] = ()
           ) -> dict[tuple[str, str], Grade]:
    return {(g.student, g.assignment): g
            for g in grade_course(c, attempts, {"pair": 100.0}, teams=t, changes=changes)}


def test_a_team_is_graded_once_and_each_member_gets_the_grade(tmp_path: Path) -> None:
    c = course(tmp_path)
    tries = [Attempt("x1", "alice", "pair", course_at(1, 11), 1.0, 1.0),
             Attempt("x2", "bob", "pair", course_at(2, 9), 0.5, 0.5),  # the last: counts
             Attempt("x0", "bob", "pair", course_at(1, 9, 30), 0.2, 0.2)]  # bob alone then
    g = grades(c, tries, red())
    assert g[("alice", "pair")].spool_id == g[("bob", "pair")].spool_id == "x2"
    assert g[("alice", "pair")].points == g[("bob", "pair")].points == 5.0
    assert g[("alice", "pair")].team == "red"
    assert g[("carol", "pair")].status == "missing"


@pytest.mark.parametrize(("charge", "alice_pct", "bob_pct"), [
    ("every_member", 10.0, 0.0),  # bob's own deadline is a day later: on time for him
    ("poorest_member", 10.0, 10.0),  # the team's: alice's, the earlier; the same for both
])
def test_a_late_team_hand_in_is_charged_as_declared(tmp_path: Path, charge: str,
                                                    alice_pct: float, bob_pct: float) -> None:
    c = course(tmp_path, {"charge": charge})
    late = [Attempt("x1", "alice", "pair", course_at(3, 2), 1.0, 1.0)]  # 2 h past alice's
    g = grades(c, late, red())
    assert (g[("alice", "pair")].penalty_pct, g[("bob", "pair")].penalty_pct) == \
        (alice_pct, bob_pct)


def test_the_poorest_member_bounds_the_grace_days_and_all_pay_them(tmp_path: Path) -> None:
    early = "2026-11-30 23:59"  # solo comes first: alice spends a grace day on it
    c = course(tmp_path, {"charge": "poorest_member"}, early, late_days=2)
    tries = [Attempt("s1", "alice", "solo", course_at(1, 12), 1.0, 1.0),  # 12 h: 1 day
             Attempt("x1", "alice", "pair", course_at(4, 12), 1.0, 1.0)]  # team: 2 days late
    g = grades(c, tries, red())
    pair = (g[("alice", "pair")], g[("bob", "pair")])
    # alice has 1 day left, bob 2: the team may use 1, both pay it, the other day costs
    assert [x.grace_days for x in pair] == [1, 1] and [x.penalty_pct for x in pair] == [10, 10]
    every = grades(course(tmp_path, {"charge": "every_member"}, early, late_days=2), tries,
                   red())
    # each their own: alice 1 day left (one penalised), bob 1 day late by his deadline
    assert (every[("alice", "pair")].grace_days, every[("alice", "pair")].penalty_pct) == \
        (1, 10)
    assert (every[("bob", "pair")].grace_days, every[("bob", "pair")].penalty_pct) == (1, 0)


def test_an_adjustment_counts_for_every_member_an_override_for_one(tmp_path: Path) -> None:
    c = course(tmp_path)
    tries = [Attempt("x1", "alice", "pair", course_at(1, 11), 0.5, 0.5)]
    adj = GradeChange("pair", Target("group", "secret"), "x1", "alice", 0.0, 30.0, 100.0,
                      "the checker was wrong", "ta", course_at(5, 9), 1)
    again = GradeChange("pair", Target("group", "secret"), "x1", "alice", 0.0, 20.0, 100.0,
                        "on second look", "ta2", course_at(5, 10), 1)
    over = GradeChange("pair", Target("grade", ""), "", "bob", 8.0, 2.0, 10.0,
                       "did not take part", "prof", course_at(6, 9))
    g = grades(c, tries, red(), [adj, again, over])
    assert g[("alice", "pair")].points == pytest.approx(7.0)  # the latest adjustment
    assert g[("alice", "pair")].changes == ("test group secret: 0 -> 20 (on second look; ta2)",)
    assert g[("bob", "pair")].points == pytest.approx(2.0)
    assert "did not take part" in g[("bob", "pair")].changes[-1]


def test_the_course_file_checks_team_sizes(tmp_path: Path) -> None:
    says = "assignments[0].teams: min (3) is more than max (2)"
    with pytest.raises(ConfigError, match=re.escape(says)):
        course(tmp_path, {"min": 3})
    assert course(tmp_path).assignments["pair"].teams.lock == course_at(1, 12)
    assert course(tmp_path).assignments["pair"].teams.lock.utcoffset() == timedelta(hours=1)


def test_every_member_has_a_row_in_the_sheets_and_a_score_in_the_lms(tmp_path: Path) -> None:
    c = course(tmp_path)
    tries = [Attempt("x1", "bob", "pair", course_at(1, 11), 0.5, 0.5)]
    adj = GradeChange("pair", Target("group", "secret"), "x1", "bob", 0.0, 50.0, 100.0,
                      "right after all", "ta", course_at(5, 9), 1)
    gs = grade_course(c, tries, {"pair": 100.0}, teams=red(), changes=[adj])
    sheet = {r["student"]: r for r in csv.DictReader(io.StringIO(
        assignment_sheet(c, "pair", gs)))}
    assert sheet["alice"]["points"] == sheet["bob"]["points"] == "10"
    assert sheet["alice"]["team"] == "red" and "right after all" in sheet["alice"]["changes"]
    assert sheet["carol"]["status"] == "missing" and sheet["carol"]["team"] == ""
    canvas = list(csv.reader(io.StringIO(canvas_csv(c, gs, {"pair": 10.0, "solo": 100.0}))))
    assert [r[5] for r in canvas[2:]] == ["10", "10", "0"]  # alice, bob, carol
    posts = lms_postings(c, "ctx", tries, {"pair": course_at(5, 8)}, {"pair": 100.0},
                         {"alice": "u-a", "bob": "u-b", "carol": "u-c"}, teams=red(),
                         changes=[adj])
    assert sorted((p.lms_user, p.given) for p in posts) == [("u-a", 10.0), ("u-b", 10.0)]


def test_a_team_hand_in_carries_its_members_to_the_autograder(tmp_path: Path) -> None:
    meta = SpoolMeta("cs", "pair", "bob", "2026-12-01T10:00:00+00:00", team=("alice", "bob"))
    (tmp_path / "meta.json").write_text(json.dumps(meta.to_json()))
    assert SpoolMeta.read(tmp_path / "meta.json").team == ("alice", "bob")
    job = GradingJob(tmp_path, tmp_path / "sub", student="bob", team=("alice", "bob"))
    assert GradingJob.from_json(json.loads(json.dumps(job.to_json()))) == job
    alone = SpoolMeta("cs", "solo", "carol", "2026-12-01T10:00:00+00:00")
    assert "team" not in alone.to_json() and GradingJob.from_json(
        GradingJob(tmp_path, tmp_path).to_json()).team == ()


def test_similarity_compares_a_team_once_never_its_members_with_each_other(
        tmp_path: Path) -> None:
    c = course(tmp_path)

    class Store:
        def rows(self, course: str, *, assignment: str | None = None,
                 student: str | None = None) -> list[Row]:
            return [Row("x1", "alice", "pair", course_at(1, 11), "graded"),
                    Row("x2", "bob", "pair", course_at(1, 12), "graded"),
                    Row("x3", "carol", "pair", course_at(1, 12), "graded")]

        def attempts(self, course: str) -> list[Attempt]:
            return [Attempt(r.spool_id, r.student, "pair", r.submitted_at, 1.0, 1.0)
                    for r in self.rows(course)]

        def teams(self, course: str) -> Teams:
            return red()

    assert chosen(c, "pair", Store()) == {"team-red": "x2", "carol": "x3"}


def test_a_teams_hand_grade_counts_for_every_member_and_reaches_the_lms(
        tmp_path: Path) -> None:
    from grader.course.handgrades import QuestionGrade, with_hand_grades

    from ..support import with_rubric
    course(tmp_path)
    c = load_course(with_rubric(tmp_path / "course.yaml"))
    tries = [Attempt("x2", "bob", "pair", course_at(2, 9), 0.5, 0.5)]
    hand = {"pair": [QuestionGrade("bob", q, "x2", items, 0.0, "", "ta1", 1,
                                   "2026-12-03T10:00:00+01:00")
                     for q, items in (("style", ("names",)), ("design", ("d-part",)))]}
    joined = {(g.student, g.assignment): g for g in with_hand_grades(
        c, grade_course(c, tries, {"pair": 10.0}, teams=red()), hand, {"pair": 10.0})}
    alice, bob = joined[("alice", "pair")], joined[("bob", "pair")]
    assert alice.status == bob.status == "final"  # bob handed it in; alice is in the team
    assert alice.points == bob.points == pytest.approx(0.5 * 10 + 3 + 3)
    posts = {p.lms_user: p for p in lms_postings(
        c, "lms", tries, {"pair": course_at(5, 9)}, {"pair": 10.0},
        {"alice": "u-a", "bob": "u-b"}, teams=red(), hand=hand)}
    assert posts["u-a"].given == posts["u-b"].given == pytest.approx(11.0)
    assert posts["u-a"].comment == posts["u-b"].comment != ""
