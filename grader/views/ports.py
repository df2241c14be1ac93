"""What the read side asks of the results store: the queries of the desk, the staff
pages and the server's metrics, the writes a student's request makes (a receipt, a
choice, a token spent on a performance measurement), and grading by hand's (a
question's grade, a reveal of names). ``adapters.store.postgres.Store`` provides them;
the composition (``grader.compose``) hands the views an opener, so no view names a
concrete store."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol

from grader.core.finished import Finished
from grader.course.grade_changes import GradeChange
from grader.course.gradingpage import AuditEntry
from grader.course.gradingview import NewComment
from grader.course.handgrades import QuestionGrade
from grader.course.ondemand import Measured
from grader.course.policy import Attempt
from grader.course.regrades import Answer, Request
from grader.course.shown import Receipt
from grader.course.staffview import Detail, Row
from grader.course.studentview import Submitted
from grader.course.teams import Team, TeamEvent, Teams

#: what a change of the teams adds: new teams, then members' joins and leaves
TeamRows = tuple[Sequence[Team], Sequence[TeamEvent]]


class CourseReads(Protocol):
    """The store as the views use it (one connection, opened per request)."""

    def attempts(self, course: str) -> list[Attempt]:
        """Every attempt with both phases' scores and the student's choice."""
        ...

    def released(self, course: str, assignment: str) -> datetime | None:
        """When staff released an assignment's full results (None: not yet)."""
        ...

    def student_submissions(self, course: str, student: str) -> list[Submitted]:
        """One student's submissions with their results and receipts."""
        ...

    def rows(self, course: str, *, assignment: str | None = None,
             student: str | None = None) -> list[Row]:
        """Every submission of a course, an assignment or a student, current verdicts."""
        ...

    def detail(self, course: str, spool_id: str) -> Detail | None:
        """One submission with all its results (None: not this course's)."""
        ...

    def finished(self, course: str, since: datetime | None = None) -> list[Finished]:
        """The stamps of every finished submission since ``since``."""
        ...

    def handins(self, course: str, student: str, assignment: str
                ) -> list[tuple[str, datetime]]:
        """(spool id, when) of each hand-in of the assignment by the student."""
        ...

    def add_receipt(self, receipt: Receipt) -> None:
        """Keep a hand-in's signed receipt (idempotent on its submission id)."""
        ...

    def choose(self, course: str, assignment: str, student: str, spool_id: str, by: str
               ) -> None:
        """Record which submission counts for a student (``by`` who chose)."""
        ...

    def teams(self, course: str) -> Teams:
        """The course's teams and the log of their changes."""
        ...

    def change_teams(self, course: str, decide: Callable[[Teams], TeamRows]) -> TeamRows:
        """Keep what ``decide`` makes of the teams as they are (it raises to refuse),
        one change at a time."""
        ...

    def regrade_requests(self, course: str, *, student: str | None = None,
                         request: int | None = None) -> list[Request]:
        """Regrade requests with their answers (of one student, or one request)."""
        ...

    def open_request(self, course: str, student: str,
                     decide: Callable[[list[Request]], Request]) -> Request:
        """Keep the request ``decide`` makes of the student's requests so far."""
        ...

    def answer_request(self, course: str, request: int,
                       decide: Callable[[Request], tuple[Answer, GradeChange | None]]
                       ) -> tuple[Answer, GradeChange | None]:
        """Keep the answer ``decide`` makes of the request, once."""
        ...

    def grade_changes(self, course: str) -> list[GradeChange]:
        """Every change of a grade by hand, in order."""
        ...

    def add_grade_change(self, course: str, change: GradeChange) -> None:
        """Keep a change of a grade by hand."""
        ...

    def measurements(self, course: str, student: str) -> list[Measured]:
        """A student's requests for performance measurements, oldest first."""
        ...

    def add_measurement(self, course: str, assignment: str, student: str, spool_id: str,
                        at: datetime, tokens: int) -> int | None:
        """Spend the student's next token on a measurement of ``spool_id``: its number,
        or None when none of ``tokens`` is left."""
        ...

    def hand_grades(self, course: str, assignment: str | None = None,
                    student: str | None = None) -> dict[str, list[QuestionGrade]]:
        """assignment -> its grades by hand per student and question, with comments."""
        ...

    def save_question(self, course: str, assignment: str, student: str, question: str, *,
                      seen: int, items: Sequence[str], adjustment: float, reason: str,
                      spool_id: str | None, grader: str, comment: NewComment | None = None,
                      delete: Sequence[int] = (), rubric: tuple[str, object] | None = None
                      ) -> tuple[bool, QuestionGrade | None]:
        """Save a question's grade made from version ``seen``: (saved, as stored now);
        not saved (a conflict) when another save came first."""
        ...

    def grade_history(self, course: str, assignment: str, student: str, question: str
                      ) -> list[AuditEntry]:
        """Every change to a question's grade, and every save refused as a conflict."""
        ...

    def reveal_names(self, course: str, assignment: str, by: str, *, hide: bool = False
                     ) -> None:
        """Record that an instructor revealed (or hid again) an assignment's names."""
        ...

    def names_revealed(self, course: str, assignment: str) -> tuple[datetime, str] | None:
        """(when, by whom) an assignment's names were revealed, or None."""
        ...


#: a fresh connection to the store, closed when its ``with`` block ends
ReadsOpener = Callable[[], AbstractContextManager[CourseReads]]


class RunTotals(Protocol):
    """A server's counts over its batches (``pipeline.run.RunSummary``)."""

    graded: int
    reused: int
    quarantined: int
    stored: int
    verdicts: dict[str, dict[str, int]]


class ServeTotals(Protocol):
    """A server's batches (``pipeline.serve.ServeSummary``)."""

    failed_batches: int


class RunningServer(Protocol):
    """What the metrics read of a running server (``pipeline.serve.Server``)."""

    @property
    def in_flight(self) -> int:
        """Batches being graded now."""
        ...

    def totals(self) -> tuple[ServeTotals, RunTotals]:
        """Its batches and their counts so far."""
        ...


class Pilots(Protocol):
    """The pilot tasks a server keeps (``pipeline.slurm.submit.pool.PilotPool``)."""

    def live(self) -> int:
        """How many run or wait in Slurm now."""
        ...
