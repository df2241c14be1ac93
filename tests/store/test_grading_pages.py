"""Grading by hand through the staff pages (``adapters.web`` with ``views.grading``),
called as ASGI in this process over the staff socket as chosen kernel-named peers,
against a real PostgreSQL and spool: two TAs grade the same student's question from
the same version, the second save is shown as a conflict with their entries kept and
nothing of the first's lost; a form of another account or site is refused; an item's
points changed in the rubric file recompute both students' totals on the next read;
while anonymous no page, export or log line a TA reaches names a student (her own
file's header masked too), until an instructor reveals (recorded); and a student sees
the items and the comment at its line once released. (The same in a browser, with real
accounts: tests/site.)"""

from __future__ import annotations

import csv
import io
import json
import logging
import os
import shutil
import time
from pathlib import Path

import pytest
import yaml

from grader.adapters import web
from grader.adapters.peercred import Peer
from grader.adapters.spool import Spool
from grader.adapters.store.postgres import Store
from grader.core.record import SubmissionRecord
from grader.core.result import SubmissionResult
from grader.core.verdict import Verdict
from grader.course.load import load_course
from grader.course.staffview import Failure, Snapshot
from grader.formats.load import load_problem
from grader.views.grading import Grading
from grader.views.staff_pages import StaffPages
from grader.views.student_desk import Desk

from ..support import EXAMPLES, RUBRIC, asgi

TA1, TA2 = Peer(1, 5001, 5001, "ta1"), Peer(2, 5002, 5002, "ta2")
PROF = Peer(3, 5003, 5003, "prof")
NAMES = ("alice", "Alice Adams", "bob", "Bob Brown", "alice@example.org")
ALICE_CODE = ("import sys  # bigsum by Alice Adams <alice@example.org>, with bob\n"
              "xs = sys.stdin.read().split()\nprint(sum(map(int, xs[1:])))\n")


def _record(spool_id: str, student: str, score: float) -> SubmissionRecord:
    at = "2026-12-01T20:00:00+01:00"
    result = SubmissionResult("bigsum", "v1", spool_id, f"h-{spool_id}", "python3",
                              Verdict.AC if score == 100 else Verdict.WA, score, 100.0, None,
                              (), ())
    return SubmissionRecord(spool_id=spool_id, course="cs101", assignment="bigsum",
                            student=student, submitted_at=at, batch_id="b1", state="graded",
                            arrived_at=at, claimed_at=at, content_hash=f"h-{spool_id}",
                            language="python3", result=result)


class World:
    """A course of bigsum graded by hand (``RUBRIC``, anonymous), alice and bob handed in
    and graded by the autograder, and the staff pages over it."""

    def __init__(self, tmp: Path, db: str) -> None:
        shutil.copytree(EXAMPLES / "bigsum", tmp / "bigsum")
        (tmp / "roster.csv").write_text("student,name,email\n"
                                        "alice,Alice Adams,alice@example.org\n"
                                        "bob,Bob Brown,bob@example.org\n")
        rubric = json.loads(json.dumps(RUBRIC))
        (tmp / "rubric.yaml").write_text(yaml.safe_dump(rubric))
        self.rubric_file = tmp / "rubric.yaml"
        (tmp / "course.yaml").write_text(yaml.safe_dump({
            "course": "cs101", "timezone": "Europe/Berlin", "roster": "roster.csv",
            "staff": {"accounts": ["ta1", "ta2"], "instructors": ["prof"]},
            "assignments": [{"name": "bigsum", "package": "bigsum", "points": 10,
                             "deadline": "2026-12-01 23:59", "rubric": "rubric.yaml"}]}))
        self.course = load_course(tmp / "course.yaml")
        self.spool = Spool(tmp / "spool", create=True)
        self.ids = {}
        for student, code in (("alice", ALICE_CODE), ("bob", "print(0)\n")):
            (tmp / student).mkdir()
            f = tmp / student / "sum.py"  # a file named after its author would name them
            f.write_text(code)
            self.ids[student] = self.spool.submit(course="cs101", assignment="bigsum",
                                                  student=student, path=f).id
        with Store(db) as s:
            s.ingest([_record(self.ids["alice"], "alice", 50.0),
                      _record(self.ids["bob"], "bob", 100.0)])
        problems = {"bigsum": load_problem(tmp / "bigsum")}
        self.db = db
        opener = lambda: Store(db)  # noqa: E731
        self.staff = StaffPages(self.course, self.spool, opener, problems)
        self.grading = Grading(self.staff, b"k" * 32)
        self.desk = Desk(self.course, self.spool, opener, problems, b"k" * 32)
        snap = Snapshot("cs101", time.time(), 600.0, 0, 0, 0, 0.0, None, None, failures=(
            Failure("alice", "bigsum", "JE", "10:00:00"),))
        self.app = web.app(lambda: snap, staff=self.staff, grading=self.grading,
                           is_staff=lambda p: p.user in ("ta1", "ta2", "prof"))
        self.key = {s: self.grading.key("bigsum", s) for s in ("alice", "bob")}

    def get(self, path: str, peer: Peer = TA1) -> tuple[int, str]:
        status, _, body = asgi(self.app, "GET", path, peer)
        return status, body

    def save(self, peer: Peer, question: str, student: str, version: int,
             **fields: str | list[str]) -> tuple[int, dict[str, str], str]:
        token = self.grading.form_token(self.grading.viewer(peer.user, False))
        form = {"csrf": token, "version": str(version), **fields}
        return asgi(self.app, "POST", f"/a/bigsum/grade/{question}/{self.key[student]}",
                    peer, form)


