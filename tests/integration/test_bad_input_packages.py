"""Bad packages that only the grading image tells apart: an output validator that does
not compile is refused by ``check`` and ``course check`` with the compiler's message
before anything is graded (not a judge error for every submission), and a zipped
autograder folder is refused by ``check`` with its remedy; the package is unchanged.
(The cases that need no image: tests/unit/test_bad_input_packages.py.)"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ..support import EXAMPLES, file_tree, files_of, gl, zip_of

pytestmark = [pytest.mark.sandbox]


def test_a_validator_that_does_not_compile_is_refused_before_any_grading(
        tmp_path: Path, sandbox_factory: object) -> None:
    pkg = tmp_path / "spread"
    shutil.copytree(EXAMPLES / "spread", pkg)
    vdir = pkg / "output_validators" / "spread_validator"
    shutil.rmtree(vdir)
    vdir.mkdir()
    (vdir / "validate.c").write_text("#include <stdio.h>\nint main( { return 42; }\n")
    (tmp_path / "course.yaml").write_text(
        "course: c\ntimezone: UTC\nassignments:\n"
        "  - {name: a, package: spread, deadline: '2026-12-01 23:59'}\n")
    before = file_tree(tmp_path)
    r = gl("check", str(pkg), "--no-record")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "ERROR     spread: output validator of spread does not compile: validate.c:2" \
        in r.stdout
    assert ", got " not in r.stdout and "0 submissions checked" in r.stdout  # none graded
    r = gl("course", "check", "--course-file", str(tmp_path / "course.yaml"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "a: output validator of spread does not compile: validate.c:2" in r.stdout
    for out in (r.stdout, r.stderr):
        assert "Traceback" not in out and "internal error" not in out
    assert file_tree(tmp_path) == before


def test_check_refuses_a_zipped_folder_naming_the_remedy(tmp_path: Path,
                                                         sandbox_factory: object) -> None:
    pkg = tmp_path / "wordfreq"
    shutil.copytree(EXAMPLES / "wordfreq", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    files = files_of(pkg / "autograder", prefix="wordfreq/")
    zip_of(pkg / "autograder.zip", files)
    shutil.rmtree(pkg / "autograder")
    gl_yaml = pkg / "gradeline.yaml"
    gl_yaml.write_text(gl_yaml.read_text().replace("autograder: autograder ",
                                                   "autograder: autograder.zip"))
    before = file_tree(tmp_path)
    r = gl("check", str(pkg), "--no-record")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "autograder.zip: no setup.sh and no run_autograder at its root; they are in " \
        "wordfreq/: zip the files, not the folder" in r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert file_tree(tmp_path) == before
