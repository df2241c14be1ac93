"""The store's queries for staff pages: every submission of a course, an assignment or
a student with its current verdict, and one submission with all its results. A mixin
of ``Store`` like ``CourseQueries``."""

from __future__ import annotations

from contextlib import AbstractContextManager

import psycopg
from psycopg.rows import TupleRow

from grader.core.result import SubmissionResult
from grader.course.staffview import Detail, Row


class StaffQueries:
    """Read-only queries over ``submissions`` and ``results``."""

    def _tx(self) -> AbstractContextManager[psycopg.Cursor[TupleRow]]:
        raise NotImplementedError

    def rows(self, course: str, *, assignment: str | None = None,
             student: str | None = None) -> list[Row]:
        """Submissions (oldest first) with their current verdict: the full suite's when
        it ran, else the visible phase's."""
        with self._tx() as cur:
            cur.execute("""
                SELECT s.spool_id, s.student, s.assignment, s.submitted_at, s.state,
                  COALESCE(s.quarantine_reason, ''), cur.verdict, cur.score, cur.max_score,
                  cur.version LIKE '%%/groups-%%'
                FROM submissions s JOIN courses c ON c.id = s.course_id
                LEFT JOIN LATERAL (
                  SELECT r.verdict, r.score, r.max_score, r.version FROM results r
                  WHERE r.submission_id = s.id AND (r.superseded_at IS NULL
                    OR r.version LIKE '%%/groups-%%')
                  ORDER BY (r.version NOT LIKE '%%/groups-%%' AND r.superseded_at IS NULL)
                    DESC, r.id DESC LIMIT 1) cur ON true
                WHERE c.name = %s AND (%s::text IS NULL OR s.assignment = %s)
                  AND (%s::text IS NULL OR s.student = %s)
                ORDER BY s.submitted_at, s.id""",
                        (course, assignment, assignment, student, student))
            return [Row(sid, st, a, at, state, why, verdict, score, mx,
                        None if verdict is None else ("visible" if part else "full"))
                    for sid, st, a, at, state, why, verdict, score, mx, part
                    in cur.fetchall()]

    def detail(self, course: str, spool_id: str) -> Detail | None:
        """One submission of the course with every result it ever had (newest first)."""
        with self._tx() as cur:
            cur.execute("""
                SELECT s.id, s.spool_id, s.student, s.assignment, s.submitted_at, s.state,
                  COALESCE(s.quarantine_reason, ''), s.language, s.arrived_at,
                  s.started_at, s.finished_at, s.stored_at
                FROM submissions s JOIN courses c ON c.id = s.course_id
                WHERE c.name = %s AND s.spool_id = %s""", (course, spool_id))
            row = cur.fetchone()
            if row is None:
                return None
            sub_id, sid, student, assignment, at, state, why, lang, *stamps = row
            cur.execute("""
                SELECT r.version, r.created_at, r.superseded_at, r.record FROM results r
                WHERE r.submission_id = %s ORDER BY r.id DESC""", (sub_id,))
            results = [(v, made, gone, SubmissionResult.from_dict(rec))
                       for v, made, gone, rec in cur.fetchall()]
            arrived, started, finished, stored = stamps
            return Detail(sid, student, assignment, at, state, why, lang, arrived, started,
                          finished, stored, results=results)
