"""What the pipeline needs from the outside: a results store and an executor.

The command line plugs in PostgreSQL and the local or Slurm executor; the unit
tests plug in memory. Both are structural (Protocols): adapters do not import this.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from grader.core.jobs import GradingJob, Outcome
from grader.core.perfresult import Performance
from grader.core.record import SubmissionRecord
from grader.core.result import SubmissionResult
from grader.core.samples import ShardSample
from grader.course.ondemand import Measured, State
from grader.course.policy import Attempt
from grader.course.staffview import Row
from grader.course.teams import Teams


class ResultStore(Protocol):
    """Where finished records go; every write is idempotent on the record's keys."""

    def migrate(self) -> list[str]: ...

    def close(self) -> None: ...

    def alive(self) -> bool:
        """Whether the connection still answers (checked before a pooled one is lent)."""
        ...

    def ingest(self, records: Iterable[SubmissionRecord]) -> int:
        """Store records; returns how many results were new."""
        ...

    def ingest_metrics(self, batch_id: str, samples: Iterable[ShardSample]) -> int: ...

    def stored_spool_ids(self, spool_ids: Iterable[str]) -> set[str]:
        """Which of these already have a current result (or are quarantined)."""
        ...

    def reusable(self, version: str, content_hash: str) -> tuple[str, SubmissionResult] | None:
        """A stored result for identical content of the same assignment version."""
        ...

    def outdated(self, course: str, assignment: str, version: str) -> list[str]:
        """Spool ids whose current result is for another assignment version."""
        ...

    def status(self, course: str) -> list[tuple[str, str, int]]:
        """(assignment, verdict or state, count) rows."""
        ...

    def attempts(self, course: str) -> list[Attempt]:
        """Every graded submission with its visible-phase and full-suite scores."""
        ...


class CourseRows(Protocol):
    """What a similarity report reads to pick each student's submission."""

    def rows(self, course: str, *, assignment: str | None = None,
             student: str | None = None) -> list[Row]:
        """Every submission of a course (or an assignment), oldest first."""
        ...

    def attempts(self, course: str) -> list[Attempt]:
        """Every graded submission with its visible-phase and full-suite scores."""
        ...

    def teams(self, course: str) -> Teams:
        """The course's teams and the log of their changes (``course.teams``)."""
        ...


class RegradeStore(ResultStore, CourseRows, Protocol):
    """What a regrade reads besides the results: the submissions a judge error ended."""

    def judge_errors(self, course: str, assignment: str, version: str) -> list[str]:
        """Spool ids whose current result for ``version`` is a judge error."""
        ...


class MeasurementStore(ResultStore, Protocol):
    """What measuring on demand reads and keeps (``pipeline.ondemand``)."""

    def waiting_measurements(self, course: str) -> list[Measured]:
        """The course's requests not measured yet, oldest first."""
        ...

    def finish_measurement(self, measurement_id: int, state: State,
                           performance: Performance | None = None, reason: str = "") -> None:
        """Keep what a request's measurement gave (``refunded``: its token back)."""
        ...


class Executor(Protocol):
    """Where grading jobs run: this machine's CPUs, or a Slurm array."""

    def run(self, jobs: Sequence[GradingJob]) -> Iterator[Outcome]:
        """Grade the jobs; yields each outcome as it lands (one per job, always)."""
        ...

    def collected(self) -> Iterator[Outcome]:
        """Outcomes an interrupted earlier run left behind for this batch."""
        ...

    def wait_active(self) -> None:
        """Wait for work an interrupted earlier run left running."""
        ...

    def samples(self) -> list[ShardSample]:
        """Counter samples its tasks recorded (empty where nothing was counted)."""
        ...


#: A batch directory -> the executor that grades that batch.
ExecutorFactory = Callable[[Path], Executor]


@runtime_checkable
class Prestart(Protocol):
    """An executor factory whose workers take long to start (Slurm pilots): told as
    soon as a batch's size is known, it starts them while intake still runs."""

    def expect(self, jobs: int) -> None:
        """About ``jobs`` submissions will be graded shortly."""
        ...
#: Opens the store (raises StoreError when it is unreachable).
StoreOpener = Callable[[], ResultStore]
