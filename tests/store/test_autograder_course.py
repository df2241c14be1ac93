"""Course assignments graded by a Gradescope autograder or by unit tests, end to end
(spool, local workers, PostgreSQL, the course's two phases, final grades): at hand-in
only the visible tests count; after the deadline every test does."""

from __future__ import annotations

import csv
import io
import shutil

import pytest
import yaml

from grader.adapters.store.postgres import Store

from ..support import EXAMPLES, db_env, gl

pytestmark = pytest.mark.sandbox
SUBS = EXAMPLES / "wordfreq" / "submissions"


def cli(db: str, *args: str) -> str:
    return gl(*args, env=db_env(db), ok=True).stdout


def test_an_autograder_assignment_through_the_course(db, tmp_path):
    shutil.copytree(EXAMPLES / "wordfreq", tmp_path / "wordfreq")
    course = tmp_path / "course.yaml"
    course.write_text(yaml.safe_dump({
        "course": "ag", "timezone": "UTC",
        "assignments": [{"name": "wordfreq", "package": "wordfreq",
                         "deadline": "2026-12-01T23:59:00+00:00"}]}))
    common = ["--course-file", str(course), "--spool", str(tmp_path / "spool")]
    for student, sub in (("alice", "accepted"), ("bob", "wrong_answer")):
        cli(db, "submit", "wordfreq", student, str(SUBS / sub / "wordfreq.py"),
            "--submitted-at", "2026-12-01T20:00:00+00:00", *common)
    cli(db, "run", *common, "--executor", "local", "--cpus", "0")
    with Store(db) as s:  # visible phase: three visible tests of two points each
        assert s.count("SELECT count(*) FROM results WHERE version LIKE '%%/groups-%%' "
                       "AND max_score = 6 AND score IN (6, 4)") == 2
        assert s.count("SELECT count(*) FROM test_results WHERE group_name <> "
                       "'gradescope/visible'") == 0  # the hidden test's result is not kept
    out = cli(db, "deadline", "--now", "2026-12-02T00:30:00+00:00", "--executor", "local",
              "--cpus", "0", *common)
    assert "wordfreq: 2 student(s) due, 0 already fully graded, 2 graded now" in out
    cli(db, "grades", "--course-file", str(course), "--out", str(tmp_path / "g"))
    rows = {r["student"]: r for r in
            csv.DictReader(io.StringIO((tmp_path / "g" / "wordfreq.csv").read_text()))}
    assert (rows["alice"]["points"], rows["bob"]["points"]) == ("10", "6")
    with Store(db) as s:
        assert s.count("SELECT count(*) FROM test_results WHERE group_name = "
                       "'gradescope/hidden'") == 2  # the full suite's, staff's to see


def test_a_unit_test_assignment_through_the_course(db, tmp_path):
    """At hand-in only the visible test files run (the hidden run does not happen); the
    deadline's full suite runs both and the grades count every test's points."""
    shutil.copytree(EXAMPLES / "stats", tmp_path / "stats")
    course = tmp_path / "course.yaml"
    course.write_text(yaml.safe_dump({
        "course": "ut", "timezone": "UTC",
        "assignments": [{"name": "stats", "package": "stats",
                         "deadline": "2026-12-01T23:59:00+00:00"}]}))
    common = ["--course-file", str(course), "--spool", str(tmp_path / "spool")]
    subs = EXAMPLES / "stats" / "submissions"
    for student, sub in (("alice", "accepted"), ("bob", "wrong_answer")):
        cli(db, "submit", "stats", student, str(subs / sub / "stats.py"),
            "--submitted-at", "2026-12-01T20:00:00+00:00", *common)
    cli(db, "run", *common, "--executor", "local", "--cpus", "0")
    with Store(db) as s:  # visible phase: four visible tests of a point each, all passed
        assert s.count("SELECT count(*) FROM results WHERE version LIKE '%%/groups-%%' "
                       "AND max_score = 4 AND score = 4") == 2
        assert s.count("SELECT count(*) FROM test_results WHERE group_name <> "
                       "'gradescope/visible'") == 0
    out = cli(db, "deadline", "--now", "2026-12-02T00:30:00+00:00", "--executor", "local",
              "--cpus", "0", *common)
    assert "stats: 2 student(s) due, 0 already fully graded, 2 graded now" in out
    cli(db, "grades", "--course-file", str(course), "--out", str(tmp_path / "g"))
    rows = {r["student"]: r for r in
            csv.DictReader(io.StringIO((tmp_path / "g" / "stats.csv").read_text()))}
    assert (rows["alice"]["points"], rows["bob"]["points"]) == ("10", "6")
    with Store(db) as s:
        assert s.count("SELECT count(*) FROM test_results WHERE group_name = "
                       "'gradescope/hidden' AND verdict = 'WA'") == 2  # bob's, for staff
