"""An LMS's bulk download read from its member names (Canvas's "Download Submissions",
Moodle's "Download all submissions", named as their documentation says), mapped to a
roster, and timed: no file unaccounted for, no hand-in given to a student on
contradicting evidence."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from grader.core.errors import ConfigError
from grader.course.lms_archive import detect, parse_archive
from grader.course.lms_mapping import (
    Mapped,
    Roster,
    Times,
    Unmapped,
    hand_in_time,
    map_archive,
    map_submission,
    name_keys,
    parse_moodle_time,
    read_times,
    read_worksheet,
)
from grader.course.load import Student, read_roster

from ..support import WORKSHEET

BERLIN = ZoneInfo("Europe/Berlin")
DEADLINE = datetime(2026, 12, 1, 23, 59, tzinfo=BERLIN)

CANVAS = [
    "adamsalice_111_9001_sum.c",
    "brownbob_LATE_222_9002_main.c",
    "brownbob_LATE_222_9003_util.h",
    "anon_Xy3Zq_9004_sum.c",
    "cartercarol_333_text.html",
    "dixondan_444_link.html",
    "zedzoe_555_9005_sum.c",
    "notes.txt",
]
MOODLE = [
    "Alice Adams_7_assignsubmission_file/sum.c",
    "Alice Adams_7_assignsubmission_file/src/util.c",
    "Bob Brown_8_assignsubmission_onlinetext/onlinetext.html",
    "Carol Carter_9_assignsubmission_file_sum.c",
    "Participant_10_assignsubmission_file/sum.c",
    "Zoe Zed_11_assignsubmission_file/sum.c",
    "Alice Adams_7_assignsubmission_comments/x.txt",
]


ROSTER = """student,name,email,lms_id
alice,Alice Adams,alice@example.org,111
bob,Bob Brown,bob@example.org,
carol,Carol Carter,carol@example.org,
dan,Dan Dixon,dan@example.org,
"""


def roster(text: str = ROSTER) -> dict[str, Student]:
    return read_roster(text, "roster.csv")


def by_label(done: list[Mapped] | list[Unmapped]) -> dict[str, Mapped | Unmapped]:
    return {m.submission.who.label: m for m in done}


def test_canvas_names_are_read_as_its_documentation_writes_them() -> None:
    a = parse_archive(CANVAS)
    assert a.lms == "canvas"
    subs = {s.who.label: s for s in a.submissions}
    assert list(subs) == ["adamsalice_111", "brownbob_222", "anon_Xy3Zq", "cartercarol_333",
                          "dixondan_444", "zedzoe_555"]
    assert [f.path for f in subs["adamsalice_111"].files] == ["sum.c"]
    bob = subs["brownbob_222"]
    assert bob.late and [f.path for f in bob.files] == ["main.c", "util.h"]
    assert not subs["adamsalice_111"].late
    anon = subs["anon_Xy3Zq"]
    assert anon.who.anonymous and anon.who.lms_id == "Xy3Zq" and anon.who.name == ""
    assert subs["cartercarol_333"].kinds == ("text",)
    assert [f.path for f in subs["cartercarol_333"].files] == ["text.html"]
    assert subs["dixondan_444"].kinds == ("link",)
    assert [(u.member, "not named as Canvas" in u.reason) for u in a.unrecognised] == \
        [("notes.txt", True)]


def test_canvas_late_anonymous_and_a_file_called_text_html() -> None:
    a = parse_archive(["anon_Q1_LATE_5_a.py", "anon_Q1_LATE_text.html",
                       "smithjo_12_34_text.html"])
    anon, jo = a.submissions
    assert anon.late and anon.who.anonymous and anon.kinds == ("file", "text")
    assert jo.kinds == ("file",) and jo.files[0].path == "text.html"  # an uploaded file


def test_canvas_copy_suffix_is_kept_unless_asked_and_never_onto_another_file() -> None:
    names = ["leeann_7_1_Main-1.java", "leeann_7_2_Util-2.java", "leeann_7_3_Util.java"]
    kept = parse_archive(names).submissions[0]
    assert [f.path for f in kept.files] == ["Main-1.java", "Util-2.java", "Util.java"]
    stripped = parse_archive(names, strip_copy_suffix=True).submissions[0]
    assert [(f.path, f.renamed) for f in stripped.files] == \
        [("Main.java", True), ("Util-2.java", False), ("Util.java", False)]


def test_moodle_folders_the_older_flat_layout_and_blind_marking() -> None:
    a = parse_archive(MOODLE)
    assert a.lms == "moodle"
    subs = {s.who.label: s for s in a.submissions}
    alice = subs["Alice Adams_7"]
    assert [f.path for f in alice.files] == ["sum.c", "src/util.c"]
    assert subs["Bob Brown_8"].kinds == ("text",)
    assert [f.path for f in subs["Carol Carter_9"].files] == ["sum.c"]  # flat layout
    blind = subs["Participant_10"]
    assert blind.who.anonymous and blind.who.lms_id == "10"
    assert [u.member for u in a.unrecognised] == \
        ["Alice Adams_7_assignsubmission_comments/x.txt"]
    assert "comments plugin" in a.unrecognised[0].reason


def test_detection_and_a_zip_of_neither() -> None:
    assert detect(CANVAS) == "canvas" and detect(MOODLE) == "moodle"
    with pytest.raises(ConfigError, match="is this the LMS's zip"):
        detect(["readme.md", "src/main.c"])
    forced = parse_archive(CANVAS, "moodle")  # told the wrong LMS: nothing is lost
    assert not forced.submissions and len(forced.unrecognised) == len(CANVAS)


def test_two_files_landing_on_one_path_are_a_clash() -> None:
    sub = parse_archive(["X_1_assignsubmission_file/a.c",
                         "X_1_assignsubmission_file_a.c"], "moodle").submissions[0]
    assert sub.clashes == ("a.c",)
    got = map_submission(sub, Roster(roster("student,name,email\nx,X,x@e\n")))
    assert isinstance(got, Unmapped) and "both be a.c" in got.reason


def test_canvas_maps_by_user_id_then_by_the_sortable_name() -> None:
    mapped, unmapped = map_archive(parse_archive(CANVAS), roster())
    m = by_label(mapped)
    assert (m["adamsalice_111"].student, m["adamsalice_111"].how) == ("alice", "lms_id")
    assert (m["brownbob_222"].student, m["brownbob_222"].how) == ("bob", "name")
    assert m["cartercarol_333"].student == "carol" and m["dixondan_444"].student == "dan"
    u = by_label(unmapped)
    assert set(u) == {"anon_Xy3Zq", "zedzoe_555"}
    assert "anonymous" in u["anon_Xy3Zq"].reason
    assert "no roster lms_id is 555" in u["zedzoe_555"].reason
    assert "no roster name is 'zedzoe'" in u["zedzoe_555"].reason


def test_names_match_either_way_round_and_anonymous_ones_by_lms_id_only() -> None:
    assert name_keys("Ada Lovelace King") == {"adalovelaceking", "kingadalovelace",
                                              "lovelacekingada"}
    r = roster("student,name,email,lms_id\nada,Ada Lovelace King,a@e,\n"
               "max,Max Mustermann,m@e,Xy3Zq\n")
    got = map_submission(parse_archive(["kingadalovelace_9_1_a.c"]).submissions[0],
                         Roster(r))
    assert isinstance(got, Mapped) and (got.student, got.how) == ("ada", "name")
    anon = map_submission(parse_archive(["anon_Xy3Zq_1_a.c"]).submissions[0], Roster(r))
    assert isinstance(anon, Mapped) and (anon.student, anon.how) == ("max", "lms_id")
    nameless = map_submission(parse_archive(["anon_Q9_1_a.c"]).submissions[0], Roster(r))
    assert isinstance(nameless, Unmapped) and "only a roster lms_id" in nameless.reason


def test_a_name_never_maps_onto_another_user_id_or_a_shared_name() -> None:
    r = roster("student,name,email,lms_id\nbob,Bob Brown,b@e,999\n"
               "ann1,Ann Lee,a1@e,\nann2,Ann Lee,a2@e,\n")
    other = map_submission(parse_archive(["brownbob_222_1_a.c"]).submissions[0], Roster(r))
    assert isinstance(other, Unmapped) and "bob (999), another user id" in other.reason
    shared = map_submission(parse_archive(["leeann_5_1_a.c"]).submissions[0], Roster(r))
    assert isinstance(shared, Unmapped) and "that of ann1, ann2" in shared.reason


def test_two_hand_ins_of_one_student_both_stay_unmapped() -> None:
    r = roster("student,name,email,lms_id\nbob,Bob Brown,b@e,\n")
    mapped, unmapped = map_archive(parse_archive(["brownbob_1_1_a.c", "brownbob_2_2_a.c"]), r)
    assert not mapped
    assert sorted(u.reason for u in unmapped) == ["bob is also brownbob_1",
                                                  "bob is also brownbob_2"]


def test_moodle_maps_by_lms_id_then_worksheet_email_then_name() -> None:
    ws = read_worksheet(WORKSHEET, BERLIN, "ws.csv")
    r = roster(ROSTER.replace("carol@example.org,", "carol@example.org,9"))
    mapped, unmapped = map_archive(parse_archive(MOODLE), r, ws)
    m = by_label(mapped)
    assert {k: (v.student, v.how) for k, v in m.items()} == {
        "Alice Adams_7": ("alice", "email"), "Bob Brown_8": ("bob", "email"),
        "Carol Carter_9": ("carol", "lms_id")}
    u = by_label(unmapped)
    assert "anonymous Participant_10" in u["Participant_10"].reason
    assert "the worksheet's email zoe@example.org is on no roster row" in \
        u["Zoe Zed_11"].reason
    no_ws, _ = map_archive(parse_archive(MOODLE), roster())
    assert by_label(no_ws)["Alice Adams_7"].how == "name"


def test_contradicting_evidence_maps_nobody() -> None:
    ws = read_worksheet(WORKSHEET, BERLIN, "ws.csv")
    # participant ids are per assignment in Moodle: 8 is bob's here, not alice's
    r = roster("student,name,email,lms_id\nalice,Alice Adams,alice@example.org,8\n"
               "bob,Bob Brown,bob@example.org,\n")
    got = map_submission(parse_archive(MOODLE).submissions[1], Roster(r), ws)
    assert isinstance(got, Unmapped)
    assert got.reason == ("the evidence disagrees: lms_id says alice, email says bob, "
                          "name says bob")


def test_the_worksheet_gives_moodle_times_in_the_course_zone() -> None:
    assert parse_moodle_time("Tuesday, 1 December 2026, 11:58 PM", BERLIN) == \
        datetime(2026, 12, 1, 23, 58, tzinfo=BERLIN)
    assert parse_moodle_time("Monday, 30 November 2026, 12:00 AM", BERLIN) == \
        datetime(2026, 11, 30, 0, 0, tzinfo=BERLIN)
    assert parse_moodle_time("-", BERLIN) is None
    with pytest.raises(ValueError, match="English"):
        parse_moodle_time("Dienstag, 1. Dezember 2026, 23:58", BERLIN)
    ws = read_worksheet(WORKSHEET, BERLIN, "ws.csv")
    assert ws["8"].modified == datetime(2026, 12, 2, 9, 5, tzinfo=BERLIN)
    assert ws["11"].modified is None and ws["11"].status == "No submission"
    with pytest.raises(ConfigError, match=r"ws\.csv: not Moodle's grading worksheet"):
        read_worksheet("student,name\n", BERLIN, "ws.csv")


def test_hand_in_times_never_guess_how_late() -> None:
    ws = read_worksheet(WORKSHEET, BERLIN, "ws.csv")
    mapped, _ = map_archive(parse_archive(CANVAS), roster())
    m = by_label(mapped)
    on_time = hand_in_time(m["adamsalice_111"], DEADLINE)
    assert (on_time.at, on_time.source) == (DEADLINE, "deadline (not marked late)")
    late = hand_in_time(m["brownbob_222"], DEADLINE)
    assert late.at is None and "marked late" in late.source
    later = DEADLINE + timedelta(hours=5)
    assert hand_in_time(m["brownbob_222"], DEADLINE, late_at=later).at == later
    exact = DEADLINE + timedelta(minutes=3)
    given = Times({"bob": exact}, {})
    assert hand_in_time(m["brownbob_222"], DEADLINE, times=given, late_at=later).at == exact
    moodle, _ = map_archive(parse_archive(MOODLE), roster(), ws)
    alice = by_label(moodle)["Alice Adams_7"]
    assert hand_in_time(alice, DEADLINE, worksheet=ws).at == \
        datetime(2026, 12, 1, 23, 58, tzinfo=BERLIN)
    assert hand_in_time(alice, DEADLINE).at is None


def test_times_csv_by_student_or_lms_id() -> None:
    t = read_times("student,lms_id,submitted_at\nbob,,2026-12-02T10:00\n"
                   ",555,2026-12-02T11:00+00:00\n", BERLIN, "t.csv")
    assert t.by_student == {"bob": datetime(2026, 12, 2, 10, 0, tzinfo=BERLIN)}
    assert t.by_lms_id["555"].utcoffset() == timedelta(0)
    with pytest.raises(ConfigError, match=r"t\.csv:2: submitted_at: a time is written .*'soon'"):
        read_times("student,submitted_at\nbob,soon\n", BERLIN, "t.csv")

