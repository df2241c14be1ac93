"""The bad-input corpus: what staff and admins write by hand or save from a spreadsheet
(course files, rosters, an LMS's CSVs, gradeline.yaml, the environment), malformed the
ways people malform it. Each is refused with a GradelineError that names its place
(file:line and key, or the variable) and the fix, or read as meant; never a guess, an
exception of another kind, a traceback or "internal error", and the files stay as they
were. The hand-written table covers the classes of issue 52; Hypothesis generates the
rest, and any exception but a GradelineError it provokes is a failure.

``GRADELINE_FUZZ=N`` runs N random examples per property instead of the fixed ones.
"""

from __future__ import annotations

import csv
import errno
import io
import os
import shutil
import string
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grader.cli import main as cli
from grader.core.errors import GradelineError
from grader.course.lms_mapping import read_times, read_worksheet
from grader.course.load import load_course
from grader.course.spec import MAX_DURATION, YEARS, parse_duration, parse_time
from grader.course.staffinput import read_text
from grader.formats.load import load_problem
from grader.settings import KNOBS, Settings

from ..support import EXAMPLES

_N = int(os.environ.get("GRADELINE_FUZZ", "0"))
FUZZ = settings(max_examples=_N or 120, derandomize=not _N, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

COURSE = """\
course: cs101
timezone: Europe/Berlin
roster: roster.csv
late: {penalty_per_day: 10, max_late: 2d}
assignments:
  - name: hw1
    package: pk
    deadline: 2026-12-01 23:59
extensions:
  - {student: alice, until: 2026-12-03 12:00}
"""
ROSTER = "student,name,email,lms_id\nalice,Alice Adams,alice@example.org,7\n"


def edit(old: str, new: str) -> bytes:
    assert old in COURSE
    return COURSE.replace(old, new).encode()


@dataclass(frozen=True)
class Case:
    """One malformed input: its class (issue 52's), the files, what reads them, and what
    the refusal must say (empty ``says``: it must be read, and ``check`` holds)."""

    id: str
    kind: str  # "wrong guess", "unclear words", "checked too late"
    reader: str  # course, worksheet, times, settings, package
    files: dict[str, bytes] = field(default_factory=dict)
    says: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    check: Callable[[object], bool] | None = None


LATIN1 = "student,name,email,lms_id\nalice,Alice,a@x.org,7\nrene,Ren\xe9,r@x.org,8\n"
C, R = "course.yaml", "roster.csv"
CASES = [
    # 1. a silent wrong guess: YAML's numbers, a shifted row, a default for "false"
    Case("deadline 23:59", "wrong guess", "course",
         {C: edit("2026-12-01 23:59", "23:59")},
         ("course.yaml:8: assignments[0].deadline: '23:59' is a time without a date",
          "deadline: '2026-12-01 23:59'")),
    Case("deadline '23:59' quoted", "wrong guess", "course",
         {C: edit("2026-12-01 23:59", "'23:59'")}, ("course.yaml:8:", "without a date")),
    Case("until 12:00", "wrong guess", "course",
         {C: edit("2026-12-03 12:00", "12:00")},
         ("course.yaml:10: extensions[0].until: '12:00' is a time without a date",
          "until: '2026-12-01 23:59'")),
    Case("max_late 1:30", "wrong guess", "course", {C: edit("2d", "1:30")},
         ("course.yaml:4: late.max_late: 1:30 could be hours:minutes or minutes:seconds",
          "90m")),
    Case("deadline as minutes", "wrong guess", "course",
         {C: edit("2026-12-01 23:59", "1439")}, ("course.yaml:8:", "1439 is a number")),
    Case("deadline without time", "wrong guess", "course",
         {C: edit("2026-12-01 23:59", "2026-12-01")},
         ("course.yaml:8:", "has no time of day", "00:00")),
    Case("key twice", "wrong guess", "course",
         {C: edit("    deadline: 2026-12-01 23:59\n",
                  "    deadline: 2026-12-01 23:59\n    deadline: 2026-12-08 23:59\n")},
         ("course.yaml:9:", "'deadline' is given twice (lines 8 and 9)")),
    Case("huge extension", "wrong guess", "course",
         {C: edit("until: 2026-12-03 12:00", "extra: 99999999999999999999d")},
         ("course.yaml:10: extensions[0].extra:", "longer than a year")),
    Case("cap nan", "wrong guess", "course", {C: edit("max_late: 2d", "cap: .nan")},
         ("course.yaml:4: late.cap:", "finite number")),
    Case("unquoted comma", "wrong guess", "course",
         {R: b"student,name,email,lms_id\nalice,Adams, Alice,a@x.org,7\n"},
         ("roster.csv:2: 5 values where the header names 4 columns",
          '"Adams, Alice"')),
    Case("missing value", "wrong guess", "course",
         {R: b"student,name,email,lms_id\nalice,Alice,7\n"},
         ("roster.csv:2: 3 values", "give every column")),
    Case("cgroups=false", "wrong guess", "settings", env={"GRADELINE_CGROUPS": "false"},
         check=lambda s: isinstance(s, Settings) and not s.cgroups),
    Case("null grading=yes", "wrong guess", "settings",
         env={"GRADELINE_NULL_GRADING": "Yes"},
         check=lambda s: isinstance(s, Settings) and s.null_grading),
    Case("cgroups=nein", "wrong guess", "settings", env={"GRADELINE_CGROUPS": "nein"},
         says=("GRADELINE_CGROUPS='nein': use 1 or 0",)),
    Case("l3=nan", "wrong guess", "settings", env={"GRADELINE_L3_MB_PER_CORE": "nan"},
         says=("GRADELINE_L3_MB_PER_CORE='nan' is not a finite number",)),
    # 3. checked too late: gradeline.yaml's type
    Case("type gradescop", "checked too late", "package",
         {"gradeline.yaml": b"type: gradescop\n"},
         ("gradeline.yaml: type: 'gradescop' is not a package type: use gradescope or "
          "unittest",)),
    # 4. unclear words: encodings, offsets, URLs, values named as keys
    Case("latin-1 roster", "unclear words", "course", {R: LATIN1.encode("latin-1")},
         ("roster.csv is not UTF-8 (byte 0xe9 at line 3", "save it as UTF-8")),
    Case("utf-16 roster", "unclear words", "course", {R: ROSTER.encode("utf-16")},
         ("roster.csv is UTF-16", "save it as UTF-8")),
    Case("bom roster", "unclear words", "course", {R: b"\xef\xbb\xbf" + ROSTER.encode()},
         check=lambda c: getattr(c, "students", {})["alice"].lms_id == "7"),
    Case("quoted comma", "unclear words", "course",
         {R: b'student,name,email,lms_id\r\nalice,"Adams, Alice",a@x.org,7\r\n'},
         check=lambda c: getattr(c, "students", {})["alice"].name == "Adams, Alice"),
    Case("semicolons", "unclear words", "course",
         {R: b"student;name;email\nalice;Alice;a@x.org\n"}, ("roster.csv:1:", "';'")),
    Case("header twice", "unclear words", "course",
         {R: b"student,name,email,email\nalice,A,a@x,b@x\n"},
         ("roster.csv:1: the header names email twice",)),
    Case("nul byte", "unclear words", "course", {R: ROSTER.encode() + b"bob\x00,B,b,\n"},
         ("roster.csv:3: a NUL byte",)),
    Case("bad quote", "unclear words", "course",
         {R: b'student,name,email,lms_id\nalice,"Al"ice,a@x,7\n'},
         ("roster.csv:2: not CSV",)),
    Case("roster extension 1:30", "unclear words", "course",
         {R: b"student,name,email,extension\nalice,A,a@x,1:30\n"},
         ("roster.csv:2: extension: 1:30 could be",)),
    Case("latin-1 course file", "unclear words", "course",
         {C: COURSE.replace("cs101", "cs101\n# \xe9t\xe9").encode("latin-1")},
         ("course.yaml is not UTF-8 (byte 0xe9 at line 2",)),
    Case("offset +25:00", "unclear words", "course",
         {C: edit("2026-12-01 23:59", "2026-12-01T23:59+25:00")},
         ("course.yaml:8:", "the offset +25:00", "-12:00 to +14:00")),
    Case("yaml timestamp +25:00", "unclear words", "course",
         {C: edit("2026-12-01 23:59", "2026-12-01 23:59:00 +25:00")},
         ("course.yaml:8:", "the offset +25:00")),
    Case("february 30", "unclear words", "course",
         {C: edit("2026-12-01 23:59", "2026-02-30 10:00")},
         ("course.yaml:8:", "day is out of range for month")),
    Case("counts lst", "unclear words", "course", {C: edit("roster:", "counts: lst\nroster:")},
         ("course.yaml:3: counts: 'lst' is not a value it takes: use 'last', 'best' or "
          "'chosen'",)),
    Case("key typo", "unclear words", "course", {C: edit("timezone", "timezon")},
         ("course.yaml:2: unknown key 'timezon' (did you mean 'timezone'?)",)),
    Case("not yaml", "unclear words", "course", {C: edit("late: {", "late: {{")},
         ("course.yaml:", "not YAML")),
    Case("bool maybe", "unclear words", "course", {C: edit("cs101", "!!bool maybe")},
         ("course.yaml:1: not YAML: 'maybe' cannot be read as !!bool",)),
    Case("nested too deep", "unclear words", "course",
         {C: edit("cs101", "[" * 3000 + "]" * 3000)}, ("course.yaml: nested too deep",)),
    Case("empty course file", "unclear words", "course", {C: b""},
         ("course.yaml: the course file is empty",)),
    Case("missing roster", "unclear words", "course",
         {C: edit("roster.csv", "rooster.csv")}, ("course.yaml:3: roster rooster.csv",)),
    Case("times offset", "unclear words", "times",
         {"times.csv": b"student,submitted_at\nalice,2026-12-01T23:00+25:00\n"},
         ("times.csv:2: submitted_at: the offset +25:00",)),
    Case("times latin-1", "unclear words", "times",
         {"times.csv": "student,submitted_at\nren\xe9,2026-12-01 23:00\n".encode("latin-1")},
         ("times.csv is not UTF-8 (byte 0xe9 at line 2",)),
    Case("worksheet shifted", "unclear words", "worksheet",
         {"ws.csv": b"Identifier,Full name,Last modified (submission)\n"
                    b"Participant 7,Adams, Alice,-\n"}, ("ws.csv:2: 4 values",)),
    Case("db url", "unclear words", "settings", env={"GRADELINE_DB_URL": "not a url"},
         says=("GRADELINE_DB_URL is not a PostgreSQL URL", "postgresql://")),
    Case("db url scheme", "unclear words", "settings",
         env={"GRADELINE_DB_URL": "mysql://db/x"}, says=("(its scheme is 'mysql')",)),
    Case("total_points null", "unclear words", "package",
         {"gradeline.yaml": b"total_points:\n"}, ("total_points must be a number",)),
    Case("time limit 10**400", "unclear words", "package",
         {"gradeline.yaml": b"time_limit_s: 1" + b"0" * 400 + b"\n"},
         ("time_limit_s must be a number",)),
    Case("stack 1e-300", "unclear words", "package",
         {"gradeline.yaml": b"time_limit_s: 1\nstack_mib: 1.0e-300\n"},
         ("stack_mib must be a number >= 1",)),
    Case("stack 1e300", "unclear words", "package",
         {"gradeline.yaml": b"time_limit_s: 1\nstack_mib: 1.0e+300\n"},
         ("stack_mib must be a number >= 1 and <= 1.04858e+06, not 1e+300",)),
    Case("processes 2.5", "unclear words", "package",
         {"gradeline.yaml": b"time_limit_s: 1\nprocesses: 2.5\n"},
         ("processes must be a whole number, not 2.5",)),
    Case("latin-1 gradeline.yaml", "unclear words", "package",
         {"gradeline.yaml": "# \xe9\ntime_limit_s: 1\n".encode("latin-1")},
         ("gradeline.yaml: is not UTF-8 text",)),
]


def _read(case: Case, d: Path) -> object:
    if case.reader == "course":
        return load_course(d / C)
    if case.reader == "settings":
        return Settings.from_env(case.env, euid=0)
    if case.reader == "package":
        return load_problem(d / "pk")
    zone = load_course(d / C).zone
    if case.reader == "times":
        return read_times(read_text(d / "times.csv", "--times"), zone, str(d / "times.csv"))
    return read_worksheet(read_text(d / "ws.csv", "worksheet"), zone, str(d / "ws.csv"))


def _lay_out(d: Path, files: dict[str, bytes]) -> None:
    shutil.copytree(EXAMPLES / "bigsum", d / "pk")
    (d / C).write_bytes(COURSE.encode())
    (d / R).write_bytes(ROSTER.encode())
    for name, data in files.items():
        (d / ("pk" if name == "gradeline.yaml" else ".") / name).write_bytes(data)


def _snapshot(d: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(d)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bad_input_is_refused_naming_its_place_or_read_as_meant(tmp_path: Path,
                                                                 case: Case) -> None:
    _lay_out(tmp_path, case.files)
    before = _snapshot(tmp_path)
    if case.says:
        with pytest.raises(GradelineError) as e:
            _read(case, tmp_path)
        message = str(e.value)
        for part in case.says:
            assert part in message, message
        assert "Traceback" not in message and "internal error" not in message
        if case.reader != "settings":
            assert str(tmp_path) in message  # the file, by its path
    else:
        assert case.check is not None and case.check(_read(case, tmp_path))
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("case", [c for c in CASES if c.reader in ("course", "settings")
                                  and c.says], ids=lambda c: c.id)
def test_the_command_line_says_it_and_exits_2(
        tmp_path: Path, case: Case, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    _lay_out(tmp_path, case.files)
    for name, value in case.env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as e:
        cli.main(["course", "check", "--course-file", str(tmp_path / C)])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert err.startswith("gradeline: error: ") and case.says[0] in err
    assert "Traceback" not in err and "internal error" not in err


def test_a_state_dir_it_may_not_write_is_named_with_the_remedy(tmp_path: Path) -> None:
    denied = PermissionError(errno.EACCES, "Permission denied", str(tmp_path / "images"))
    with pytest.raises(GradelineError) as e, cli._unwritable(tmp_path):
        raise denied
    assert str(e.value).startswith(f"state dir {tmp_path}: cannot write {tmp_path}/images")
    assert "--state-dir or GRADELINE_STATE_DIR" in str(e.value)
    elsewhere = PermissionError(errno.EACCES, "Permission denied", "/etc/shadow")
    with pytest.raises(PermissionError), cli._unwritable(tmp_path):
        raise elsewhere


def test_an_internal_error_points_at_a_v_the_parser_takes(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit), cli._errors(False, "course"):
        raise RuntimeError("a bug")
    err = capsys.readouterr().err
    assert "(for the traceback: gradeline -v course ...)" in err
    args = cli.build_parser().parse_args(["-v", "course", "check", "--course-file", "x"])
    assert args.verbose


# -- generated: Hypothesis ---------------------------------------------------------------
#: what staff type where a value goes: times, durations, numbers, YAML's own words
TYPED = st.one_of(
    st.sampled_from(["23:59", "1:30", "12:00", "0:10", "24:00", "2026-12-01",
                     "2026-12-01 23:59", "2026-12-01T23:59+25:00", "2026-12-01 23:59:60",
                     "2026-12-01 23:59:00 -13:00", "1e400", ".nan", "-.inf", "~", "yes",
                     "3d", "36h", "90m", "-1d", "0x1f", "0o17", "1_000", "[]", "{}", "'",
                     "!!bool maybe", "!!int x", "!!timestamp x", "&a [*a]", "@", "%", "|",
                     "9" * 400]),
    st.from_regex(r"\A[0-9]{1,5}(:[0-9]{1,2}){0,2}\Z"),
    st.from_regex(r"\A[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([ T][0-9]{1,2}:[0-9]{2}"
                  r"(:[0-9]{2})?( ?[+-][0-9]{2}:?[0-9]{2}|Z)?)?\Z"),
    st.integers(-10**30, 10**30).map(str),
    st.text(string.printable, max_size=12))
HOLES = ("cs101", "Europe/Berlin", "roster.csv", "10", "2d", "hw1", "pk",
         "2026-12-01 23:59", "alice", "2026-12-03 12:00")


def _tmp() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="bad-input-")


def _load_or_refuse(path: Path) -> None:
    """load_course either reads the course or refuses it naming the file; nothing else."""
    try:
        c = load_course(path)
    except GradelineError as e:
        assert str(e).startswith(str(path.parent)), str(e)
        return
    for a in c.assignments.values():
        assert a.deadline.tzinfo is not None and YEARS[0] <= a.deadline.year <= YEARS[1]
        assert a.late.max_late is None or a.late.max_late <= MAX_DURATION
        for s in c.students:
            c.deadline(s, a.name)


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(HOLES), TYPED), min_size=1, max_size=3))
def test_a_course_file_with_what_staff_type_in_its_values(holes: list[tuple[str, str]]
                                                          ) -> None:
    text = COURSE
    for hole, typed in holes:
        text = text.replace(hole, typed, 1)
    with _tmp() as d:
        (Path(d) / C).write_bytes(text.encode())
        (Path(d) / R).write_text(ROSTER)
        _load_or_refuse(Path(d) / C)
        assert (Path(d) / C).read_bytes() == text.encode()


