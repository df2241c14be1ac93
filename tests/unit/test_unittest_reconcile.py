"""A unit-test run's report held to the tests the reference submission's run named."""
from grader.core.result import TestResult
from grader.core.runmeta import RunMeta
from grader.core.verdict import Verdict
from grader.judge.unittests import WHOLE, Run, reconcile

META = RunMeta(exit_code=1, signal=None, cpu_time_s=0.1, wall_time_s=0.1)
G = "gradescope/visible"


def _run(*tests, judge_error=""):
    return Run("visible", META, "", tuple(tests), judge_error)


def test_missing_tests_did_not_run_and_strays_earn_nothing():
    r = reconcile(_run(TestResult("a", G, Verdict.AC, points=1.0),
                       TestResult("mod", G, Verdict.RE, feedback="ImportError: x"),
                       TestResult("forged", G, Verdict.AC, points=1.0)),
                  frozenset({"a", "b"}))
    assert [(t.name, t.verdict) for t in r.tests] == [("a", Verdict.AC), ("b", Verdict.RE)]
    assert r.tests[1].feedback == ("this test is not in the report: it did not run "
                                   "(mod: ImportError: x)")
    assert r.tests[1].points == 0.0


def test_a_run_that_stopped_or_a_judge_error_is_left_as_it_is():
    stopped = _run(TestResult(WHOLE["visible"], G, Verdict.TLE))
    assert reconcile(stopped, frozenset({"a"})) == stopped
    je = _run(judge_error="JUnit report is not XML")
    assert reconcile(je, frozenset({"a"})) == je


def test_an_unreadable_accepted_submission_leaves_reports_unchecked(tmp_path):
    """A reference that cannot be read is no reference (logged), never a crash."""
    import shutil

    from grader.formats.load import load_problem
    from grader.judge.unittests import expected_tests, reference_submission

    from ..support import EXAMPLES
    root = tmp_path / "stats"
    shutil.copytree(EXAMPLES / "stats", root)
    accepted = root / "submissions" / "accepted"
    shutil.rmtree(accepted)
    accepted.mkdir()
    (accepted / "a.py").symlink_to("/etc/hostname")
    problem = load_problem(root)
    assert reference_submission(problem) == accepted / "a.py"
    assert expected_tests(problem, None, [0], tmp_path) is None  # the sandbox is not used
