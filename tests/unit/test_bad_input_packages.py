"""Bad input from staff beside course files and rosters: packages (half a test, an
autograder zip that is damaged, lacks run_autograder, zips its folder or was saved with
Windows line endings), paths (a spool that is not there), a destination for the
examples that holds edited files, and the course files lti.yaml names.

Each case runs the command staff would run and asserts a non-zero exit, the place
named, no traceback and no "internal error", the input files unchanged, and nothing
made where nothing was asked for. A generated tier mutates every file of four bundled
packages (deleted, emptied, garbage, broken YAML) and asserts that loading and
verifying either succeeds or refuses with a GradelineError naming the package.
(Course files, rosters and settings: test_bad_input.py.)"""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader.cli import main as cli
from grader.core.errors import GradelineError
from grader.formats.load import load_problem, verify_package

from ..support import EXAMPLES, file_tree, files_of, zip_of

# -- helpers ------------------------------------------------------------------------


def package(tmp: Path, name: str) -> Path:
    dest = tmp / "pkg"
    shutil.copytree(EXAMPLES / name, dest, symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def course_check(tmp: Path, pkg: Path) -> list[str]:
    (tmp / "course.yaml").write_text(
        "course: c\ntimezone: UTC\nassignments:\n"
        f"  - name: a\n    package: {pkg.name}\n    deadline: \"2026-12-01 23:59\"\n")
    return ["course", "check", "--course-file", str(tmp / "course.yaml")]


def zipped(tmp: Path, files: Callable[[dict[str, bytes]], dict[str, bytes]],
           **kw: int) -> Path:
    """wordfreq with its autograder as a zip of ``files(its files)``."""
    pkg = package(tmp, "wordfreq")
    ag = pkg / "autograder"
    zip_of(pkg / "autograder.zip", files(files_of(ag)), **kw)
    shutil.rmtree(ag)
    gl = pkg / "gradeline.yaml"
    gl.write_text(gl.read_text().replace("autograder: autograder ", "autograder: autograder.zip"))
    return pkg


def truncated(tmp: Path) -> Path:
    pkg = zipped(tmp, lambda f: f)
    z = pkg / "autograder.zip"
    z.write_bytes(z.read_bytes()[:200])
    return pkg


def bad_crc(tmp: Path) -> Path:
    """A zip whose run_tests.py (not a script read at load) no longer matches its CRC."""
    pkg = zipped(tmp, lambda f: f, method=zipfile.ZIP_STORED)
    z = pkg / "autograder.zip"
    with zipfile.ZipFile(z) as zf:
        info = zf.getinfo("run_tests.py")
    data = z.read_bytes()
    name_len, extra_len = (int.from_bytes(data[info.header_offset + i:][:2], "little")
                           for i in (26, 28))
    at = info.header_offset + 30 + name_len + extra_len + 10  # inside its stored bytes
    z.write_bytes(data[:at] + bytes([data[at] ^ 1]) + data[at + 1:])
    return pkg


def in_dir(change: Callable[[Path], None]) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        pkg = package(tmp, "wordfreq")
        change(pkg / "autograder")
        return pkg
    return make


def kattis(name: str, change: Callable[[Path], None]) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        pkg = package(tmp, name)
        change(pkg)
        return pkg
    return make


def write(rel: str, data: bytes | str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):
            p.write_text(data)
        else:
            p.write_bytes(data)
    return change


def crlf(text: bytes) -> bytes:
    return text.replace(b"\n", b"\r\n")


def lti(course_text: str | None) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        if course_text is not None:
            (tmp / "cs101").mkdir()
            (tmp / "cs101" / "course.yaml").write_text(course_text)
        (tmp / "lti.yaml").write_text(
            "tool: {base_url: 'http://127.0.0.1:9/lti'}\nplatforms:\n"
            "  - {issuer: 'https://lms.example.edu', client_id: '1', deployment_ids: [d1],\n"
            "     auth_login_url: 'https://lms.example.edu/a', auth_token_url: "
            "'https://lms.example.edu/t',\n     key_set_url: 'https://lms.example.edu/k', "
            "course_file: cs101/course.yaml}\n")
        return ["lti", "serve", "--registrations", str(tmp / "lti.yaml"), "--port", "9"]
    return make


def examples_into(change: Callable[[Path], None]) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        dest = tmp / "course"
        assert cli.main(["examples", str(dest)]) == 0
        change(dest)
        return ["examples", str(dest)]
    return make


def spool_cmd(*argv: str) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        (tmp / "notaspool").mkdir()
        return [a.replace("TMP", str(tmp)) for a in argv]
    return make


def with_course(*argv: str) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        shutil.copytree(EXAMPLES / "bigsum", tmp / "pkg")
        course_check(tmp, tmp / "pkg")
        return [a.replace("TMP", str(tmp)) for a in argv]
    return make


# -- the table -----------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One malformed input: ``make`` lays it out under the test's directory and gives
    the command line; the output must hold every one of ``says``; ``absent`` must still
    not exist afterwards (relative to the directory), ``made`` may appear."""

    id: str
    make: Callable[[Path], list[str]]
    says: tuple[str, ...]
    absent: tuple[str, ...] = ()
    made: tuple[str, ...] = ()


def checked(make_pkg: Callable[[Path], Path]) -> Callable[[Path], list[str]]:
    return lambda tmp: course_check(tmp, make_pkg(tmp))


def _file(path: Path, argv: list[str]) -> list[str]:
    path.write_text("x\n")
    return argv


def _no_run(files: dict[str, bytes]) -> dict[str, bytes]:
    return {k: v for k, v in files.items() if k != "run_autograder"}


def _folder(files: dict[str, bytes]) -> dict[str, bytes]:
    return {f"hw1/{k}": v for k, v in files.items()}


def _crlf_run(files: dict[str, bytes]) -> dict[str, bytes]:
    return {**files, "run_autograder": crlf(files["run_autograder"])}


CASES = [
    # packages: every test's pair complete
    Case("ans-without-in-legacy", checked(kattis("bigsum", write(
        "data/secret/small/05.ans", "1\n"))),
        ("data/secret/small/05.ans", "has no matching .in file (05.in)", "add the input")),
    Case("ans-without-in-sample", checked(kattis("bigsum", write("data/sample/3.ans", "1\n"))),
         ("data/sample/3.ans", "has no matching .in file (3.in)")),
    Case("ans-without-in-2025-09", checked(kattis("parts", write(
        "data/secret/hard/9.ans", "1\n"))),
        ("data/secret/hard/9.ans", "has no matching .in file (9.in)")),
    Case("in-without-ans", checked(kattis("bigsum", lambda p: (
        p / "data/secret/large/02.ans").unlink())),
        ("data/secret/large/02.in", "has no matching .ans file (02.ans)")),
    # an autograder zip
    Case("zip-corrupt", checked(truncated), ("autograder.zip", "not a zip archive")),
    Case("zip-without-run-autograder", checked(lambda t: zipped(t, _no_run)),
         ("autograder.zip", "no run_autograder at its root")),
    Case("zip-of-the-folder", checked(lambda t: zipped(t, _folder)),
         ("autograder.zip", "they are in hw1/: zip the files, not the folder")),
    Case("zip-member-damaged", checked(bad_crc),
         ("autograder.zip", "corrupt", "run_tests.py", "make the zip again")),
    Case("zip-run-autograder-crlf", checked(lambda t: zipped(t, _crlf_run)),
         ("autograder.zip", "run_autograder has Windows line endings", "dos2unix")),
    # an autograder directory
    Case("dir-setup-crlf", checked(in_dir(lambda a: (a / "setup.sh").write_bytes(
        crlf((a / "setup.sh").read_bytes())))),
        ("autograder", "setup.sh has Windows line endings")),
    Case("dir-run-autograder-empty", checked(in_dir(lambda a: (
        a / "run_autograder").write_text(""))), ("run_autograder is empty",)),
    Case("dir-without-run-autograder", checked(in_dir(lambda a: (
        a / "run_autograder").unlink())), ("autograder", "no run_autograder at its root")),
    # paths: a spool that is not there is refused, never made
    Case("status-spool-missing", spool_cmd("status", "--spool", "TMP/spol"),
         ("spool TMP/spol: no such directory", "nothing was created"), absent=("spol",)),
    Case("status-spool-not-a-spool", spool_cmd("status", "--spool", "TMP/notaspool"),
         ("notaspool: not a spool",), absent=("notaspool/new",)),
    Case("watch-spool-missing", spool_cmd("status", "--once", "--spool", "TMP/spol"),
         ("spool TMP/spol: no such directory",), absent=("spol",)),
    Case("run-spool-missing", spool_cmd("run", "--spool", "TMP/spol"),
         ("spool TMP/spol: no such directory",), absent=("spol",)),
    Case("regrade-spool-missing", spool_cmd("regrade", "--assignment", "bigsum", "--spool",
                                            "TMP/spol"),
         ("spool TMP/spol: no such directory",), absent=("spol",)),
    Case("deadline-spool-missing", with_course("deadline", "a", "--course-file",
                                               "TMP/course.yaml", "--spool", "TMP/spol"),
         ("spool TMP/spol: no such directory",), absent=("spol",)),
    Case("trace-capture-spool-missing", spool_cmd("trace", "capture", "--spool", "TMP/spol",
                                                  "-o", "TMP/run.csv"),
         ("spool TMP/spol: no such directory",), absent=("spol", "run.csv")),
    # examples DEST: nothing a person wrote is overwritten or deleted
    Case("examples-edited-course-file", examples_into(
        lambda d: (d / "course.yaml").write_text("course: mine\n")),
        ("course.yaml: differs from the bundled one", "nothing was written")),
    Case("examples-file-added", examples_into(lambda d: (d / "bigsum" / "notes.txt")
                                              .write_text("mine\n")),
         ("bigsum: notes.txt is not in the bundled package",)),
    Case("examples-file-removed", examples_into(lambda d: (d / "meanstd" / "problem.yaml")
                                                .unlink()),
         ("meanstd: problem.yaml was removed",)),
    Case("examples-dest-is-a-file", lambda t: _file(t / "f", ["examples", str(t / "f")]),
         ("f: not a directory",)),
    # lti serve: the course files lti.yaml names, read at start
    Case("lti-course-file-missing", lti(None),
         ("lti.yaml: platform https://lms.example.edu: course_file",
          "cs101/course.yaml: no such file", "the tool was not started"), made=("lti-keys",)),
    Case("lti-course-file-broken", lti("- not\n- a course\n"),
         ("lti.yaml: platform https://lms.example.edu:", "cs101/course.yaml",
          "the tool was not started"), made=("lti-keys",)),
]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        code = cli.main(argv)
    except SystemExit as e:
        code = int(e.code or 0)
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_refused_naming_its_place_and_loses_nothing(
        case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GRADELINE_SPOOL", raising=False)
    argv = case.make(tmp_path)
    capsys.readouterr()
    before = file_tree(tmp_path)
    code, text = _run(argv, capsys)
    assert code != 0, text
    for said in case.says:
        assert said.replace("TMP", str(tmp_path)) in text, (said, text)
    assert "Traceback" not in text and "internal error" not in text, text
    after = file_tree(tmp_path)
    new = {k for k in set(after) - set(before)
           if not any(k == m or k.startswith(m + "/") for m in case.made)}
    assert not new, new
    assert {k: v for k, v in after.items() if k in before} == before
    for rel in case.absent:
        assert not (tmp_path / rel).exists(), rel


# -- what is accepted, and why -------------------------------------------------------


def test_a_run_autograder_without_its_execute_bit_loads(tmp_path: Path) -> None:
    """Gradeline runs run_autograder as Gradescope does, whatever mode the zip kept:
    Otter's own zips keep 0600, and a zip made on Windows keeps none."""
    for mode in (0o600, 0):
        shutil.rmtree(tmp_path, ignore_errors=True)
        tmp_path.mkdir()
        pkg = zipped(tmp_path, lambda f: f, mode=mode)
        verify_package(load_problem(pkg))


def test_examples_into_the_same_copy_again_keeps_it_and_completes_a_partial_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dest = tmp_path / "course"
    assert cli.main(["examples", str(dest)]) == 0
    (dest / "bigsum" / ".timelimit").write_text("2\n")  # what check records: its own
    shutil.rmtree(dest / "spread")
    before = file_tree(dest)
    assert cli.main(["examples", str(dest)]) == 0
    after = file_tree(dest)
    assert {k: v for k, v in after.items() if k in before} == before
    assert "spread/problem.yaml" in after
    assert f"{dest}/spread" in capsys.readouterr().out


def test_a_spool_is_made_by_what_hands_in_and_said(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]
                                                   ) -> None:
    spool = tmp_path / "spool"
    assert cli.main(["corpus", str(tmp_path / "c"), "--count", "2",
                     "--submit-to", str(spool)]) == 0
    assert f"made a new spool at {spool}" in capsys.readouterr().err
    assert (spool / "new").is_dir() and spool.stat().st_mode & 0o777 == 0o700
    assert cli.main(["status", "--spool", str(spool)]) == 0


