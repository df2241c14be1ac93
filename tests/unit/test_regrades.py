"""Regrade requests and what a team's member sees: the window, the refusals with their
reason, an answer's audit values, the staff queue's filters, and a student's view of a
team's submissions (never another team's)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from grader.core.errors import RefusedError
from grader.core.result import GroupResult, SubmissionResult, TestResult
from grader.core.verdict import Verdict
from grader.course import regrades as rg
from grader.course.grade_changes import Target
from grader.course.load import Course, load_course
from grader.course.shown import StudentView
from grader.course.studentview import Submitted, student_view
from grader.course.teams import Team, TeamEvent, Teams

from ..support import course_at

AC, WA = Verdict.AC, Verdict.WA


def course(tmp_path: Path, **regrades: object) -> Course:
    (tmp_path / "roster.csv").write_text("student,name,email\nalice,A,a@x\nbob,B,b@x\n"
                                         "carol,C,c@x\n")
    (tmp_path / "course.yaml").write_text(yaml.safe_dump({
        "course": "cs", "timezone": "Europe/Berlin", "roster": "roster.csv",
        "regrades": {"closes": "2d", "per_assignment": 2, **regrades},
        "assignments": [{"name": "pair", "package": "p", "deadline": "2026-12-02 23:59",
                         "visibility": {"sample": "visible", "secret": "after_release",
                                        "hidden": "hidden"},
                         "teams": {"max": 2, "formation": "self"}}]}))
    return load_course(tmp_path / "course.yaml")


def result(version: str = "v1") -> SubmissionResult:
    groups = ("sample", "secret", "hidden")
    tests = tuple(TestResult(f"{g}/1", g, WA if g == "secret" else AC, 0.1, 0.1,
                             output=f"{g}-OUT") for g in groups)
    gr = tuple(GroupResult(g, WA if g == "secret" else AC, 30.0,
                           0.0 if g == "secret" else 30.0, "sum", int(g != "secret"), 1)
               for g in groups)
    return SubmissionResult("pair", version, "x", "h", "py", WA, 60.0, 90.0, None, tests, gr)


TEAMS = Teams([Team("pair", "red", "c0de", course_at(1, 9), "alice")],
              [TeamEvent("pair", "red", "alice", "join", course_at(1, 9), "alice"),
               TeamEvent("pair", "red", "bob", "join", course_at(1, 10), "bob")])
SUBS = [Submitted("x1", "pair", course_at(1, 11), "graded", full=result(), student="alice"),
        Submitted("x2", "pair", course_at(1, 12), "graded", full=result(), student="carol")]


def view(c: Course, student: str, now: int = 4, released: bool = True,
         requests: list[rg.Request] = ()) -> StudentView:
    v = student_view(c, student, [s for s in SUBS], released={
        "pair": course_at(3, 9) if released else None}, now=course_at(now, 12),
        case_data=lambda a, t: ("IN", "ANS"), teams=TEAMS, requests=requests)
    assert StudentView.from_json(json.loads(json.dumps(v.to_json()))) == v
    return v


def test_a_member_sees_the_teams_submission_and_nobody_else_does(tmp_path: Path) -> None:
    c = course(tmp_path)
    bobs = view(c, "bob").assignments[0]
    assert [(s.id, s.by, s.team, s.counts) for s in bobs.submissions] == \
        [("x1", "alice", "red", True)]
    assert bobs.team is not None and bobs.team.members == ("alice", "bob")
    assert bobs.team.code == "c0de" and bobs.team.changes is False  # the deadline passed
    carols = view(c, "carol").assignments[0]
    assert [s.id for s in carols.submissions] == ["x2"] and carols.team is not None
    assert carols.team.name == "" and carols.team.members == ()  # team work, in no team
    assert "x1" not in json.dumps(view(c, "carol").to_json())


def ask(c: Course, student: str, group: str, reason: str = "my output is right",
        now: int = 4, earlier: list[rg.Request] = (), released: bool = True
        ) -> tuple[float, float]:
    a = view(c, student, now, released, list(earlier)).assignments[0]
    sub = next((s for s in a.submissions if s.id == "x1"), None)
    return rg.check_request(c, "pair", sub, Target("group", group), reason, a.regrades,
                            list(earlier))


def request(i: int = 1, **over: object) -> rg.Request:
    base = {"id": i, "assignment": "pair", "spool_id": "x1", "student": "bob",
            "target": Target("group", "secret"), "reason": "right", "opened_at":
            course_at(3, 10), "opened_by": "bob", "before": 0.0, "most": 30.0,
            "out_of": 90.0}
    return rg.Request(**{**base, **over})  # type: ignore[arg-type]


@pytest.mark.parametrize(("when", "says"), [
    ({"now": 3, "released": False}, "requests about pair open when staff release"),
    ({"now": 6}, "requests about pair closed at 2026-12-05T09:00"),
    ({"group": "hidden"}, "'hidden' is no test group shown on x1 (shown: sample, secret)"),
    ({"reason": "  "}, "a regrade request says why"),
    ({"earlier": [request()]}, "you asked about test group secret of x1 already (request 1"),
    ({"earlier": [request(1, answer=rg.Answer("declined", "no", "ta", course_at(3, 11), 0, 0)),
                  request(2, target=Target("group", "sample"))]},
     "you have made the 2 requests pair allows"),
])
def test_a_request_outside_its_window_or_rules_is_refused_with_the_reason(
        tmp_path: Path, when: dict[str, object], says: str) -> None:
    c = course(tmp_path)
    args = {"group": "secret", **when}
    with pytest.raises(RefusedError, match=re.escape(says)):
        ask(c, "bob", **args)  # type: ignore[arg-type]


def test_a_request_on_a_teams_result_is_taken_with_the_groups_points(tmp_path: Path) -> None:
    assert ask(course(tmp_path), "bob", "secret") == (0.0, 30.0)
    with pytest.raises(RefusedError, match="no graded submission"):  # carol cannot see x1
        ask(course(tmp_path), "carol", "secret")
    deadline = course(tmp_path, opens="deadline")  # opens at bob's deadline, no release
    assert ask(deadline, "bob", "sample", now=3, released=False) == (30.0, 30.0)


def test_an_answer_records_before_and_after_and_an_adjustment_changes_the_grade() -> None:
    ans, change = rg.answer(request(), "adjusted", "the checker was wrong", "ta",
                            course_at(4, 9), points=30.0)
    assert (ans.before, ans.after, ans.by) == (0.0, 30.0, "ta")
    assert change is not None and (change.spool_id, change.after, change.out_of,
                                   change.request) == ("x1", 30.0, 90.0, 1)
    declined, none = rg.answer(request(), "declined", "the spec says so", "ta2",
                               course_at(4, 9))
    assert none is None and (declined.before, declined.after) == (0.0, 0.0)
    regraded, _ = rg.answer(request(), "regraded", "fixed the package", "ta",
                            course_at(4, 9), current=20.0)
    assert regraded.after == 20.0
    for args, says in [(("adjusted", "ok"), "give the points of test group secret, from 0"),
                       (("adjusted", "ok", 31.0), "from 0 to 30"),
                       (("declined", ""), "an answer says why"),
                       (("lost", "x"), "answer with one of regraded, adjusted, declined")]:
        with pytest.raises(RefusedError, match=re.escape(says)):
            rg.answer(request(), args[0], args[1], "ta", course_at(4, 9),
                      *(args[2:]))  # type: ignore[arg-type]
    with pytest.raises(RefusedError, match="request 1 was answered"):
        rg.answer(rg.with_answer(request(), ans), "declined", "x", "ta", course_at(4, 9))


def test_the_student_sees_the_answer_and_the_queue_filters(tmp_path: Path) -> None:
    ans, _ = rg.answer(request(), "adjusted", "right after all", "ta", course_at(4, 9),
                       points=30.0)
    done, waiting = rg.with_answer(request(), ans), request(2, target=Target("group", "sample"),
                                                            opened_at=course_at(4, 8))
    shown = view(course(tmp_path), "bob", requests=[done, waiting]).assignments[0].requests
    assert [(r.id, r.status, r.answer, r.after) for r in shown] == \
        [(1, "adjusted", "right after all", 30.0), (2, "open", "", None)]
    q = rg.queue_rows([done, waiting], course_at(4, 12))
    assert [r.request.id for r in q.rows] == [2] and q.counts == {"adjusted": 1, "open": 1}
    assert [r.request.id for r in rg.queue_rows([done, waiting], course_at(4, 12),
                                                status="").rows] == [1, 2]
    assert [r.request.id for r in rg.queue_rows([done, waiting], course_at(4, 12), status="",
                                                target="secret").rows] == [1]
    assert rg.queue_rows([done, waiting], course_at(4, 12), older_h=5).rows == ()


def test_a_request_may_name_a_question_of_the_released_hand_grade(tmp_path: Path) -> None:
    from grader.course.shown import HandGradeView, ShownQuestion
    c = course(tmp_path)
    a = view(c, "alice").assignments[0]
    sub = next(s for s in a.submissions if s.counts)
    hand = HandGradeView(7.0, 10.0, True, (ShownQuestion("style", "Style", 3.0, 4.0, ()),))
    assert rg.target_of("style", sub, hand) == Target("rubric", "style")
    assert rg.target_of("secret", sub, hand) == Target("group", "secret")
    assert rg.target_of("question:secret", sub, hand) == Target("rubric", "secret")
    assert rg.check_request(c, "pair", sub, Target("rubric", "style"), "the names are fine",
                            a.regrades, [], hand=hand) == (3.0, 4.0)
    with pytest.raises(RefusedError, match=r"no question of your released hand-grade.*"
                                           r"none released yet"):
        rg.check_request(c, "pair", sub, Target("rubric", "style"), "why", a.regrades, [])
    with pytest.raises(RefusedError, match="graded: style"):
        rg.check_request(c, "pair", sub, Target("rubric", "design"), "why", a.regrades, [],
                         hand=hand)


def test_a_requests_thread_is_the_students_earlier_requests_about_the_same_target() -> None:
    now = request(5, opened_at=course_at(4, 12), spool_id="x2")  # a later submission
    others = [request(1), request(2, student="carol", opened_by="carol"),
              request(3, target=Target("group", "small")),
              request(4, assignment="solo"), request(6, opened_at=course_at(4, 13)), now]
    assert [e.id for e in rg.thread(now, others)] == [1]  # bob's, secret, of pair, before
    assert rg.thread(request(1), others) == ()
