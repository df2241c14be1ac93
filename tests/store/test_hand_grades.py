"""Grades given by hand, in PostgreSQL: a save names the version it was made from, so of
two graders saving the same question from the same version the second is refused as a
conflict (what it held kept in its audit row, never an overwrite) while the first's
grade and comment stand; every change is an audit row; comments are deleted only as
part of a save; a reveal of names is recorded with who and when; ``gradeline grades``
writes the hand-grades into the sheets and an evaluation CSV."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import threading

from grader.adapters.store.postgres import Store
from grader.core.record import SubmissionRecord
from grader.core.result import SubmissionResult
from grader.core.verdict import Verdict
from grader.course.gradingview import NewComment

from ..support import BIN, course_yaml, with_rubric


def _save(db: str, seen: int, grader: str, items: tuple[str, ...], **kw: object):
    with Store(db) as s:
        return s.save_question("cs101", "hw1", "alice", "style", seen=seen, items=items,
                               adjustment=0.0, reason="", spool_id="s1", grader=grader,
                               rubric=("abc", {"questions": []}), **kw)  # type: ignore[arg-type]


def test_two_graders_saving_one_version_conflict_and_nothing_is_lost(db: str) -> None:
    ok, first = _save(db, 0, "ta1", ("names",),
                      comment=NewComment("sum.py", 3, 4, "what is x?", "names"))
    assert ok and first is not None and first.version == 1
    assert [(c.file, c.first, c.last, c.item) for c in first.comments] == \
        [("sum.py", 3, 4, "names")]
    late, now = _save(db, 0, "ta2", ("dup",))  # ta2 opened it before ta1 saved
    assert not late and now == first  # refused, and ta1's grade is what is stored
    ok2, second = _save(db, 1, "ta2", ("dup",), delete=(first.comments[0].id,))
    assert ok2 and second is not None and second.version == 2 and second.comments == ()
    with Store(db) as s:
        history = s.grade_history("cs101", "hw1", "alice", "style")
        rubrics = s.count("SELECT count(*) FROM rubric_versions")
        kept = s.count("SELECT count(*) FROM hand_comments WHERE deleted_by = 'ta2'")
    assert [(h.grader, h.action, h.version, h.items) for h in history] == [
        ("ta1", "grade", 1, ("names",)), ("ta2", "conflict", 0, ("dup",)),
        ("ta2", "grade", 2, ("dup",))]
    assert history[0].comment == "sum.py:3: what is x?"
    assert rubrics == 1 and kept == 1  # a deleted comment stays, marked


def test_concurrent_saves_from_one_version_let_exactly_one_through(db: str) -> None:
    _save(db, 0, "ta1", ())
    results: list[bool] = []

    def go(who: str) -> None:
        results.append(_save(db, 1, who, (who,))[0])

    threads = [threading.Thread(target=go, args=(f"ta{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 7 + [True]
    with Store(db) as s:
        [g] = s.hand_grades("cs101", "hw1")["hw1"]
        conflicts = s.count("SELECT count(*) FROM grade_audit WHERE action = 'conflict'")
    assert g.version == 2 and g.items == (g.grader,) and conflicts == 7


def test_a_reveal_is_recorded_and_can_be_withdrawn(db: str) -> None:
    with Store(db) as s:
        assert s.names_revealed("cs101", "hw1") is None
        s.reveal_names("cs101", "hw1", "prof")
        when, who = s.names_revealed("cs101", "hw1") or (None, None)
        assert who == "prof" and when is not None
        s.reveal_names("cs101", "hw1", "prof", hide=True)
        assert s.names_revealed("cs101", "hw1") is None
        assert s.count("SELECT count(*) FROM name_reveals") == 2


def test_the_grade_sheets_and_the_evaluations_carry_the_hand_grades(db: str, tmp_path
                                                                    ) -> None:
    course = with_rubric(course_yaml(tmp_path))
    at = "2026-12-01T20:00:00+01:00"
    with Store(db) as s:
        s.ingest([SubmissionRecord(
            spool_id="s-alice", course="cs101", assignment="hw1", student="alice",
            submitted_at=at, batch_id="b1", state="graded", arrived_at=at, claimed_at=at,
            content_hash="h", language="c", result=SubmissionResult(
                "hw1", "v1", "s-alice", "h", "c", Verdict.WA, 50.0, 100.0, None, (), ()))])
        for q, item in (("style", "dup"), ("design", "d-full")):
            s.save_question("cs101", "hw1", "alice", q, seen=0, items=(item,),
                            adjustment=0.0, reason="", spool_id="s-alice", grader="ta1")
    for pk in ("hw1", "hw2"):  # packages whose maximum is 100, as the records say
        (tmp_path / "pk" / pk / "data" / "sample").mkdir(parents=True)
        (tmp_path / "pk" / pk / "data" / "sample" / "1.in").write_text("1\n")
        (tmp_path / "pk" / pk / "data" / "sample" / "1.ans").write_text("1\n")
        (tmp_path / "pk" / pk / "problem.yaml").write_text("name: x\n")
    r = subprocess.run([str(BIN), "grades", "--course-file", str(course), "--out",
                        str(tmp_path / "out")], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "GRADELINE_DB_URL": db}, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    sheet = {row["student"]: row for row in csv.DictReader(io.StringIO(
        (tmp_path / "out" / "hw1.csv").read_text()))}
    assert sheet["alice"]["points"] == "18"  # 0.5 x 20 + (4 - 2) + 6, of 30
    evaluations = list(csv.DictReader(io.StringIO(
        (tmp_path / "out" / "hw1-evaluations.csv").read_text())))
    assert [(e["student"], e["dup"], e["d-full"], e["hand_points"]) for e in evaluations] == \
        [("alice", "TRUE", "TRUE", "8")]
    course_csv = (tmp_path / "out" / "course.csv").read_text()
    assert "points possible,,30," in course_csv  # hw1's 20 and its 10 by hand
