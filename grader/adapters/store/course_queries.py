"""The store's queries for a course's policy: attempts with both phases' scores and the
student's choice, releases and choices. A mixin of ``Store`` (one adapter, one
connection), kept apart so the ingest and the course side stay readable."""

from __future__ import annotations

from contextlib import AbstractContextManager
from datetime import datetime

import psycopg
from psycopg.rows import TupleRow
from psycopg.types.json import Jsonb

from grader.core.errors import StoreError
from grader.core.result import SubmissionResult
from grader.course.policy import Attempt
from grader.course.shown import Receipt
from grader.course.studentview import Submitted


class CourseQueries:
    """Queries over ``submissions``, ``results``, ``releases``, ``choices`` and
    ``receipts``."""

    def _tx(self) -> AbstractContextManager[psycopg.Cursor[TupleRow]]:
        raise NotImplementedError

    def attempts(self, course: str) -> list[Attempt]:
        """Every graded submission of a course with its scores, fractions of their
        maxima: the visible phase's (its latest result restricted to some groups; the
        full one where it had none) and the full suite's (None until graded). What
        grades and the after-deadline phase are computed from."""
        with self._tx() as cur:
            cur.execute("""
                SELECT s.spool_id, s.student, s.assignment, s.submitted_at,
                  (SELECT r.score / NULLIF(r.max_score, 0) FROM results r
                    WHERE r.submission_id = s.id AND r.version LIKE '%%/groups-%%'
                    ORDER BY r.id DESC LIMIT 1),
                  (SELECT r.score / NULLIF(r.max_score, 0) FROM results r
                    WHERE r.submission_id = s.id AND r.version NOT LIKE '%%/groups-%%'
                      AND r.superseded_at IS NULL ORDER BY r.id DESC LIMIT 1),
                  EXISTS (SELECT 1 FROM results r WHERE r.submission_id = s.id
                    AND r.version NOT LIKE '%%/groups-%%' AND r.superseded_at IS NULL),
                  s.spool_id = (SELECT ch.spool_id FROM choices ch
                    WHERE ch.course_id = c.id AND ch.assignment = s.assignment
                      AND ch.student = s.student ORDER BY ch.chosen_at DESC, ch.id DESC
                    LIMIT 1)
                FROM submissions s JOIN courses c ON c.id = s.course_id
                WHERE c.name = %s AND s.state <> 'quarantined'
                ORDER BY s.submitted_at, s.id""", (course,))
            out = []
            for spool_id, student, assignment, at, part, full, graded, chosen in cur.fetchall():
                score = (full if full is not None else 0.0) if graded else None
                visible = part if part is not None else score
                out.append(Attempt(spool_id, student, assignment, at, visible, score,
                                   bool(chosen)))
            return out

    def release(self, course: str, assignment: str, by: str, *, withdraw: bool = False
                ) -> datetime:
        """Record that staff released (or withdrew) an assignment's results."""
        with self._tx() as cur:
            cur.execute("INSERT INTO courses (name) VALUES (%s) ON CONFLICT (name) DO NOTHING",
                        (course,))
            cur.execute("""
                INSERT INTO releases (course_id, assignment, released_by, withdrawn)
                SELECT id, %s, %s, %s FROM courses WHERE name = %s
                RETURNING released_at""", (assignment, by, withdraw, course))
            row = cur.fetchone()
            assert row is not None
            return row[0]  # type: ignore[no-any-return]

    def released(self, course: str, assignment: str) -> datetime | None:
        """When the assignment was released, or None (never, or withdrawn since)."""
        with self._tx() as cur:
            cur.execute("""
                SELECT r.released_at, r.withdrawn FROM releases r
                JOIN courses c ON c.id = r.course_id
                WHERE c.name = %s AND r.assignment = %s
                ORDER BY r.released_at DESC, r.id DESC LIMIT 1""", (course, assignment))
            row = cur.fetchone()
            return None if row is None or row[1] else row[0]

    def choose(self, course: str, assignment: str, student: str, spool_id: str, by: str
               ) -> None:
        """Record that ``spool_id`` is the student's chosen submission for the assignment.

        :raises StoreError: when it is not a submission of theirs to that assignment.
        """
        with self._tx() as cur:
            cur.execute("""
                INSERT INTO choices (course_id, assignment, student, spool_id, chosen_by)
                SELECT s.course_id, s.assignment, s.student, s.spool_id, %s
                FROM submissions s JOIN courses c ON c.id = s.course_id
                WHERE c.name = %s AND s.assignment = %s AND s.student = %s
                  AND s.spool_id = %s""", (by, course, assignment, student, spool_id))
            if cur.rowcount != 1:
                raise StoreError(f"{spool_id} is no submission of {student} to {assignment} "
                                 f"in course {course}")


    def add_receipt(self, receipt: Receipt) -> None:
        """Keep a receipt the desk gave (idempotent: the spool id is the key)."""
        with self._tx() as cur:
            cur.execute("""
                INSERT INTO receipts (spool_id, course, assignment, student, received_at,
                                      size, sha256, receipt)
                VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (spool_id) DO NOTHING""",
                        (receipt.submission, receipt.course, receipt.assignment,
                         receipt.student, receipt.received_at, receipt.size,
                         receipt.sha256, Jsonb(receipt.to_json())))

    def handins(self, course: str, student: str, assignment: str
                ) -> list[tuple[str, datetime]]:
        """(spool id, when) of each hand-in of the assignment by the student (through
        the desk or staff's submit): what the course's hand-in limits count."""
        with self._tx() as cur:
            cur.execute("""
                SELECT rc.spool_id, rc.received_at FROM receipts rc
                WHERE rc.course = %s AND rc.student = %s AND rc.assignment = %s
                UNION ALL
                SELECT s.spool_id, s.submitted_at FROM submissions s
                JOIN courses c ON c.id = s.course_id
                WHERE c.name = %s AND s.student = %s AND s.assignment = %s
                  AND NOT EXISTS (SELECT 1 FROM receipts rc WHERE rc.spool_id = s.spool_id)
                """, (course, student, assignment, course, student, assignment))
            return [(row[0], row[1]) for row in cur.fetchall()]

    def student_submissions(self, course: str, student: str) -> list[Submitted]:
        """Every submission of one student with its records, unfiltered (what they may
        see of them is ``course.studentview``'s to decide), and the receipts of those
        still waiting to be graded."""
        with self._tx() as cur:
            cur.execute("""
                SELECT s.spool_id, s.assignment, s.submitted_at, s.state,
                  COALESCE(s.quarantine_reason, ''),
                  (SELECT r.record FROM results r WHERE r.submission_id = s.id
                    AND r.version LIKE '%%/groups-%%' ORDER BY r.id DESC LIMIT 1),
                  (SELECT r.record FROM results r WHERE r.submission_id = s.id
                    AND r.version NOT LIKE '%%/groups-%%' AND r.superseded_at IS NULL
                    ORDER BY r.id DESC LIMIT 1),
                  s.spool_id = (SELECT ch.spool_id FROM choices ch
                    WHERE ch.course_id = c.id AND ch.assignment = s.assignment
                      AND ch.student = s.student ORDER BY ch.chosen_at DESC, ch.id DESC
                    LIMIT 1),
                  COALESCE(rc.sha256, ''), COALESCE((rc.receipt->>'deferred')::boolean, false)
                FROM submissions s JOIN courses c ON c.id = s.course_id
                LEFT JOIN receipts rc ON rc.spool_id = s.spool_id
                WHERE c.name = %s AND s.student = %s
                UNION ALL
                SELECT rc.spool_id, rc.assignment, rc.received_at, 'waiting', '', NULL, NULL,
                  false, rc.sha256, COALESCE((rc.receipt->>'deferred')::boolean, false)
                FROM receipts rc WHERE rc.course = %s AND rc.student = %s
                  AND NOT EXISTS (SELECT 1 FROM submissions s WHERE s.spool_id = rc.spool_id)
                """, (course, student, course, student))
            out = []
            for sid, a, at, state, why, vis, full, chosen, sha, later in cur.fetchall():
                out.append(Submitted(
                    sid, a, at, state, why,
                    SubmissionResult.from_dict(vis) if vis else None,
                    SubmissionResult.from_dict(full) if full else None, bool(chosen), sha,
                    bool(later), student))
            return out

    def judge_errors(self, course: str, assignment: str, version: str) -> list[str]:
        """Spool ids whose current result for ``version`` is a judge error (what
        ``regrade --judge-errors`` grades again)."""
        with self._tx() as cur:
            cur.execute("""
                SELECT s.spool_id FROM submissions s JOIN courses c ON c.id = s.course_id
                JOIN results r ON r.submission_id = s.id AND r.superseded_at IS NULL
                WHERE c.name = %s AND s.assignment = %s AND r.version = %s
                  AND r.verdict = 'JE' ORDER BY s.id""", (course, assignment, version))
            return [row[0] for row in cur.fetchall()]
