"""Every hand-in door under one rule (``course.handin``): after a student's one allowed
hand-in through the desk, the desk itself, ``gradeline submit``, a drop directory and an
LMS's download each refuse the next with the same reason, and an account that is not on
the roster is refused at each door; a refused drop or import line is kept in the spool's
quarantine with that reason, never deleted; staff's ``--override`` takes one and keeps
why. The LTI and OnDemand pages hand in through the desk (``Desk.hand_in``): their own
tests check the refusal reaches the page."""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from grader.adapters import dropbox
from grader.adapters.spool import Spool
from grader.adapters.store.postgres import Store
from grader.core.errors import RefusedError
from grader.core.upload import Upload
from grader.course.load import load_course
from grader.course.shown import Receipt
from grader.views.student_desk import Desk

from ..support import ALICE, BOB, EXAMPLES, db_env, gl

DUE = datetime.now(UTC).replace(microsecond=0) + timedelta(days=3)
PAST_LIMIT = "bigsum: you have handed in 1 of the 1 submissions allowed; no more " \
             "hand-ins of it are taken"
OFF_ROSTER = f"{BOB} is not on the roster of course doors"
SOURCE = b"n = int(input())\n"


@pytest.fixture
def course(tmp_path: Path, student_accounts: tuple[str, str]) -> Path:
    shutil.copytree(EXAMPLES / "bigsum", tmp_path / "bigsum")
    (tmp_path / "roster.csv").write_text("student,name,email,lms_id\n"
                                         f"{ALICE},Alice Adams,alice@example.org,111\n")
    p = tmp_path / "course.yaml"
    p.write_text(yaml.safe_dump({
        "course": "doors", "timezone": "UTC", "roster": "roster.csv",
        "limits": {"max_submissions": 1},
        "assignments": [{"name": "bigsum", "package": "bigsum",
                         "deadline": DUE.isoformat()}]}))
    return p


def _desk(course: Path, spool: Spool, db: str) -> Desk:
    return Desk(load_course(course), spool, functools.partial(Store, db), {}, b"k" * 32)


def _hand_in(desk: Desk, student: str, tmp: Path) -> Receipt:
    f = tmp / f"upload-{student}-{len(list(tmp.iterdir()))}"
    f.write_bytes(SOURCE)
    return desk.hand_in(student, "bigsum", "sum.py", Upload(f, len(SOURCE)))


def _quarantined(spool: Spool) -> list[str]:
    return [r["message"] for _, r in spool.quarantined()]


def test_every_door_refuses_past_the_limit_and_off_the_roster_alike(
        tmp_path: Path, course: Path, db: str) -> None:
    spool = Spool(tmp_path / "spool", create=True)
    env = {**db_env(db), "GRADELINE_COURSE_FILE": str(course),
           "GRADELINE_SPOOL": str(spool.root)}
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    desk = _desk(course, spool, db)
    assert _hand_in(desk, ALICE, uploads).signature  # her one allowed hand-in

    # the desk (and the LTI and OnDemand pages, which hand in through it)
    for who, why in ((ALICE, PAST_LIMIT), (BOB, OFF_ROSTER)):
        with pytest.raises(RefusedError) as refused:
            _hand_in(desk, who, uploads)
        assert str(refused.value) == why

    # staff's submit: refused with the reason, then taken with --override, kept why
    src = tmp_path / "sum.py"
    src.write_bytes(SOURCE)
    for who, why in ((ALICE, PAST_LIMIT), (BOB, OFF_ROSTER)):
        r = gl("submit", "bigsum", who, src, env=env, timeout=120)
        assert r.returncode != 0 and why in r.stderr, r.stderr
        assert "--override" in r.stderr and "Traceback" not in r.stderr
    r = gl("submit", "bigsum", ALICE, src, "--override", "her laptop died", env=env,
           timeout=120, ok=True)
    taken = {e.id: e.meta() for e in spool.new_entries()}[r.stdout.strip()]
    assert "her laptop died" in (taken.override or "") and PAST_LIMIT in taken.override

    # a drop directory: both refused, kept in quarantine with the reason, box emptied
    box = tmp_path / "box"
    dropbox.create(box)
    for who in (ALICE, BOB):
        drop = box / f"bigsum--{os.urandom(16).hex()}--sum.py"
        drop.write_bytes(SOURCE)
        os.chown(drop, pwd.getpwnam(who).pw_uid, -1)
        drop.chmod(0o644)
    r = gl("dropbox", "collect", box, env=env, timeout=120, ok=True)
    assert "collected 0, refused 2" in r.stderr and PAST_LIMIT in r.stderr \
        and OFF_ROSTER in r.stderr, r.stderr
    assert not list(box.iterdir())
    kept = _quarantined(spool)
    assert any(PAST_LIMIT in m for m in kept) and any(OFF_ROSTER in m for m in kept)
    held = [p.read_bytes() for p in spool.dir("quarantine").rglob("payload/*")]
    assert held == [SOURCE, SOURCE]  # byte for byte, nothing deleted

    # an LMS's download: her line refused by the same rule, kept in quarantine
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("adamsalice_111_9001_sum.py", SOURCE)
    r = gl("import", archive, "--assignment", "bigsum", "--lms", "canvas", env=env,
           timeout=120)
    assert r.returncode == 1 and f"QUARANTINED refused: {PAST_LIMIT}" in r.stdout, r.stdout
    assert sum(PAST_LIMIT in m for m in _quarantined(spool)) == 2


def test_a_door_refuses_what_no_override_may_take(tmp_path: Path, course: Path,
                                                  db: str) -> None:
    """An unknown assignment or a student id that could name a path is refused even
    with staff's override, and the spool is left as it was."""
    spool = Spool(tmp_path / "spool", create=True)
    env = {**db_env(db), "GRADELINE_COURSE_FILE": str(course),
           "GRADELINE_SPOOL": str(spool.root)}
    src = tmp_path / "sum.py"
    src.write_bytes(SOURCE)
    for args, why in ((("bigsumm", ALICE), "no assignment 'bigsumm' (it has: bigsum)"),
                      (("bigsum", "../../etc"), "student id '../../etc'")):
        r = gl("submit", *args, src, "--override", "staff", env=env, timeout=120)
        assert r.returncode != 0 and why in r.stderr, r.stderr
    assert not spool.new_entries()