YAML_DATA = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8) | TYPED
    | st.sampled_from([0, -1, 0.5, 1e-300, 1e300, 2**64, 10**400]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.text(max_size=6) | st.sampled_from(["deadline", "until", "extra", "late",
                                                "max_late", "name", "package", "cap"]),
        inner, max_size=3), max_leaves=8)
PLACES = ("course", "timezone", "late", "late_days", "counts", "assignments", "extensions",
          "limits", "bulk", "staff", "lms", "roster", "colour", "deadline", "until", "extra",
          "student", "assignment", "max_late", "cap", "points", "visibility", "starter")


@FUZZ
@given(st.sampled_from(PLACES), YAML_DATA,
       st.sampled_from(["top", "assignments", "extensions", "late"]))
def test_a_course_file_with_any_data_at_a_key(key: str, value: object, where: str) -> None:
    data = yaml.safe_load(COURSE)
    inner = {"top": data, "assignments": data["assignments"][0],
             "extensions": data["extensions"][0], "late": data["late"]}[where]
    inner[key] = value
    with _tmp() as d:
        (Path(d) / C).write_text(yaml.safe_dump(data))
        (Path(d) / R).write_text(ROSTER)
        _load_or_refuse(Path(d) / C)


@FUZZ
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_a_course_file_of_any_bytes(data: bytes) -> None:
    with _tmp() as d:
        (Path(d) / C).write_bytes(data)
        _load_or_refuse(Path(d) / C)


