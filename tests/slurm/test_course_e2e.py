"""A course from hand-in to final grades (issue #26): two real student accounts hand in
through a drop directory, two assignments, a deadline, a late submission and one that
an extension makes on time, the visible phase and the after-deadline phase through
the local Slurm, release, and the grade sheets with Canvas's and Moodle's columns.
(That the bulk phase yields to live feedback: ``test_deadline_priority``.)"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from grader.adapters.store.postgres import Store

from ..support import ALICE, BIN, BOB, EXAMPLES

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


def test_a_course_from_hand_in_to_final_grades(db, slurm_conf, student_accounts):
    base = Path(tempfile.mkdtemp(prefix="gradeline-course-", dir="/var/tmp"))
    try:
        _course(base, db, slurm_conf)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _course(base: Path, db: str, conf: str) -> None:
    base.chmod(0o755)
    env = {**os.environ, "GRADELINE_DB_URL": db, "SLURM_CONF": conf}
    env.pop("GRADELINE_FAULT", None)

    def gl(*args: str | Path) -> str:
        r = subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True,
                           env=env, timeout=600, check=False)
        assert r.returncode == 0, f"gradeline {args}\n{r.stdout}\n{r.stderr}"
        return r.stdout

    def drop(student: str, assignment: str, src: Path) -> None:
        mine = base / f"{student}-{src.name}"
        shutil.copy(src, mine)
        mine.chmod(0o644)
        r = subprocess.run(["runuser", "-u", student, "--", "env", "-i", "PATH=/usr/bin:/bin",
                            str(BIN), "drop", str(box), assignment, str(mine)],
                           capture_output=True, text=True, timeout=60, cwd="/")
        assert r.returncode == 0, r.stderr

    for name in ("bigsum", "meanstd"):
        shutil.copytree(EXAMPLES / name, base / name)
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=10)
    (base / "roster.csv").write_text(f"student,name,email,sis_id,section\n"
                                     f"{ALICE},Alice Adams,alice@example.org,S1,A\n"
                                     f"{BOB},Bob Brown,bob@example.org,S2,A\n")
    course = base / "course.yaml"
    course.write_text(yaml.safe_dump({
        "course": "e2e", "timezone": "Europe/Berlin", "roster": "roster.csv",
        "late": {"penalty_per_day": 10},
        "assignments": [
            {"name": "bigsum", "package": "bigsum", "deadline": due.isoformat(),
             "visibility": {"secret/small": "visible"}},
            {"name": "meanstd", "package": "meanstd", "deadline": due.isoformat()}],
        "extensions": [{"student": BOB, "assignment": "bigsum", "extra": "1h"}]}))
    box, spool = base / "box", base / "spool"
    common = ["--course-file", course, "--spool", spool]
    gl("dropbox", "init", box, "--group", "gradeline-staff", *common)
    subs = EXAMPLES / "bigsum" / "submissions"
    drop(ALICE, "bigsum", subs / "wrong_answer" / "int32.cpp")
    drop(ALICE, "meanstd", EXAMPLES / "meanstd" / "submissions" / "accepted" / "stats.cpp")
    time.sleep(max(0.0, (due - datetime.now(UTC)).total_seconds()) + 1.5)
    drop(ALICE, "bigsum", subs / "accepted" / "sum.c")  # late: a day begun, 10 %
    drop(BOB, "bigsum", subs / "accepted" / "sum.py")  # late, but his extension covers it
    assert "collected 4" in subprocess.run(
        [str(BIN), "dropbox", "collect", str(box), *map(str, common)], env=env,
        capture_output=True, text=True, timeout=120).stderr

    gl("run", *common, "--executor", "slurm")  # the visible phase, through Slurm
    with Store(db) as s:
        assert s.count("SELECT count(*) FROM results WHERE version LIKE '%%/groups-%%'") == 4
        assert s.count("SELECT count(*) FROM test_results WHERE group_name LIKE "
                       "'secret/large%%'") == 0

    soon = (due + timedelta(minutes=1)).isoformat()
    out = gl("deadline", *common, "--executor", "slurm", "--now", soon)
    assert "bigsum: 1 student(s) due, 0 already fully graded, 1 graded now with the full " \
           "suite, 1 waiting" in out
    assert "meanstd: 1 student(s) due, 0 already fully graded, 1 graded now" in out
    later = (due + timedelta(hours=2)).isoformat()
    out = gl("deadline", "bigsum", *common, "--executor", "slurm", "--now", later)
    assert "bigsum: 2 student(s) due, 1 already fully graded, 1 graded now" in out

    gl("release", "bigsum", "--course-file", course)
    with Store(db) as s:
        assert s.released("e2e", "bigsum") is not None
        assert s.released("e2e", "meanstd") is None
    grades = base / "grades"
    gl("grades", "--course-file", course, "--out", grades)
    sheet = {r["student"]: r for r in
             csv.DictReader(io.StringIO((grades / "bigsum.csv").read_text()))}
    assert sheet[ALICE]["status"] == "final" and sheet[ALICE]["penalty_pct"] == "10"
    assert sheet[ALICE]["points"] == "90"  # the late sum.c counts (last), 10 % off
    assert sheet[BOB]["late_hours"] == "0" and sheet[BOB]["points"] == "100"
    canvas = list(csv.reader(io.StringIO((grades / "canvas.csv").read_text())))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "bigsum",
                         "meanstd"]
    assert canvas[1][0] == "Points Possible"
    assert canvas[2] == ["Adams, Alice", "", "S1", ALICE, "A", "90", "100"]
    assert canvas[3] == ["Brown, Bob", "", "S2", BOB, "A", "100", "0"]
    moodle = list(csv.reader(io.StringIO((grades / "moodle.csv").read_text())))
    assert moodle[0] == ["First name", "Last name", "ID number", "Email address", "bigsum",
                         "meanstd"]
    assert moodle[2] == ["Bob", "Brown", "S2", "bob@example.org", "100", "0"]
