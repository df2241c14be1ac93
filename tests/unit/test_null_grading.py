"""Null grading (GRADELINE_NULL_GRADING=1, the control-plane benchmark's): nothing runs,
yet every job gets a stored-shaped result that says how it was made."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from grader.core.errors import ConfigError
from grader.core.jobs import GradingJob, JudgeFault
from grader.core.result import SubmissionResult
from grader.core.submission import load_submission
from grader.core.verdict import Verdict
from grader.pipeline.slurm.node.null import null_grading
from grader.settings import Settings, SlurmTask


def test_every_job_is_recorded_ac_without_tests_and_marked(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("print(1)\n")
    b.write_text("print(2)\n")
    slurm = SlurmTask(array_job_id="7", array_task_id="3", node="n1")
    out = list(null_grading(slurm)([GradingJob(tmp_path / "hello", a, "python3"),
                                    GradingJob(tmp_path / "hello", b)]))
    assert [o.key for o in out] == [str(a), str(b)]
    results = [o.result for o in out]
    assert all(isinstance(r, SubmissionResult) for r in results)
    r = results[0]
    assert isinstance(r, SubmissionResult)
    assert (r.verdict, r.score, r.tests, r.problem) == (Verdict.AC, 0.0, (), "hello")
    assert r.runtime["null_grading"] is True
    assert r.runtime["slurm"]["slurmd_nodename"] == "n1"
    assert r.content_hash == load_submission(a).content_hash
    assert isinstance(results[1], SubmissionResult)
    assert results[1].content_hash != r.content_hash  # each submission's own content


def test_an_unreadable_submission_is_the_submissions_fault(tmp_path: Path) -> None:
    link = tmp_path / "sub"
    link.mkdir()
    os.symlink("/etc/passwd", link / "a.py")
    [o] = null_grading(SlurmTask())([GradingJob(tmp_path / "hello", link)])
    assert isinstance(o.result, JudgeFault) and o.result.cause == "submission"


def test_the_knob_is_off_unless_set_on(tmp_path: Path) -> None:
    base = {"GRADELINE_STATE_DIR": str(tmp_path)}
    assert not Settings.from_env(base).null_grading
    assert not Settings.from_env({**base, "GRADELINE_NULL_GRADING": "0"}).null_grading
    assert Settings.from_env({**base, "GRADELINE_NULL_GRADING": "yes"}).null_grading
    assert Settings.from_env({**base, "GRADELINE_NULL_GRADING": "1"}).null_grading
    with pytest.raises(ConfigError, match="GRADELINE_NULL_GRADING='maybe': use 1 or 0"):
        Settings.from_env({**base, "GRADELINE_NULL_GRADING": "maybe"})