FIELD = st.text(string.ascii_letters + string.digits + " ,;\t@.:-\xe9", max_size=8)
HEADER = ["student", "name", "email", "lms_id"]


@FUZZ
@given(st.lists(st.lists(FIELD, min_size=1, max_size=6), max_size=5),
       st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "utf-16", "cp1252"]),
       st.sampled_from(["\n", "\r\n"]))
def test_a_roster_from_a_spreadsheet_never_shifts(rows: list[list[str]], encoding: str,
                                                  newline: str) -> None:
    """Values joined with commas, unquoted, as a careless export writes them: a line of
    the header's four fields is read field by field, a line of more or fewer (a value
    holding a comma, one left out) is refused naming the roster, never read shifted."""
    text = newline.join(",".join(r) for r in [HEADER, *rows]) + newline
    data = text.encode(encoding, "replace")
    with _tmp() as d:
        (Path(d) / C).write_text(COURSE.replace("  - {student: alice, until: "
                                                "2026-12-03 12:00}\n", "  []\n"))
        (Path(d) / R).write_bytes(data)
        try:
            c = load_course(Path(d) / C)
        except GradelineError as e:
            assert str(Path(d) / R) in str(e), str(e)
            return
    for r in rows:
        fields = [v.strip() for v in ",".join(r).split(",")]
        if any(fields):  # a blank line (,,,) is skipped
            assert len(fields) == len(HEADER)
            s = c.students[fields[0]]
            assert [s.id, s.name, s.email, s.lms_id] == fields


