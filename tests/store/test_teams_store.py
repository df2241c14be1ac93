"""Teams, regrade requests and grade changes as PostgreSQL keeps them: every table
append-only (an edit is refused by the database itself), a change decided on what the
store holds inside its transaction (two joins at once never overfill a team, one
request is answered once), and what comes back is what the course's rules read."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
import yaml

from grader.adapters.store.postgres import Store
from grader.core.errors import GradelineError, RefusedError, StoreError
from grader.core.record import SubmissionRecord
from grader.core.result import SubmissionResult
from grader.core.verdict import Verdict
from grader.course import regrades as rg
from grader.course import teams as tm
from grader.course.grade_changes import GradeChange, Target
from grader.course.load import load_course

NOW = datetime(2026, 12, 1, 9, tzinfo=UTC)


def course(tmp_path: Path):
    (tmp_path / "course.yaml").write_text(yaml.safe_dump({
        "course": "cs", "assignments": [{"name": "pair", "package": "p",
                                         "deadline": "2026-12-02 23:59",
                                         "teams": {"max": 2, "formation": "self"}}]}))
    return load_course(tmp_path / "course.yaml")


def test_a_team_fills_once_under_two_joins_at_once_and_its_log_is_append_only(
        db: str, tmp_path: Path) -> None:
    c = course(tmp_path)
    with Store(db) as s:
        s.change_teams("cs", lambda t: ((tm.create(c, t, "pair", "alice", "red", "c0de",
                                                   NOW)[0],),
                                        (tm.create(c, t, "pair", "alice", "red", "c0de",
                                                   NOW)[1],)))
    outcomes: list[str] = []

    def join(who: str) -> None:
        with Store(db) as s:
            try:
                s.change_teams("cs", lambda t: ((), (tm.join(c, t, "pair", who, "c0de",
                                                             NOW + timedelta(minutes=1)),)))
                outcomes.append("joined")
            except RefusedError as e:
                outcomes.append(str(e))

    threads = [threading.Thread(target=join, args=(w,)) for w in ("bob", "carol")]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(outcomes) == ["joined", "team red is full (2 members)"]
    with Store(db) as s:
        teams = s.teams("cs")
    assert len(teams.members("pair", "red")) == 2 and teams.by_code("pair", "c0de") is not None
    with psycopg.connect(db) as conn, pytest.raises(psycopg.errors.RaiseException,
                                                    match="team_events is append-only"):
        conn.execute("UPDATE team_events SET student = 'mallory'")


def _graded(db: str) -> None:
    result = SubmissionResult("pair", "v1", "x", "h", "py", Verdict.WA, 60.0, 90.0, None, (),
                              ())
    at = "2026-12-01T10:00:00+00:00"
    with Store(db) as s:
        s.ingest([SubmissionRecord(spool_id="x1", course="cs", assignment="pair",
                                   student="alice", submitted_at=at, batch_id="b",
                                   state="graded", arrived_at=at, claimed_at=at,
                                   content_hash="h", language="py", result=result)])


def test_a_request_is_answered_once_and_every_row_stays(db: str) -> None:
    _graded(db)
    ask = rg.Request(0, "pair", "x1", "bob", Target("group", "secret"), "my output is right",
                     NOW, "bob", 0.0, 30.0, 90.0)
    with Store(db) as s:
        r = s.open_request("cs", "bob", lambda earlier: ask)
        assert r.id > 0 and s.regrade_requests("cs", student="bob") == [r]
        s.answer_request("cs", r.id, lambda q: rg.answer(q, "adjusted", "right after all",
                                                          "ta", NOW, points=30.0))
        with pytest.raises(RefusedError, match=f"request {r.id} was answered"):
            s.answer_request("cs", r.id, lambda q: rg.answer(q, "declined", "no", "ta2", NOW))
        with pytest.raises(StoreError, match="no regrade request 999"):
            s.answer_request("cs", 999, lambda q: rg.answer(q, "declined", "no", "ta2", NOW))
        over = GradeChange("pair", Target("grade", ""), "", "alice", 9.0, 3.0, 10.0,
                           "did not take part", "prof", NOW)
        s.add_grade_change("cs", over)
        done = s.regrade_requests("cs", request=r.id)[0]
        changes = s.grade_changes("cs")
    assert done.status == "adjusted" and done.answer is not None and done.answer.by == "ta"
    assert [(c.target.kind, c.after, c.by, c.request) for c in changes] == \
        [("group", 30.0, "ta", r.id), ("grade", 3.0, "prof", None)]
    for table in ("regrade_requests", "regrade_answers", "grade_changes"):
        with psycopg.connect(db) as conn, pytest.raises(psycopg.errors.RaiseException,
                                                        match="append-only"):
            conn.execute(f"DELETE FROM {table}")


def test_a_refused_change_writes_nothing(db: str, tmp_path: Path) -> None:
    c = course(tmp_path)
    with Store(db) as s, pytest.raises(GradelineError, match="in no team"):
        s.change_teams("cs", lambda t: ((), (tm.leave(c, t, "pair", "bob", NOW),)))
    with Store(db) as s:
        assert s.teams("cs").events == []
