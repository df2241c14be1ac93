"""Final grades from what PostgreSQL holds: the course's policy applied by ``gradeline
grades``, and a changed extension recomputed without grading anything again."""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
from pathlib import Path

import yaml

from grader.adapters.store.postgres import Store
from grader.core.record import SubmissionRecord
from grader.core.result import SubmissionResult
from grader.core.verdict import Verdict

from ..support import BIN, EXAMPLES


def record(spool_id: str, student: str, assignment: str, at: str, score: float
           ) -> SubmissionRecord:
    result = SubmissionResult(assignment, "v1", f"spool:{spool_id}", f"h-{spool_id}", "c",
                              Verdict.AC if score == 100 else Verdict.WA, score, 100.0, None,
                              (), ())
    return SubmissionRecord(spool_id=spool_id, course="cs101", assignment=assignment,
                            student=student, submitted_at=at, batch_id="b1", state="graded",
                            arrived_at=at, claimed_at=at, content_hash=f"h-{spool_id}",
                            language="c", result=result)


def write_course(d: Path, extensions: list[dict[str, str]]) -> Path:
    shutil.copytree(EXAMPLES / "bigsum", d / "bigsum")
    (d / "roster.csv").write_text("student,name,email,sis_id\n"
                                  "alice,Alice Adams,alice@example.org,S1\n"
                                  "bob,Bob Brown,bob@example.org,S2\n")
    p = d / "course.yaml"
    p.write_text(yaml.safe_dump({
        "course": "cs101", "timezone": "Europe/Berlin", "roster": "roster.csv",
        "late": {"penalty_per_day": 20},
        "assignments": [{"name": "bigsum", "package": "bigsum",
                         "deadline": "2026-12-01 23:59"}],
        "extensions": extensions}))
    return p


def grades(db: str, course: Path, out: Path) -> list[dict[str, str]]:
    r = subprocess.run([str(BIN), "grades", "--course-file", str(course), "--out", str(out)],
                       capture_output=True, text=True, timeout=120, check=False,
                       env={**os.environ, "GRADELINE_DB_URL": db})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "bigsum: final 2, pending 0, missing 0, too late 0" in r.stdout
    return list(csv.DictReader(io.StringIO((out / "bigsum.csv").read_text())))


def test_grades_apply_the_late_policy_and_an_extension_recomputes_them(db, tmp_path):
    with Store(db) as s:
        s.ingest([record("a1", "alice", "bigsum", "2026-12-01T20:00:00+01:00", 100.0),
                  record("b1", "bob", "bigsum", "2026-12-01T22:00:00+01:00", 50.0),
                  record("b2", "bob", "bigsum", "2026-12-02T10:00:00+01:00", 100.0)])
        stored = s.count("SELECT count(*) FROM results")
    course = write_course(tmp_path, [])
    rows = {r["student"]: r for r in grades(db, course, tmp_path / "g1")}
    assert rows["alice"]["final_pct"] == "100" and rows["alice"]["points"] == "100"
    assert rows["bob"]["submission"] == "b2"  # the last one counts, late
    assert rows["bob"]["penalty_pct"] == "20" and rows["bob"]["points"] == "80"
    canvas = list(csv.reader(io.StringIO((tmp_path / "g1" / "canvas.csv").read_text())))
    assert canvas[0][:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert canvas[3][2:4] == ["S2", "bob"] and canvas[3][-1] == "80"

    course = write_course(tmp_path / "later", [{"student": "bob", "extra": "1d"}])
    rows = {r["student"]: r for r in grades(db, course, tmp_path / "g2")}
    assert rows["bob"]["penalty_pct"] == "0" and rows["bob"]["points"] == "100"
    with Store(db) as s:  # nothing was graded or stored again
        assert s.count("SELECT count(*) FROM results") == stored


def test_a_students_choice_counts_where_the_course_says_so(db, tmp_path):
    with Store(db) as s:
        s.ingest([record("c1", "alice", "bigsum", "2026-12-01T20:00:00+01:00", 100.0),
                  record("c2", "alice", "bigsum", "2026-12-01T21:00:00+01:00", 50.0),
                  record("d1", "bob", "bigsum", "2026-12-01T21:00:00+01:00", 80.0)])
    course = write_course(tmp_path, [])
    data = yaml.safe_load(course.read_text())
    data["assignments"][0]["counts"] = "chosen"
    course.write_text(yaml.safe_dump(data))
    r = subprocess.run([str(BIN), "choose", "bigsum", "bob", "c1", "--course-file",
                        str(course)], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "GRADELINE_DB_URL": db})
    assert r.returncode == 2 and "c1 is no submission of bob to bigsum" in r.stderr
    r = subprocess.run([str(BIN), "choose", "bigsum", "alice", "c1", "--course-file",
                        str(course)], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "GRADELINE_DB_URL": db})
    assert r.returncode == 0, r.stderr
    rows = {r["student"]: r for r in grades(db, course, tmp_path / "g")}
    assert rows["alice"]["submission"] == "c1" and rows["alice"]["points"] == "100"
    assert rows["bob"]["submission"] == "d1"  # no choice: the last one
