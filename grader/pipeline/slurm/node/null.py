"""Grading that costs nothing, to measure the control plane alone.

``GRADELINE_NULL_GRADING=1`` (a benchmark's knob, like ``GRADELINE_FAULT`` a test's):
pilots and array tasks start no container and run nothing; every job is recorded AC
with no tests, no points and ``runtime.null_grading`` set, so what a run then measures
(``bench/control_plane.py``: spool -> serve -> tickets -> pilots -> PostgreSQL) is
everything gradeline adds around grading, and a stored result says how it was made.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from grader.core.errors import SubmissionError
from grader.core.jobs import GradingJob, JudgeFault, Outcome, now_iso
from grader.core.result import SubmissionResult
from grader.core.submission import load_submission
from grader.core.verdict import Verdict
from grader.pipeline.slurm.node.task import Grade
from grader.settings import SlurmTask


def null_result(job: GradingJob, slurm: SlurmTask) -> SubmissionResult:
    """An AC without tests for ``job`` (its content hash read, nothing run)."""
    sub = load_submission(job.source)
    return SubmissionResult(
        problem=job.problem.name, problem_version="null", submission=str(job.source),
        content_hash=sub.content_hash, language=job.language, verdict=Verdict.AC,
        score=0.0, max_score=0.0, compile=None, tests=(), groups=(),
        runtime={"null_grading": True, "slurm": slurm.record()}, graded_at=now_iso())


def null_grading(slurm: SlurmTask) -> Grade:
    """A ``Grade`` that records every job as above."""

    def grade(jobs: Iterable[GradingJob]) -> Iterator[Outcome]:
        for job in jobs:
            started = now_iso()
            try:
                result: SubmissionResult | JudgeFault = null_result(job, slurm)
            except SubmissionError as e:  # as the judge records an unreadable submission
                result = JudgeFault(str(e), cause="submission")
            yield Outcome(job.key, result, started, now_iso())

    return grade
