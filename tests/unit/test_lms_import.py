"""``gradeline import``: an LMS's download spooled into a temporary spool (no database,
no Slurm), each hand-in under its student with its time, everything else kept in
quarantine with its reason; every byte of the zip ends in some entry."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import zipfile
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import yaml

from grader.adapters.spool import Entry, Spool
from grader.core.errors import ConfigError
from grader.course.lms_mapping import read_worksheet
from grader.course.load import Course, load_course
from grader.pipeline.intake import Reason, unpack
from grader.pipeline.lms_import import plan_import, read_members, spool_import
from grader.views.status import course_status

from ..support import WORKSHEET

ROOT = Path(__file__).resolve().parents[2]
BERLIN = ZoneInfo("Europe/Berlin")
DEADLINE = datetime(2026, 12, 1, 23, 59, tzinfo=BERLIN)
ROSTER = """student,name,email,lms_id
alice,Alice Adams,alice@example.org,111
bob,Bob Brown,bob@example.org,
carol,Carol Carter,carol@example.org,
"""
CANVAS = {
    "adamsalice_111_9001_sum.c": b"int main(void) { return 0; } /* alice */\n",
    "brownbob_LATE_222_9002_main.c": b"/* bob main */\n",
    "brownbob_LATE_222_9003_util.h": b"/* bob util */\n",
    "anon_Xy3Zq_9004_sum.c": b"/* anonymous */\n",
    "cartercarol_333_text.html": b"<p>carol's text</p>\n",
    "zedzoe_555_9005_sum.c": b"/* zoe, on no roster */\n",
    "notes.txt": b"not a hand-in\n",
}
MOODLE = {
    "Alice Adams_7_assignsubmission_file/sum.c": b"/* alice sum */\n",
    "Alice Adams_7_assignsubmission_file/src/util.c": b"/* alice util */\n",
    "Carol Carter_9_assignsubmission_file_sum.c": b"/* carol, flat */\n",
    "Participant_10_assignsubmission_file/sum.c": b"/* blind */\n",
}


def make_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def make_course(tmp: Path) -> Path:
    (tmp / "roster.csv").write_text(ROSTER)
    data = {"course": "cs101", "timezone": "Europe/Berlin", "roster": "roster.csv",
            "assignments": [{"name": "hw1", "package": "pk/hw1",
                             "deadline": "2026-12-01 23:59"}]}
    (tmp / "course.yaml").write_text(yaml.safe_dump(data))
    return tmp / "course.yaml"


def names(archive: Path) -> list[str]:
    with zipfile.ZipFile(archive) as zf:
        return list(read_members(zf, str(archive)))


def every_payload(spool: Spool) -> dict[bytes, Entry]:
    """Each payload file's bytes -> the entry holding it, across new/ and quarantine/."""
    out = {}
    for state in ("new", "quarantine"):
        for d in sorted(spool.dir(state).iterdir()):
            for p in (d / "payload").rglob("*"):
                if p.is_file():
                    out[p.read_bytes()] = Entry(d.name, d)
    return out


@pytest.fixture
def course(tmp_path: Path) -> Course:
    return load_course(make_course(tmp_path))


def test_canvas_hand_ins_are_spooled_and_nothing_is_dropped(tmp_path: Path,
                                                            course: Course) -> None:
    archive = make_zip(tmp_path / "submissions.zip", CANVAS)
    late_at = DEADLINE + timedelta(hours=10)
    plan = plan_import(names(archive), course, "hw1", late_at=late_at)
    spool = Spool(tmp_path / "spool", create=True)
    report = spool_import(archive, plan, spool, course="cs101", assignment="hw1")
    assert (report.spooled, report.quarantined) == (3, 3)
    held = every_payload(spool)
    assert set(CANVAS.values()) <= set(held)  # every member, byte for byte
    meta = {e.meta().student: e.meta() for e in spool.new_entries()}
    assert set(meta) == {"alice", "bob", "carol"}
    assert datetime.fromisoformat(meta["alice"].submitted_at) == DEADLINE
    assert datetime.fromisoformat(meta["bob"].submitted_at) == late_at
    assert meta["alice"].original_name == "sum.c"  # the file, without Canvas's prefix
    bob = held[CANVAS["brownbob_LATE_222_9002_main.c"]]
    assert sorted(p.name for p in (bob.payload / "brownbob_222").iterdir()) == \
        ["main.c", "util.h"]
    st = course_status(spool, None)
    assert st.counts["hw1"]["quarantined"] == 3 and st.counts["hw1"]["new"] == 3
    reasons = {e.meta().student: r for e, r in spool.quarantined()}
    assert reasons["?zedzoe_555"]["code"] == Reason.UNMAPPED_STUDENT
    assert "no roster lms_id is 555" in reasons["?zedzoe_555"]["message"]
    assert reasons["?anon_Xy3Zq"]["code"] == Reason.UNMAPPED_STUDENT
    assert reasons["?notes.txt"]["code"] == Reason.UNRECOGNISED_ENTRY


