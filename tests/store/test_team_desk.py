"""The desk and the staff side of teams and regrade requests over a real PostgreSQL: a
team formed through the desk hands in under the team's limits, every member sees the
team's work and the third student none of it, a request is asked and answered, and the
grades of both members change with an audit row (the socket, the accounts and the
front ends: tests/site/test_teams_regrades.py)."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from grader.adapters.spool import Spool
from grader.adapters.store.postgres import Store
from grader.core.errors import RefusedError
from grader.core.record import SubmissionRecord
from grader.core.upload import Upload
from grader.core.verdict import Verdict
from grader.course.load import load_course
from grader.formats.load import load_problem
from grader.views.regrade_queue import RegradeQueue
from grader.views.staff_pages import StaffPages
from grader.views.student_desk import Desk

from ..support import EXAMPLES, make_result

T0 = datetime(2026, 12, 1, 9, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def world(db: str, tmp_path: Path):
    shutil.copytree(EXAMPLES / "bigsum", tmp_path / "bigsum")
    (tmp_path / "roster.csv").write_text("student,name,email\nalice,A,a@x\nbob,B,b@x\n"
                                         "carol,C,c@x\n")
    (tmp_path / "course.yaml").write_text(yaml.safe_dump({
        "course": "cs", "roster": "roster.csv", "regrades": {"closes": "7d"},
        "assignments": [{"name": "pair", "package": "bigsum", "deadline": "2026-12-02 12:00",
                         "teams": {"min": 2, "max": 2, "formation": "self",
                                   "lock": "2026-12-01 12:00"},
                         "limits": {"max_submissions": 2}}]}))
    course = load_course(tmp_path / "course.yaml")
    problems = {"pair": load_problem(tmp_path / "bigsum")}
    spool = Spool(tmp_path / "spool", create=True)
    clock = Clock()
    desk = Desk(course, spool, lambda: Store(db), problems, b"k" * 32, clock=clock)
    return desk, clock, course, spool, problems, db, tmp_path


def _hand_in(desk: Desk, who: str, tmp: Path) -> str:
    f = tmp / f"{who}.py"
    f.write_text(f"# {who}\nprint(0)\n")
    return desk.hand_in(who, "pair", "sum.py", Upload(f, f.stat().st_size)).submission


def test_a_team_formed_at_the_desk_hands_in_once_and_is_graded_for_both(world) -> None:
    desk, clock, course, spool, problems, db, tmp = world
    with pytest.raises(RefusedError, match=r"pair is team work .* you are in no team"):
        _hand_in(desk, "alice", tmp)
    team = desk.team("alice", "pair", "create", "red")
    assert team is not None and team.members == ("alice",) and len(team.code) == 8
    with pytest.raises(RefusedError, match="your team red has 1 member"):
        _hand_in(desk, "alice", tmp)
    assert desk.team("bob", "pair", "join", team.code).members == ("alice", "bob")
    with pytest.raises(RefusedError, match="team red is full"):
        desk.team("carol", "pair", "join", team.code)
    clock.now = T0 + timedelta(minutes=5)
    first = _hand_in(desk, "alice", tmp)
    clock.now = T0 + timedelta(minutes=10)
    second = _hand_in(desk, "bob", tmp)
    with pytest.raises(RefusedError, match="2 of the 2 submissions allowed"):  # the team's
        _hand_in(desk, "alice", tmp)
    clock.now = T0 + timedelta(hours=4)  # past the lock
    with pytest.raises(RefusedError, match="locked at"):
        desk.team("bob", "pair", "leave")

    # graded (a stand-in for the pipeline: bob's hand-in fails secret/small)
    with Store(db) as s:
        for sid, who, verdicts in ((first, "alice", {}),
                                   (second, "bob", {"secret/small/01": Verdict.WA})):
            at = (T0 + timedelta(minutes=5 if who == "alice" else 10)).isoformat()
            s.ingest([SubmissionRecord(spool_id=sid, course="cs", assignment="pair",
                                       student=who, submitted_at=at, batch_id="b",
                                       state="graded", arrived_at=at, claimed_at=at,
                                       content_hash=sid, language="py",
                                       result=make_result(verdicts))])
    for who in ("alice", "bob"):
        subs = desk.view(who, "pair").assignments[0].submissions
        assert [(x.id, x.counts) for x in subs] == [(first, False), (second, True)]
    assert desk.view("carol", "pair").assignments[0].submissions == ()

    with pytest.raises(RefusedError, match="open when staff release"):
        desk.ask("alice", "pair", "secret/small", "my output is right")
    with Store(db) as s:
        s.release("cs", "pair", "prof")
    asked = desk.ask("alice", "pair", "secret/small", "my output is right")
    assert (asked.submission, asked.status, asked.before) == (second, "open", 0.0)
    queue = RegradeQueue(course, spool, lambda: Store(db), problems, clock=clock)
    detail = queue.detail(asked.id)
    assert detail is not None and [t.name for t in detail.tests][:1] == ["secret/small/01"]
    assert detail.tests[0].expected and detail.tests[0].output is not None
    queue.answer(asked.id, "adjusted", "the checker was wrong", "ta", 30.0)
    pages = StaffPages(course, spool, lambda: Store(db), problems)
    rows = {r.student: r for r in pages.assignment("pair")}
    assert rows["alice"].points == rows["bob"].points == 100.0 and rows["bob"].team == "red"
    assert rows["carol"].status == "missing"
    answered = desk.view("bob", "pair").assignments[0]
    assert answered.requests == ()  # alice asked: her request is hers to see
    mine = desk.view("alice", "pair").assignments[0].requests
    assert [(r.status, r.after, r.answered_by) for r in mine] == [("adjusted", 30.0, "ta")]
    # she answers back: a request after the answer, whose page shows the thread
    back = desk.ask("alice", "pair", "secret/small", "30 of 30 is not the whole group")
    thread = queue.detail(back.id)
    assert thread is not None and [(e.id, e.status, e.answer) for e in thread.earlier] == [
        (asked.id, "adjusted", "the checker was wrong")]
    first = queue.detail(asked.id)
    assert first is not None and first.earlier == ()  # nothing came before the first


def test_a_teams_hand_grade_is_every_members_and_a_question_takes_a_request(world) -> None:
    from ..support import with_rubric
    desk, clock, _, spool, problems, db, tmp = world
    course = load_course(with_rubric(tmp / "course.yaml"))
    desk = Desk(course, spool, lambda: Store(db), problems, b"k" * 32, clock=clock)
    code = desk.team("alice", "pair", "create", "red").code  # type: ignore[union-attr]
    desk.team("bob", "pair", "join", code)
    clock.now = T0 + timedelta(minutes=10)
    sid = _hand_in(desk, "bob", tmp)
    at = clock.now.isoformat()
    with Store(db) as s:
        s.ingest([SubmissionRecord(spool_id=sid, course="cs", assignment="pair", student="bob",
                                   submitted_at=at, batch_id="b", state="graded",
                                   arrived_at=at, claimed_at=at, content_hash=sid,
                                   language="py", result=make_result({}))])
        for q, item in (("style", "names"), ("design", "d-part")):  # 3 of 4, 3 of 6
            s.save_question("cs", "pair", "bob", q, seen=0, items=(item,), adjustment=0.0,
                            reason="", spool_id=sid, grader="ta1")
    assert desk.view("alice", "pair").assignments[0].hand is None  # not released yet
    with Store(db) as s:
        s.release("cs", "pair", "prof")
    hand = desk.view("alice", "pair").assignments[0].hand
    assert hand is not None and hand.points == 6.0  # bob's hand-in, graded once: hers too
    asked = desk.ask("alice", "pair", "question:style", "the names say what they hold")
    assert (asked.target_kind, asked.target, asked.before, asked.most) == \
        ("rubric", "style", 3.0, 4.0)
    with pytest.raises(RefusedError, match="no question of your released hand-grade"):
        desk.ask("alice", "pair", "question:nope", "why")
    pages = StaffPages(course, spool, lambda: Store(db), problems)
    before = {r.student: r.points for r in pages.assignment("pair") or ()}
    queue = RegradeQueue(course, spool, lambda: Store(db), problems, clock=clock)
    queue.answer(asked.id, "adjusted", "fair point", "ta", 4.0)
    after = {r.student: r.points for r in pages.assignment("pair") or ()}
    assert before["alice"] == before["bob"] and before["alice"] is not None
    assert after["alice"] == after["bob"] == pytest.approx(before["alice"] + 1.0)