@pytest.fixture
def world(tmp_path: Path, db: str) -> World:
    return World(tmp_path, db)


def test_a_conflicting_save_is_shown_and_nothing_is_lost(world: World) -> None:
    alice = world.key["alice"]
    for peer in (TA1, TA2):  # both open alice's design question: version 0
        status, page = world.get(f"/a/bigsum/grade/design/{alice}", peer)
        assert status == 200 and 'name="version" value="0"' in page
    status, head, _ = world.save(TA1, "design", "alice", 0, item="d-part",
                                 comment="xs holds text, not numbers", file="sum.py",
                                 first="2", comment_item="", then="stay")
    assert (status, head["location"]) == (303, f"{alice}?saved=1")
    status, _, page = world.save(TA2, "design", "alice", 0, item="d-full",
                                 reason="", adjustment="")
    assert status == 409 and "Not saved: ta1 saved this question" in page
    assert 'value="d-full" accesskey="a" checked' in page  # ta2's choice, kept
    assert 'name="version" value="1"' in page  # saving again now replaces ta1's, knowingly
    stored = json.loads(world.get(f"/api/a/bigsum/grade/design/{alice}", TA2)[1])
    assert stored["grade"]["items"] == ["d-part"] and stored["grade"]["grader"] == "ta1"
    assert [c["text"] for c in stored["grade"]["comments"]] == ["xs holds text, not numbers"]
    assert [(h["grader"], h["action"]) for h in stored["history"]] == \
        [("ta1", "grade"), ("ta2", "conflict")]
    assert stored["history"][1]["items"] == ["d-full"]  # what ta2 tried is kept, too

    status, _, page = world.save(TA2, "design", "alice", 1, item="d-none", adjustment="x")
    assert status == 400 and "Not saved: adjustment: a number of points" in page
    token = world.grading.form_token(world.grading.viewer("ta1", False))
    forged = asgi(world.app, "POST", f"/a/bigsum/grade/design/{alice}", TA2,
                  {"csrf": token, "version": "1", "item": "d-none"})
    elsewhere = asgi(world.app, "POST", f"/a/bigsum/grade/design/{alice}", TA2,
                     {"csrf": world.grading.form_token(world.grading.viewer("ta2", False)),
                      "version": "1"}, origin="https://evil.example")
    assert forged[0] == 403 and elsewhere[0] == 403
    assert json.loads(world.get(f"/api/a/bigsum/grade/design/{alice}")[1])[
        "grade"]["version"] == 1


def _points(world: World) -> dict[str, float]:
    rows = json.loads(world.get("/api/a/bigsum", PROF)[1])
    return {r["student"]: r["points"] for r in rows}


