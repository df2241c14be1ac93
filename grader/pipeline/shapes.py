"""Which shape (``core.shape``) each job of a batch is graded on, read once per
package, so that every executor places a batch's jobs by it: the local one on
workers of that many CPUs, Slurm on pilots or array tasks of that size."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from grader.core.errors import GradelineError
from grader.core.jobs import GradingJob
from grader.core.shape import SERIAL, Shape
from grader.formats.load import load_problem


def by_shape(jobs: Iterable[GradingJob]) -> dict[Shape, list[GradingJob]]:
    """``jobs`` grouped by their package's shape (serial where a package cannot be read:
    the judge then says why), each group in the batch's order, the serial one first.
    Packages are read once per call: one fixed between two batches is read again."""
    seen: dict[Path, Shape] = {}
    out: dict[Shape, list[GradingJob]] = {}
    for job in jobs:
        shape = seen.get(job.problem)
        if shape is None:
            try:
                shape = load_problem(job.problem, require_time_limit=False).shape
            except GradelineError:
                shape = SERIAL
            seen[job.problem] = shape
        out.setdefault(shape, []).append(job)
    return dict(sorted(out.items(), key=lambda kv: (not kv[0].serial, kv[0].key)))