def test_a_late_hand_in_without_a_time_refuses_the_whole_import(tmp_path: Path,
                                                                course: Course) -> None:
    archive = make_zip(tmp_path / "submissions.zip", CANVAS)
    plan = plan_import(names(archive), course, "hw1")
    spool = Spool(tmp_path / "spool", create=True)
    with pytest.raises(ConfigError, match=r"1 hand-in\(s\) have no hand-in time: "
                                          r"brownbob_222 \(bob\); give --late-at"):
        spool_import(archive, plan, spool, course="cs101", assignment="hw1")
    assert not every_payload(spool)


def test_moodle_hand_ins_take_the_worksheets_times_and_unpack_for_intake(
        tmp_path: Path, course: Course) -> None:
    archive = make_zip(tmp_path / "cs101-hw1-42.zip", MOODLE)
    ws = read_worksheet(WORKSHEET, BERLIN, "ws.csv")
    plan = plan_import(names(archive), course, "hw1", worksheet=ws)
    spool = Spool(tmp_path / "spool", create=True)
    report = spool_import(archive, plan, spool, course="cs101", assignment="hw1")
    assert (report.spooled, report.quarantined) == (2, 1)
    entries = {e.meta().student: e for e in spool.new_entries()}
    alice = entries["alice"]
    assert datetime.fromisoformat(alice.meta().submitted_at) == \
        datetime(2026, 12, 1, 23, 58, tzinfo=BERLIN)
    unpack(alice, tmp_path / "src")  # what intake grades: the student's own tree
    assert sorted(str(p.relative_to(tmp_path / "src"))
                  for p in (tmp_path / "src").rglob("*") if p.is_file()) == \
        ["src/util.c", "sum.c"]
    [(blind, reason)] = list(spool.quarantined())
    assert blind.meta().student == "?Participant_10"
    assert "anonymous Participant_10" in reason["message"]
    assert set(MOODLE.values()) <= set(every_payload(spool))


@pytest.mark.parametrize("member", ["../evil.c", "/etc/evil.c", "link"])
def test_an_archive_no_lms_writes_is_refused_whole(tmp_path: Path, member: str) -> None:
    archive = tmp_path / "bad.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("adamsalice_111_9001_sum.c", b"x")
        info = zipfile.ZipInfo(member)
        if member == "link":
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, b"/etc/passwd")
    with pytest.raises(ConfigError, match="nothing imported"):
        names(archive)


def _gradeline(*args: object, tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRADELINE_")}
    env.update(GRADELINE_STATE_DIR=str(tmp / "state"),
               PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "grader", *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=120, check=False,
                          cwd=tmp)


def test_the_command_lists_then_spools_and_exits_1_for_a_quarantine(tmp_path: Path) -> None:
    course_file = make_course(tmp_path)
    archive = make_zip(tmp_path / "submissions.zip", CANVAS)
    spool = tmp_path / "spool"
    base = ("import", archive, "--assignment", "hw1", "--course-file", course_file,
            "--spool", spool)
    untimed = _gradeline(*base, tmp=tmp_path)
    assert untimed.returncode == 2, untimed.stderr
    assert "give --late-at TIME" in untimed.stderr and "Nothing was spooled" in untimed.stderr
    dry = _gradeline(*base, "--late-at", "2026-12-02 09:00", "--dry-run", tmp=tmp_path)
    assert dry.returncode == 1, dry.stderr
    assert "QUARANTINED unmapped-student" in dry.stdout and "dry run" in dry.stdout
    assert not any((spool / "new").iterdir())
    real = _gradeline(*base, "--late-at", "2026-12-02 09:00", tmp=tmp_path)
    assert real.returncode == 1, real.stderr
    row = next(ln for ln in real.stdout.splitlines() if ln.startswith("brownbob_222"))
    assert "bob" in row and "late,file" in row and "2026-12-02 09:00" in row
    assert "spooled 3 hand-in(s) (1 marked late); kept 3 in quarantine" in real.stdout
    assert len(list((spool / "new").iterdir())) == 3
    assert len(list((spool / "quarantine").iterdir())) == 3
