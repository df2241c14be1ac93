"""Unit-test assignments (type unittest): the course's pytest tests run in the sandbox
once per visibility and their JUnit report becomes the result; hidden tests are absent
from the visible run, the staff's tests cannot be changed or replaced by a submission,
and a report the tests did not write is a judge error with the reason."""
import shutil
import time
from pathlib import Path

import pytest
import yaml

from grader.core.verdict import Verdict
from grader.formats.load import load_problem

from ..support import EXAMPLES, own_sleep, sleeping

pytestmark = pytest.mark.sandbox
ACCEPTED = (EXAMPLES / "stats/submissions/accepted/stats.py").read_text()


def _package(tmp_path: Path, **changes) -> Path:
    root = tmp_path / f"stats-{len(list(tmp_path.iterdir()))}"
    shutil.copytree(EXAMPLES / "stats", root)
    gl = yaml.safe_load((root / "gradeline.yaml").read_text())
    gl.update(changes)
    (root / "gradeline.yaml").write_text(yaml.safe_dump(gl))
    return root


def _submit(tmp_path: Path, text: str, name: str = "stats.py") -> Path:
    d = tmp_path / f"sub-{len(list(tmp_path.iterdir()))}"
    d.mkdir()
    (d / name).write_text(text)
    return d / name


def test_the_tests_give_each_test_its_points_and_visibility(judge, tmp_path):
    root = _package(tmp_path)
    r = judge.grade(load_problem(root), root / "submissions/wrong_answer/stats.py")
    assert (r.verdict, r.score, r.max_score) == (Verdict.WA, 6, 10), r.message
    failed = {t.name: t.group for t in r.tests if t.verdict is not Verdict.AC}
    assert failed == {"tests.test_hidden_stats.test_mode_prefers_the_smallest_of_ties":
                      "gradescope/hidden",
                      "tests.test_hidden_stats.test_median_does_not_reorder_its_input":
                      "gradescope/hidden"}
    groups = {g.name: (g.passed, g.total, g.score, g.points) for g in r.groups}
    assert groups["gradescope/visible"] == (4, 4, 4, 4)
    assert groups["gradescope/hidden"] == (1, 3, 2, 6)
    assert r.runtime["autograder"] == "unittest"


def test_a_visible_phase_runs_only_the_visible_tests(judge, tmp_path):
    """The hidden tests' source is not in the run a student sees results of: a
    submission that breaks once it can see them passes the visible phase and loses the
    hidden test of mean in the full grading."""
    spy = ACCEPTED.replace("def mean(xs):", "import os\nSEES = os.path.exists("
                           "'tests' + '/test_hidden_stats.py')\ndef mean(xs):\n    if SEES:\n"
                           "        return -1")
    problem = load_problem(_package(tmp_path))
    r = judge.grade(problem.restricted(["gradescope/visible"]), _submit(tmp_path, spy))
    assert (r.verdict, r.score, r.max_score) == (Verdict.AC, 4, 4), r.message
    assert {t.group for t in r.tests} == {"gradescope/visible"}
    r = judge.grade(problem, _submit(tmp_path, spy))
    assert (r.verdict, r.score, r.max_score) == (Verdict.WA, 8, 10), r.message
    assert [t.name for t in r.tests if t.verdict is not Verdict.AC] == [
        "tests.test_hidden_stats.test_mean_of_a_long_list"]


def test_a_submission_cannot_change_or_replace_the_staff_tests(judge, tmp_path):
    root = _package(tmp_path)
    # writing over a staff test at import time: the tests are read-only
    overwrite = ACCEPTED.replace("def mean", "raise_ = 1\ndef mean").replace(
        "from collections import Counter",
        "from collections import Counter\ntry:\n    open('tests' + '/test_stats.py', 'w')"
        ".write('def test_x(): pass')\n    WROTE = True\nexcept OSError:\n"
        "    WROTE = False\n").replace("return sum(xs) / len(xs)",
                                      "return 0 if WROTE else sum(xs) / len(xs)")
    r = judge.grade(load_problem(root), _submit(tmp_path, overwrite))
    assert (r.verdict, r.score) == (Verdict.AC, 10), r.compile.output  # it could not write
    # a submission bringing its own tests/: the staff's are bound over them
    d = tmp_path / "own-tests"
    (d / "tests").mkdir(parents=True)
    (d / "stats.py").write_text("def mean(xs):\n    return 0\n")
    (d / "tests" / "test_stats.py").write_text("def test_all_good():\n    pass\n")
    r = judge.grade(load_problem(root), d)
    assert r.verdict is Verdict.RE and r.score == 0  # the staff's tests could not import
    assert "tests.test_all_good" not in {t.name for t in r.tests}
    assert (root / "tests" / "test_stats.py").read_text() == (
        EXAMPLES / "stats" / "tests" / "test_stats.py").read_text()


FORGE = '''
import atexit, os
REPORT = os.path.join(os.environ["GRADELINE_REPORTS"], "pytest.xml")
def _forge():
    {body}
atexit.register(_forge)
def mean(xs):
    raise ValueError("not done")
median = mode = mean
'''


