import signal

import pytest

from grader.core.runmeta import RunMeta, TerminationReason
from grader.core.verdict import Validation, Verdict, determine_verdict, submission_verdict


def meta(exit_code=0, sig=None, term=None):
    return RunMeta(exit_code=exit_code, signal=sig, cpu_time_s=0.1, wall_time_s=0.2,
                   termination=term)


OK = Validation(True)
BAD = Validation(False, "x")


@pytest.mark.parametrize(("m", "v", "want"), [
    (meta(), OK, Verdict.AC),
    (meta(), BAD, Verdict.WA),
    (meta(), None, Verdict.JE),
    (meta(), Validation(None, judge_error="validator crashed"), Verdict.JE),
    (meta(exit_code=1), None, Verdict.RE),
    (meta(exit_code=None, sig=signal.SIGSEGV), None, Verdict.RE),
    (meta(term=TerminationReason.CPU_TIME), OK, Verdict.TLE),
    (meta(term=TerminationReason.WALL_TIME, sig=9, exit_code=None), None, Verdict.TLE),
    (meta(term=TerminationReason.MEMORY, sig=9, exit_code=None), None, Verdict.MLE),
    (meta(term=TerminationReason.OUTPUT, sig=signal.SIGXFSZ, exit_code=None), None, Verdict.OLE),
])
def test_determine_verdict(m, v, want):
    assert determine_verdict(m, v) is want


def test_limits_take_precedence_over_a_wrong_answer():
    # A run that was slow *and* wrong is TLE: limits are checked first.
    assert determine_verdict(meta(term=TerminationReason.CPU_TIME), BAD) is Verdict.TLE


@pytest.mark.parametrize(("tests", "want"), [
    ([Verdict.AC, Verdict.AC], Verdict.AC),
    ([Verdict.AC, Verdict.WA, Verdict.TLE], Verdict.WA),   # first failure in test order
    ([Verdict.TLE, Verdict.WA], Verdict.TLE),
    ([Verdict.WA, Verdict.JE], Verdict.JE),                # our fault wins: never charged
    ([], Verdict.JE),
])
def test_submission_verdict(tests, want):
    assert submission_verdict(tests) is want


def test_compile_error():
    assert submission_verdict([], compiled=False) is Verdict.CE


def test_meta_text_round_trip_ignores_unknown_keys():
    m = RunMeta(exit_code=None, signal=9, cpu_time_s=1.5, wall_time_s=3.0, memory_bytes=123,
                stdout_bytes=7, termination=TerminationReason.WALL_TIME, message="a\nb")
    text = m.to_text() + "future-key: 1\n"
    back = RunMeta.from_text(text)
    assert back.signal == 9 and back.exit_code is None
    assert back.termination is TerminationReason.WALL_TIME
    assert back.memory_bytes == 123 and back.message == "a b"
    assert "exit-code" not in m.to_text()  # not measured: absent, not "None"


def test_meta_missing_required_key():
    with pytest.raises(ValueError, match="cpu_time_s"):
        RunMeta.from_text("wall-time-s: 1\n")


def test_a_group_stopped_at_a_rejection_scores_the_tests_it_skipped_as_failed():
    """on_reject: break leaves a group's tests after its first rejection unrun: they
    count as failed; a group that is short of tests without a rejection is incomplete."""
    from pathlib import Path

    from grader.core.result import TestResult
    from grader.formats.problem import TestCase, TestGroup
    from grader.formats.scoring import score_group

    cases = tuple(TestCase(f"g/{i}", "g", Path(f"{i}.in"), Path(f"{i}.ans")) for i in range(4))
    prop = TestGroup("g", 40.0, "proportional", (), cases, on_reject="break")
    aon = TestGroup("g", 40.0, "all_or_nothing", (), cases, on_reject="break")
    ran = [TestResult("g/0", "g", Verdict.AC), TestResult("g/1", "g", Verdict.TLE)]
    g = score_group(prop, ran)
    assert (g.score, g.passed, g.total, g.verdict) == (10.0, 1, 4, Verdict.TLE)
    assert score_group(aon, ran).score == 0.0
    short = [TestResult("g/0", "g", Verdict.AC), TestResult("g/1", "g", Verdict.AC)]
    assert score_group(prop, short).score == 0.0  # incomplete, not stopped
