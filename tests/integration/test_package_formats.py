"""The package format's other kinds, graded for real: interactive and multi-pass
problems, legacy and 2025-09 scoring, every language gradeline grades, a time limit
derived by ``gradeline check`` -- and a broken package, which ends in a reason."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from ..support import EXAMPLES, gl

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


@pytest.mark.parametrize("name", ["guess", "codec", "subtasks", "parts"])
def test_format_examples_check(name: str, sandbox_factory: object) -> None:
    r = gl("check", str(EXAMPLES / name))
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    assert "MISMATCH" not in r.stdout and "0 mismatched" in r.stdout


def test_interactive_verdicts_and_the_submissions_own_time(sandbox_factory: object) -> None:
    pkg = EXAMPLES / "guess"
    r = gl("grade", str(pkg), str(pkg / "submissions/accepted/binary.py"), "--json")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["verdict"] == "AC"
    # the submission's CPU time is its own (a few dozen ms), not the interactor's too
    assert all(0 <= t["cpu_time_s"] < 0.5 for t in res["tests"])
    assert any("found" in t["feedback"] for t in res["tests"])
    r = gl("grade", str(pkg), str(pkg / "submissions/time_limit_exceeded/silent.py"), "--json")
    res = json.loads(r.stdout)
    assert res["verdict"] == "TLE" and res["tests"][0]["termination"] == "wall-time"


def test_multi_pass_runs_every_pass(sandbox_factory: object) -> None:
    pkg = EXAMPLES / "codec"
    res = json.loads(gl("grade", str(pkg), str(pkg / "submissions/accepted/codes.py"),
                        "--json").stdout)
    assert res["verdict"] == "AC"
    res = json.loads(gl("grade", str(pkg), str(pkg / "submissions/wrong_answer/forgets.py"),
                        "--json").stdout)
    wrong = next(t for t in res["tests"] if t["verdict"] == "WA")
    assert "pass 2" in wrong["feedback"]  # only the second pass can tell


def test_scoring_is_explained_per_group(sandbox_factory: object) -> None:
    pkg = EXAMPLES / "parts"
    res = json.loads(gl("grade", str(pkg), str(pkg / "submissions/partial/single.py"),
                        "--json").stdout)
    groups = {g["name"]: g for g in res["groups"]}
    assert groups["secret/easy"]["score"] == 30 and "pass-fail" in groups["secret/easy"]["scoring"]
    assert 0 < groups["secret/hard"]["score"] < 2 and "sum" in groups["secret/hard"]["scoring"]
    assert res["max_score"] == 100 and 30 < res["score"] < 32
    legacy = EXAMPLES / "subtasks"
    res = json.loads(gl("grade", str(legacy),
                        str(legacy / "submissions/partially_accepted/int32.cpp"),
                        "--json").stdout)
    assert res["verdict"] == "AC" and res["score"] == 30  # subtask 1 only


def test_time_limit_derived_from_the_accepted_submissions(tmp_path: Path,
                                                          sandbox_factory: object) -> None:
    pkg = tmp_path / "codec"
    shutil.copytree(EXAMPLES / "codec", pkg)
    text = (pkg / "problem.yaml").read_text().replace("  time_limit: 1\n", "")
    (pkg / "problem.yaml").write_text(text)
    sub = str(pkg / "submissions/accepted/codes.py")
    r = gl("grade", str(pkg), sub)
    assert r.returncode == 2 and "run `gradeline check`" in r.stderr
    r = gl("check", str(pkg), "--cpus", str(min(os.sched_getaffinity(0))))
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "codec: time limit" in r.stdout and "recorded in" in r.stdout
    limit = float((pkg / ".timelimit").read_text())
    assert limit >= 1.0 and limit == int(limit)  # a multiple of the 1 s resolution
    res = json.loads(gl("grade", str(pkg), sub, "--json").stdout)
    assert res["verdict"] == "AC"


def test_a_broken_package_is_a_reason_not_a_traceback(tmp_path: Path,
                                                      sandbox_factory: object) -> None:
    pkg = tmp_path / "subtasks"
    shutil.copytree(EXAMPLES / "subtasks", pkg, symlinks=True)
    link = pkg / "data/secret/g2/01.in"
    link.unlink()
    link.symlink_to("../../../../outside.in")
    r = gl("grade", str(pkg), str(pkg / "submissions/accepted/kadane.py"))
    assert r.returncode == 2
    assert "01.in: is a symbolic link" in r.stderr and "Traceback" not in r.stderr


def _closing_interactor(pkg: Path) -> None:
    """An interactive problem whose interactor writes the numbers, closes its output
    and only then reads the submission's answer: the submission reads to end of input."""
    (pkg / "data/secret").mkdir(parents=True)
    (pkg / "output_validator").mkdir()
    (pkg / "problem.yaml").write_text(
        "problem_format_version: 2025-09\nname: Sum to the end\ntype: interactive\n"
        "uuid: 0b1c2d3e-0000-4000-8000-00000000e0f0\nlimits:\n  time_limit: 2\n")
    (pkg / "data/secret/1.in").write_text("3 4 5\n")
    (pkg / "data/secret/1.ans").write_text("12\n")
    (pkg / "output_validator/validator.py").write_text(
        "import os, sys\n"
        "nums = open(sys.argv[1]).read().split()\n"
        "sys.stdout.write(' '.join(nums) + '\\n')\n"
        "sys.stdout.flush()\n"
        "os.close(1)  # the submission sees end of input here\n"
        "got = sys.stdin.readline().strip()\n"
        "ok = got == str(sum(map(int, nums)))\n"
        "open(sys.argv[3] + 'judgemessage.txt', 'w').write(f'answer {got!r}')\n"
        "sys.exit(42 if ok else 43)\n")


def test_an_interactor_closing_its_output_is_end_of_input(tmp_path: Path,
                                                         sandbox_factory: object) -> None:
    pkg = tmp_path / "sumtoend"
    _closing_interactor(pkg)
    sub = tmp_path / "sum.py"
    sub.write_text("import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))\n")
    r = gl("grade", str(pkg), str(sub), "--json")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    res = json.loads(r.stdout)
    assert res["verdict"] == "AC", res["tests"]
    assert res["tests"][0]["termination"] is None, res["tests"]  # not ended by the clock
