"""An output validator's exit code and feedback files as a judgement."""

from pathlib import Path

from grader.core.limits import Limits
from grader.core.runmeta import RunMeta
from grader.judge.kattis_validators import judgement


def test_a_score_file_beside_a_reject_is_an_error_only_in_newer_formats(tmp_path: Path) -> None:
    """2025-09 calls a reject that writes score.txt a judge error; the legacy format has
    no such rule, and DOMjudge's legacy scoring examples write one with every reject."""
    fb = tmp_path / "feedback"
    fb.mkdir()
    (fb / "score.txt").write_text("0.00\n")
    (fb / "judgemessage.txt").write_text("Weight 12 exceeds capacity 10\n")
    reject = RunMeta(exit_code=43, signal=None, cpu_time_s=0.01, wall_time_s=0.02)
    args = (reject, fb, tmp_path / "v.out", tmp_path / "v.err", Limits(cpu_time_s=1))
    new = judgement(*args)
    assert new.accepted is None and "wrote a score file" in str(new.judge_error)
    old = judgement(*args, legacy=True)
    assert old.accepted is False and "exceeds capacity" in old.feedback
