"""An autograder's setup.sh runs once, when its assignment's image is built (with the
network, as on Gradescope), never while grading: until the image is built its
submissions are judge errors saying what to run; a failing setup.sh names the command
it failed at; the built image is what every run of the assignment uses."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from grader.core.verdict import Verdict
from grader.formats.load import load_problem

from ..support import BIN, EXAMPLES

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
STATE = os.environ.get("GRADELINE_STATE_DIR", "/var/lib/gradeline")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN), "--state-dir", STATE, *args], capture_output=True,
                          text=True, timeout=1800, check=False)


@pytest.fixture(scope="module")
def built():
    if os.geteuid() != 0:
        pytest.skip("an assignment's image is built as root (its setup.sh installs packages)")
    r = cli("image", "build", "--assignment", str(EXAMPLES / "gsutils"))
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_setup_sh_installs_what_the_autograder_imports(built, judge):
    problem = load_problem(EXAMPLES / "gsutils")
    subs = EXAMPLES / "gsutils" / "submissions"
    r = judge.grade(problem, subs / "accepted")
    assert (r.verdict, r.score, r.max_score) == (Verdict.AC, 10, 10), r.message
    assert r.runtime["image"].startswith("grader-") and "+ag-" in r.runtime["image"]
    r = judge.grade(problem, subs / "wrong_answer")
    assert (r.verdict, r.score) == (Verdict.WA, 8)
    assert [t.name for t in r.tests if t.verdict is not Verdict.AC] == ["-40 F is -40 C"]
    assert {t.group for t in r.tests if t.name == "the mean of a week"} == \
        {"gradescope/after_deadline"}
    status = cli("image", "status", "--assignment", str(EXAMPLES / "gsutils"))
    assert status.returncode == 0 and "+ag-" in status.stdout, status.stdout
    check = cli("check", str(EXAMPLES / "gsutils"))
    assert "3 as expected, 0 mismatched" in check.stdout, check.stdout + check.stderr


def test_until_its_image_is_built_an_assignment_is_a_judge_error_saying_what_to_run(
        built, judge, tmp_path):
    root = tmp_path / "changed"
    shutil.copytree(EXAMPLES / "gsutils", root)
    (root / "autograder" / "NOTE").write_text(f"a change: {tmp_path}\n")  # a new digest
    r = judge.grade(load_problem(root), root / "submissions" / "accepted")
    assert r.verdict is Verdict.JE
    assert "not built: run 'gradeline image build --assignment PACKAGE'" in r.message


def test_a_failing_setup_names_the_command_it_failed_at(built, tmp_path):
    root = tmp_path / "broken"
    shutil.copytree(EXAMPLES / "gsutils", root)
    (root / "autograder" / "setup.sh").write_text(
        "#!/bin/bash\nset -e\necho preparing\nls /no/such/directory\necho never\n")
    r = cli("image", "build", "--assignment", str(root))
    assert r.returncode != 0
    assert "failed (exit 2) at: ls /no/such/directory" in r.stderr, r.stderr
    assert "preparing" in r.stderr and "never" not in r.stderr.split("at:")[1]
    assert "Traceback" not in r.stderr
    left = [p.name for p in Path(STATE, "images").iterdir() if p.name.startswith(".build-ag")]
    assert left == []  # the half-built image is gone


def test_what_setup_installs_under_root_is_usable_by_the_unprivileged_run(built, judge,
                                                                          tmp_path):
    # Gradescope runs run_autograder as root; gradeline as an unprivileged uid, and
    # Debian's /root is mode 700 (Otter-Grader installs its Miniforge there)
    root = tmp_path / "roothome"
    (root / "autograder").mkdir(parents=True)
    (root / "gradeline.yaml").write_text("type: gradescope\ntimeout_s: 30\n")
    (root / "autograder" / "setup.sh").write_text(
        "#!/bin/bash\nmkdir -p /root/tools\nprintf '#!/bin/sh\\necho 42\\n' > "
        "/root/tools/answer\nchmod 700 /root/tools /root/tools/answer\n")
    (root / "autograder" / "run_autograder").write_text(
        "#!/bin/bash\nv=$(/root/tools/answer)\n[ \"$v\" = 42 ] && s=1 || s=0\n"
        "echo \"{\\\"score\\\": $s, \\\"output\\\": \\\"got $v\\\"}\" "
        "> /autograder/results/results.json\n")
    (root / "sub").mkdir()
    (root / "sub" / "x.txt").write_text("x\n")
    r = cli("image", "build", "--assignment", str(root))
    assert r.returncode == 0, r.stdout + r.stderr
    res = judge.grade(load_problem(root), root / "sub")
    assert (res.verdict, res.score, res.message) == (Verdict.AC, 1, "got 42"), res