# -- generated: every file of a package mutated --------------------------------------

MUTATIONS: dict[str, Callable[[Path], None]] = {
    "deleted": lambda p: p.unlink(),
    "emptied": lambda p: p.write_bytes(b""),
    "garbage": lambda p: p.write_bytes(b"\xff\xfe\x00\x81garbage: [\r\n"),
    "yaml": lambda p: p.write_text("key: [1, 2\n  - {a: b\n"),
}


@pytest.mark.parametrize("name", ["bigsum", "subtasks", "parts", "wordfreq"])
def test_every_file_of_a_package_mutated_loads_or_is_refused_by_name(
        tmp_path: Path, name: str) -> None:
    pkg = package(tmp_path, name)
    files = sorted(p for p in pkg.rglob("*") if p.is_symlink() or p.is_file())
    assert len(files) >= 8
    refused = 0
    for f in files:
        link = f.readlink() if f.is_symlink() else None
        data = None if link else f.read_bytes()
        for how, mutate in MUTATIONS.items():
            if link:
                f.unlink()
                f.write_bytes(b"")  # a file where the link was, then mutated
            mutate(f)
            before = file_tree(pkg)
            try:
                verify_package(load_problem(pkg, require_time_limit=False))
            except GradelineError as e:
                refused += 1
                assert "pkg" in str(e), (f, how, e)
            assert file_tree(pkg) == before, (f, how)  # reading it changed nothing
            if f.exists() or f.is_symlink():
                f.unlink()
            if link:
                f.symlink_to(link)
            else:
                assert data is not None
                f.write_bytes(data)
    assert refused  # the tier finds defects, not only harmless edits
    load_problem(pkg, require_time_limit=False)  # restored: loads again


def test_zip_helpers_make_what_the_cases_say(tmp_path: Path) -> None:
    """The table's zips are what they claim: the good one grades as its directory
    (loads), the stored one holds run_tests.py uncompressed."""
    pkg = zipped(tmp_path, lambda f: f, method=zipfile.ZIP_STORED)
    with zipfile.ZipFile(pkg / "autograder.zip") as z:
        assert {"setup.sh", "run_autograder", "run_tests.py"} <= set(z.namelist())
        assert z.getinfo("run_tests.py").compress_type == zipfile.ZIP_STORED
        assert z.testzip() is None
    verify_package(load_problem(pkg))
