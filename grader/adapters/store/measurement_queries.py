"""The store's queries for performance measured on demand (``course.ondemand``): a
request taken (its token spent, at most the assignment's tokens, never one twice), a
student's requests, the waiting ones and what each gave. A mixin of ``Store`` like
``CourseQueries``."""

from __future__ import annotations

from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import TupleRow
from psycopg.types.json import Jsonb

from grader.core.perfresult import Performance
from grader.course.ondemand import Measured, State

COLUMNS = ("id, assignment, student, token, spool_id, requested_at, state, reason, "
           "performance, finished_at")


def _measured(row: tuple[Any, ...]) -> Measured:
    id_, assignment, student, token, spool_id, at, state, reason, perf, finished = row
    return Measured(id_, assignment, student, token, spool_id, at, state, reason,
                    Performance.from_json(perf) if perf else None, finished)


class MeasurementQueries:
    """Queries over ``measurements``."""

    def _tx(self) -> AbstractContextManager[psycopg.Cursor[TupleRow]]:
        raise NotImplementedError

    def add_measurement(self, course: str, assignment: str, student: str, spool_id: str,
                        at: datetime, tokens: int) -> int | None:
        """Spend the student's next token on a measurement of ``spool_id``: its number,
        or None when none is left (``tokens`` used already, or a request at the same
        moment took the same one)."""
        with self._tx() as cur:
            cur.execute("""
                INSERT INTO measurements (course, assignment, student, token, spool_id,
                                          requested_at)
                SELECT %s, %s, %s, COALESCE(max(token), 0) + 1, %s, %s FROM measurements
                WHERE course = %s AND assignment = %s AND student = %s
                HAVING count(*) FILTER (WHERE state <> 'refunded') < %s
                ON CONFLICT (course, assignment, student, token) DO NOTHING
                RETURNING token""", (course, assignment, student, spool_id, at, course,
                                     assignment, student, tokens))
            row = cur.fetchone()
            return None if row is None else int(row[0])

    def measurements(self, course: str, student: str) -> list[Measured]:
        """Every request of one student, oldest first."""
        with self._tx() as cur:
            cur.execute(f"SELECT {COLUMNS} FROM measurements WHERE course = %s AND "  # noqa: S608
                        "student = %s ORDER BY requested_at, id", (course, student))
            return [_measured(r) for r in cur.fetchall()]

    def waiting_measurements(self, course: str) -> list[Measured]:
        """The course's requests not measured yet, oldest first."""
        with self._tx() as cur:
            cur.execute(f"SELECT {COLUMNS} FROM measurements WHERE course = %s AND "  # noqa: S608
                        "state = 'waiting' ORDER BY requested_at, id", (course,))
            return [_measured(r) for r in cur.fetchall()]

    def finish_measurement(self, measurement_id: int, state: State,
                           performance: Performance | None = None, reason: str = "") -> None:
        """Keep what a waiting request's measurement gave (``refunded``: the token back)."""
        with self._tx() as cur:
            cur.execute("""
                UPDATE measurements SET state = %s, performance = %s, reason = %s,
                  finished_at = now()
                WHERE id = %s AND state = 'waiting'""",
                        (state, Jsonb(performance.to_json()) if performance else None,
                         reason, measurement_id))