def test_an_items_points_changed_recompute_both_students_totals(world: World) -> None:
    for student in ("alice", "bob"):
        for q, item in (("style", "names"), ("design", "d-part")):
            status, _, _ = world.save(TA1, q, student, 0, item=item)
            assert status == 303
    # alice: 5 of 10 by the autograder + 3 + 3; bob: 10 + 3 + 3 (out of 20)
    assert _points(world) == {"alice": 11.0, "bob": 16.0}
    edited = json.loads(json.dumps(RUBRIC))
    edited["questions"][1]["items"][1]["points"] = 5  # d-part: 3 -> 5
    world.rubric_file.write_text(yaml.safe_dump(edited))
    os.utime(world.rubric_file, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert _points(world) == {"alice": 13.0, "bob": 18.0}
    page = json.loads(world.get(f"/api/a/bigsum/grade/design/{world.key['bob']}")[1])
    assert page["points"] == 5


def test_anonymous_grading_names_nobody_a_ta_reaches_until_revealed(
        world: World, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="grader.views.grading")
    world.save(TA1, "style", "alice", 0, item="dup", comment="copied", file="sum.py",
               first="1", last="3")
    reached = {path: world.get(path, TA2) for path in (
        "/", "/api/snapshot", "/a/bigsum", "/api/a/bigsum", f"/sub/{world.ids['alice']}",
        f"/api/sub/{world.ids['alice']}", "/a/bigsum/grade", "/api/a/bigsum/grade",
        "/a/bigsum/grade/evaluations.csv", f"/a/bigsum/grade/style/{world.key['alice']}",
        f"/api/a/bigsum/grade/style/{world.key['alice']}", "/a/bigsum/preview")}
    for path, (status, body) in reached.items():
        assert status == 200, (path, body[:300])
        named = [n for n in NAMES if n in body]
        assert not named, (path, named)
    assert world.key["alice"] in reached["/api/snapshot"][1]  # the failure, by pseudonym
    assert "bigsum" not in world.get("/s/alice", TA2)[1].split("<main", 1)[1].split(
        "</h1>", 1)[1]  # her history leaves the anonymous assignment out
    table = list(csv.DictReader(io.StringIO(reached["/a/bigsum/grade/evaluations.csv"][1])))
    assert sorted(r["student"] for r in table) == sorted(world.key.values())
    assert [r["dup"] for r in table if r["student"] == world.key["alice"]] == ["TRUE"]
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert world.key["alice"] in logged and "alice " not in logged

    assert "Alice Adams" in world.get("/a/bigsum", PROF)[1]  # an instructor's table
    assert "Alice Adams" not in world.get("/a/bigsum/grade", PROF)[1]  # grading: anonymous
    ta_reveal = asgi(world.app, "POST", "/a/bigsum/grade/reveal", TA2, {
        "csrf": world.grading.form_token(world.grading.viewer("ta2", False))})
    assert ta_reveal[0] == 403 and "only an instructor reveals names" in ta_reveal[2]
    status, head, _ = asgi(world.app, "POST", "/a/bigsum/grade/reveal", PROF, {
        "csrf": world.grading.form_token(world.grading.viewer("prof", False))})
    assert (status, head["location"]) == (303, "../grade")
    assert "alice (Alice Adams)" in world.get("/a/bigsum/grade", TA2)[1]
    page = world.get(f"/a/bigsum/grade/style/{world.key['alice']}", TA2)[1]
    assert "Alice Adams &lt;alice@example.org&gt;, with bob" in page  # her file as handed in
    with Store(world.db) as s:
        assert s.names_revealed("cs101", "bigsum")[1] == "prof"  # type: ignore[index]


def test_a_student_sees_items_and_the_comment_at_its_line_once_released(world: World
                                                                         ) -> None:
    world.save(TA1, "style", "alice", 0, item=["names"], comment="say what xs holds",
               file="sum.py", first="2", comment_item="names", adjustment="0.5",
               reason="clear output")
    assert world.desk.view("alice").assignments[0].hand is None  # not released yet
    with Store(world.db) as s:
        s.release("cs101", "bigsum", "prof")
    hand = world.desk.view("alice").assignments[0].hand
    assert hand is not None and (hand.points, hand.max_points) == (3.5, 10)
    [q] = hand.questions
    assert [(i.title, i.applied) for i in q.items] == [("Unclear names", True),
                                                       ("Exceptionally tidy", False)]
    [c] = q.comments
    assert (c.file, c.first, c.lines, c.item) == ("sum.py", 2,
                                                  ("xs = sys.stdin.read().split()",),
                                                  "Unclear names")
    assert (q.adjustment, q.reason) == (0.5, "clear output")
    assert world.desk.view("bob").assignments[0].hand is None  # nothing graded of his