@pytest.mark.parametrize("body,why", [
    # replaces pytest's report after it is written; pytest's exit status disagrees
    ("open(REPORT, 'w').write('<testsuite><testcase classname=\"tests.test_stats\" "
     "name=\"test_mean_of_integers\"/></testsuite>')",
     "says every test passed but the test command exited 1"),
    ("os.remove(REPORT); os.symlink('/etc/passwd', REPORT)", "is a link, not a file"),
    ("open(REPORT, 'w').write('<testsuite><testcase')", "JUnit report is not XML"),
    ("open(REPORT, 'w').write('<!DOCTYPE x [<!ENTITY a \"aaaa\">]><testsuite>&a;</testsuite>')",
     "JUnit report refused"),
    ("os.remove(REPORT); os._exit(0)", "left no JUnit report"),
])
def test_a_report_the_tests_did_not_write_is_a_judge_error(judge, tmp_path, body, why):
    r = judge.grade(load_problem(_package(tmp_path)),
                    _submit(tmp_path, FORGE.format(body=body)))
    assert (r.verdict, r.score) == (Verdict.JE, 0), (r.verdict, r.message)
    assert why in r.message, r.message


def test_no_report_from_a_command_that_succeeds_is_the_assignments_fault(judge, tmp_path):
    root = _package(tmp_path, command="python3 -m pytest -q -p no:cacheprovider tests")
    r = judge.grade(load_problem(root), root / "submissions/accepted/stats.py")
    assert r.verdict is Verdict.JE and "must write it there" in r.message


def test_hostile_submissions_end_in_a_verdict_and_leave_nothing(judge, tmp_path):
    root = _package(tmp_path, timeout_s=3, processes=64)
    t0 = time.monotonic()
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n" \
           "        pass\n"
    r = judge.grade(load_problem(root), _submit(tmp_path, bomb))
    assert r.verdict in (Verdict.TLE, Verdict.RE), r.message
    assert time.monotonic() - t0 < 60
    duration = own_sleep(321)
    sleeper = ACCEPTED + ("\nimport subprocess\nsubprocess.Popen(['setsid', 'sleep', "
                          f"'{duration}'])\n")
    r = judge.grade(load_problem(root), _submit(tmp_path, sleeper))
    assert r.verdict is Verdict.AC, r.message
    assert sleeping(duration) == []
    net = ACCEPTED.replace("def mean(xs):", "import socket\ndef mean(xs):\n    s = socket."
                           "socket(socket.AF_INET, socket.SOCK_DGRAM)\n    s.connect(("
                           "'192.0.2.1', 53))")
    r = judge.grade(load_problem(root), _submit(tmp_path, net))
    # no route out: mean's tests fail (pytest reports an exception in a test as a failure)
    assert r.verdict is Verdict.WA and r.score == 10 - 1 - 1 - 2
    assert all("Network is unreachable" in t.feedback for t in r.tests
               if t.verdict is not Verdict.AC), [t.feedback for t in r.tests]


def test_a_java_assignment_builds_with_its_tests_and_reads_junit5s_reports(judge, tmp_path):
    root = tmp_path / "intstack"
    shutil.copytree(EXAMPLES / "intstack", root)
    problem = load_problem(root)
    r = judge.grade(problem, root / "submissions/wrong_answer/IntStack.java")
    assert (r.verdict, r.score, r.max_score) == (Verdict.WA, 7, 9), r.message
    assert [t.name for t in r.tests if t.verdict is not Verdict.AC] == [
        "IntStackHiddenTest.peekOnEmptyThrows()"]
    r = judge.grade(problem, root / "submissions/compile_error/IntStack.java")
    assert r.verdict is Verdict.CE and "';' expected" in r.tests[0].feedback


def test_a_report_is_held_to_the_tests_the_accepted_submission_ran(judge, tmp_path):
    """A forged report naming a test of its own earns nothing for it, and the staff's
    tests it leaves out did not run; a module that fails to import leaves its tests
    out of pytest's report: each is RE with the import error."""
    root = _package(tmp_path)
    fake = ("open(REPORT, 'w').write('<testsuite><testcase classname=\"tests.test_stats\" "
            "name=\"test_i_made_up\"/></testsuite>'); os._exit(0)")
    r = judge.grade(load_problem(root), _submit(tmp_path, FORGE.format(body=fake)))
    assert (r.verdict, r.score) == (Verdict.RE, 0), (r.verdict, r.message)
    assert "tests.test_stats.test_i_made_up" not in {t.name for t in r.tests}
    assert len(r.tests) == 7 and all("not in the report" in t.feedback for t in r.tests)
    r = judge.grade(load_problem(root), root / "submissions/run_time_error/stats.py")
    assert (r.verdict, r.score, len(r.tests)) == (Verdict.RE, 0, 7), r.message
    assert all("missing_module" in t.feedback for t in r.tests), r.tests[0].feedback
