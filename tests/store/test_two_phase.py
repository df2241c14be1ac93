"""Two-phase grading end to end (local workers): at hand-in only the visible groups run;
after each student's own deadline the counting submission gets the full suite; grades
apply the late policy and extensions; staff release."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest
import yaml

from grader.adapters.store.postgres import Store

from ..support import EXAMPLES, db_env, gl

pytestmark = pytest.mark.sandbox
SUBS = EXAMPLES / "bigsum" / "submissions"
DUE = "2026-12-01T23:59:00+01:00"


def cli(db: str, *args: str) -> str:
    return gl(*args, env=db_env(db), ok=True).stdout


@pytest.fixture
def course(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLES / "bigsum", tmp_path / "bigsum")
    (tmp_path / "roster.csv").write_text("student,name,email,extension\n"
                                         "alice,Alice Adams,alice@example.org,\n"
                                         "bob,Bob Brown,bob@example.org,1d\n"
                                         "carol,Carol Carter,carol@example.org,\n"
                                         "ann,Ann Arbor,ann@example.org,\n"
                                         "ben,Ben Bay,ben@example.org,\n")
    p = tmp_path / "course.yaml"
    p.write_text(yaml.safe_dump({
        "course": "c2p", "timezone": "Europe/Berlin", "roster": "roster.csv",
        "late": {"penalty_per_day": 10},
        "assignments": [{"name": "bigsum", "package": "bigsum", "deadline": DUE,
                         "visibility": {"secret/small": "visible"}}]}))
    return p


def test_visible_groups_at_hand_in_the_full_suite_after_each_deadline(db, course, tmp_path):
    spool = str(tmp_path / "spool")
    common = ["--course-file", str(course), "--spool", spool]
    run = ["run", *common, "--executor", "local", "--cpus", "0"]

    def submit(student: str, path: Path, at: str) -> None:
        cli(db, "submit", "bigsum", student, str(path), "--submitted-at", at, *common)

    submit("alice", SUBS / "accepted" / "sum.c", "2026-12-01T21:59:00+01:00")
    submit("alice", SUBS / "wrong_answer" / "int32.cpp", "2026-12-01T22:59:00+01:00")
    cli(db, *run)
    with Store(db) as s:  # the visible phase: sample and secret/small, 30 of 100 points
        assert s.count("SELECT count(*) FROM results WHERE version LIKE '%%/groups-%%' "
                       "AND score = 30 AND max_score = 30") == 2
        assert s.count("SELECT count(*) FROM test_results WHERE group_name = "
                       "'secret/large'") == 0
    out = cli(db, "deadline", "--now", "2026-12-02T00:30:00+01:00", "--executor", "local",
              "--cpus", "0", *common)
    assert "bigsum: 1 student(s) due, 0 already fully graded, 1 graded now" in out

    submit("bob", SUBS / "accepted" / "sum.py", "2026-12-02T09:59:00+01:00")  # extension
    submit("carol", SUBS / "accepted" / "sum.c", "2026-12-03T05:59:00+01:00")  # 30 h late
    cli(db, *run)
    out = cli(db, "deadline", "--now", "2026-12-03T12:00:00+01:00", "--executor", "local",
              "--cpus", "0", *common)
    assert "3 student(s) due, 1 already fully graded, 2 graded now" in out
    out = cli(db, "deadline", "--now", "2026-12-03T12:00:00+01:00", "--executor", "local",
              "--cpus", "0", *common)
    assert "3 already fully graded, 0 graded now" in out  # idempotent

    cli(db, "grades", "--course-file", str(course), "--out", str(tmp_path / "g"))
    rows = {r["student"]: r for r in
            csv.DictReader(io.StringIO((tmp_path / "g" / "bigsum.csv").read_text()))}
    assert (rows["alice"]["status"], rows["alice"]["points"]) == ("final", "30")  # the last
    assert (rows["bob"]["late_hours"], rows["bob"]["points"]) == ("0", "100")
    assert (rows["carol"]["penalty_pct"], rows["carol"]["points"]) == ("20", "80")

    with Store(db) as s:
        assert s.released("c2p", "bigsum") is None
    cli(db, "release", "bigsum", "--course-file", str(course))
    with Store(db) as s:
        assert s.released("c2p", "bigsum") is not None


def test_a_regrade_keeps_the_phases_apart(db, course, tmp_path):
    spool = str(tmp_path / "spool")
    common = ["--course-file", str(course), "--spool", spool]
    for student, sub, at in (("ann", "accepted/sum.c", "2026-12-01T20:00:00+01:00"),
                             ("ann", "wrong_answer/int32.cpp", "2026-12-01T21:00:00+01:00"),
                             ("ben", "accepted/sum.py", "2026-12-01T21:00:00+01:00")):
        cli(db, "submit", "bigsum", student, str(SUBS / sub), "--submitted-at", at, *common)
    cli(db, "run", *common, "--executor", "local", "--cpus", "0")
    cli(db, "deadline", "--now", "2026-12-02T12:00:00+01:00", "--executor", "local",
        "--cpus", "0", *common)
    current = ("SELECT count(*) FROM results WHERE superseded_at IS NULL AND version "
               "LIKE '%%/groups-%%'")
    with Store(db) as s:
        assert s.count(current) == 1  # ann's first: never the counting one
    (tmp_path / "bigsum" / "problem_statement").mkdir(exist_ok=True)
    (tmp_path / "bigsum" / "problem_statement" / "note.txt").write_text("a new version\n")
    out = cli(db, "regrade", "--assignment", "bigsum", *common, "--cpus", "0",
              "--executor", "local")
    assert "regraded 3 submissions" in out  # one visible-phase result, two full ones
    with Store(db) as s:
        assert s.count(current) == 1  # still visible-phase only: no full suite for it
        assert s.count("SELECT count(*) FROM results WHERE superseded_at IS NULL") == 3