@FUZZ
@given(st.lists(st.lists(st.text(max_size=6), min_size=1, max_size=4), max_size=4))
def test_lms_csvs_of_any_shape(rows: list[list[str]]) -> None:
    out = io.StringIO()
    csv.writer(out).writerows([["student", "submitted_at", "Identifier",
                                "Last modified (submission)"], *rows])
    for read in (read_times, read_worksheet):
        try:
            read(out.getvalue(), UTC, "x.csv")
        except GradelineError as e:
            assert str(e).startswith("x.csv"), str(e)


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pk = tmp_path_factory.mktemp("pk") / "bigsum"
    shutil.copytree(EXAMPLES / "bigsum", pk)
    return pk


@FUZZ
@given(st.dictionaries(st.sampled_from(["type", "time_limit_s", "wall_time_s", "languages",
                                        "compile_flags", "groups", "total_points",
                                        "stack_mib", "processes", "colour"]),
                       YAML_DATA, max_size=3) | YAML_DATA)
def test_a_gradeline_yaml_of_any_data(package: Path, data: object) -> None:
    (package / "gradeline.yaml").write_text(yaml.safe_dump(data))
    try:
        load_problem(package)
    except GradelineError as e:
        assert "gradeline.yaml" in str(e) or str(package) in str(e), str(e)


@FUZZ
@given(st.dictionaries(st.sampled_from([k.env for k in KNOBS if "," not in k.env]),
                       st.text(max_size=12) | TYPED, max_size=4))
def test_an_environment_of_any_values(env: dict[str, str]) -> None:
    try:
        Settings.from_env(env, euid=0)
    except GradelineError as e:
        assert any(name in str(e) for name in env), str(e)


@FUZZ
@given(st.text(max_size=30) | TYPED)
def test_a_time_or_a_duration_of_any_text(text: str) -> None:
    for parse in (parse_time, parse_duration):
        try:
            parse(text)
        except ValueError as e:
            assert str(e)
