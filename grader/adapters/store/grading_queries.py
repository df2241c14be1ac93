"""The store's side of grading by hand: grades per question with their comments, saved
under optimistic locking (a save names the version it was made from; another grader's
save in between makes it a conflict, refused and kept in the audit, never an
overwrite), the audit of every change, and the reveals of anonymous assignments'
names. A mixin of ``Store`` like ``CourseQueries``."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime

import psycopg
from psycopg.rows import TupleRow
from psycopg.types.json import Jsonb

from grader.course.gradingpage import AuditEntry
from grader.course.gradingview import NewComment
from grader.course.handgrades import LineComment, QuestionGrade, iso

_GRADES = """
    SELECT g.id, g.assignment, g.student, g.question, g.spool_id, g.items, g.adjustment,
      g.reason, g.grader, g.version, g.graded_at
    FROM hand_grades g JOIN courses c ON c.id = g.course_id
    WHERE c.name = %s AND (%s::text IS NULL OR g.assignment = %s)
      AND (%s::text IS NULL OR g.student = %s)
    ORDER BY g.assignment, g.student, g.question"""
_COMMENTS = """
    SELECT m.grade_id, m.id, m.file, m.line_first, m.line_last, m.text, m.item, m.grader,
      m.made_at
    FROM hand_comments m WHERE m.grade_id = ANY(%s) AND m.deleted_at IS NULL
    ORDER BY m.file, m.line_first, m.id"""


class GradingQueries:
    """Queries over ``hand_grades``, ``hand_comments``, ``grade_audit``,
    ``rubric_versions`` and ``name_reveals``."""

    def _tx(self) -> AbstractContextManager[psycopg.Cursor[TupleRow]]:
        raise NotImplementedError

    def hand_grades(self, course: str, assignment: str | None = None,
                    student: str | None = None) -> dict[str, list[QuestionGrade]]:
        """assignment -> its grades per student and question, with their comments."""
        with self._tx() as cur:
            return _read(cur, course, assignment, student)

    def save_question(self, course: str, assignment: str, student: str, question: str, *,
                      seen: int, items: Sequence[str], adjustment: float, reason: str,
                      spool_id: str | None, grader: str, comment: NewComment | None = None,
                      delete: Sequence[int] = (), rubric: tuple[str, object] | None = None
                      ) -> tuple[bool, QuestionGrade | None]:
        """Save a question's grade made from version ``seen`` (0: none yet), with a
        comment added and some deleted; (saved, the grade as stored now). Not saved when
        another save came first (a conflict): its audit row keeps what this one held.

        :param rubric: (its sha256, its data): the rubric version it is saved under.
        """
        sha = rubric[0] if rubric else ""
        said = {"items": list(items), "adjustment": adjustment, "reason": reason,
                "spool_id": spool_id, "delete": list(delete),
                "comment": None if comment is None else {
                    "file": comment.file, "first": comment.first, "last": comment.last,
                    "text": comment.text, "item": comment.item}}
        with self._tx() as cur:
            cur.execute("INSERT INTO courses (name) VALUES (%s) ON CONFLICT (name) DO NOTHING",
                        (course,))
            cur.execute("SELECT id FROM courses WHERE name = %s", (course,))
            cid = _first(cur)
            key = (cid, assignment, student, question)
            if rubric is not None:
                cur.execute("INSERT INTO rubric_versions (course_id, assignment, sha256, "
                            "rubric) VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                            (cid, assignment, sha, Jsonb(rubric[1])))
            row = _write(cur, key, seen, list(items), adjustment, reason, spool_id, grader,
                         sha)
            audit = ("INSERT INTO grade_audit (course_id, assignment, student, question, "
                     "grader, action, version, rubric_sha, grade) "
                     "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)")
            if row is None:
                cur.execute(audit, (*key, grader, "conflict", seen, sha, Jsonb(said)))
            else:
                gid, version = row
                if delete:
                    cur.execute("UPDATE hand_comments SET deleted_at = now(), deleted_by = %s "
                                "WHERE grade_id = %s AND id = ANY(%s) AND deleted_at IS NULL",
                                (grader, gid, list(delete)))
                if comment is not None:
                    cur.execute("INSERT INTO hand_comments (grade_id, file, line_first, "
                                "line_last, text, item, grader) VALUES "
                                "(%s, %s, %s, %s, %s, %s, %s)",
                                (gid, comment.file, comment.first, comment.last, comment.text,
                                 comment.item, grader))
                cur.execute(audit, (*key, grader, "grade", version, sha, Jsonb(said)))
            now = _read(cur, course, assignment, student).get(assignment, [])
        found = next((g for g in now if g.question == question), None)
        return row is not None, found

    def grade_history(self, course: str, assignment: str, student: str, question: str
                      ) -> list[AuditEntry]:
        """Every change to a question's grade, and every save refused as a conflict,
        oldest first."""
        with self._tx() as cur:
            cur.execute("""
                SELECT a.at, a.grader, a.action, a.version, a.grade FROM grade_audit a
                JOIN courses c ON c.id = a.course_id
                WHERE c.name = %s AND a.assignment = %s AND a.student = %s
                  AND a.question = %s ORDER BY a.at, a.id""",
                        (course, assignment, student, question))
            out = []
            for at, grader, action, version, g in cur.fetchall():
                c = g.get("comment") or {}
                out.append(AuditEntry(iso(at), grader, action, version,
                                      tuple(g.get("items") or ()),
                                      float(g.get("adjustment") or 0.0), g.get("reason") or "",
                                      f"{c['file']}:{c['first']}: {c['text']}" if c else ""))
            return out

    def reveal_names(self, course: str, assignment: str, by: str, *, hide: bool = False
                     ) -> None:
        """Record that an instructor revealed (or hid again) an assignment's names."""
        with self._tx() as cur:
            cur.execute("INSERT INTO courses (name) VALUES (%s) ON CONFLICT (name) DO NOTHING",
                        (course,))
            cur.execute("INSERT INTO name_reveals (course_id, assignment, revealed_by, hidden) "
                        "SELECT id, %s, %s, %s FROM courses WHERE name = %s",
                        (assignment, by, hide, course))

    def names_revealed(self, course: str, assignment: str) -> tuple[datetime, str] | None:
        """(when, by whom) an assignment's names were revealed, or None (never, or hidden
        again since)."""
        with self._tx() as cur:
            cur.execute("""
                SELECT r.revealed_at, r.revealed_by, r.hidden FROM name_reveals r
                JOIN courses c ON c.id = r.course_id
                WHERE c.name = %s AND r.assignment = %s
                ORDER BY r.revealed_at DESC, r.id DESC LIMIT 1""", (course, assignment))
            row = cur.fetchone()
            return None if row is None or row[2] else (row[0], row[1])


def _first(cur: psycopg.Cursor[TupleRow]) -> int:
    row = cur.fetchone()
    assert row is not None
    return int(row[0])


def _write(cur: psycopg.Cursor[TupleRow], key: tuple[int, str, str, str], seen: int,
           items: list[str], adjustment: float, reason: str, spool_id: str | None,
           grader: str, sha: str) -> tuple[int, int] | None:
    """(id, version) of the row written, or None: another save came first."""
    if seen == 0:
        cur.execute("INSERT INTO hand_grades (course_id, assignment, student, question, "
                    "spool_id, items, adjustment, reason, grader, rubric_sha) VALUES "
                    "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING "
                    "RETURNING id, version",
                    (*key, spool_id, items, adjustment, reason, grader, sha))
    else:
        cur.execute("UPDATE hand_grades SET spool_id = %s, items = %s, adjustment = %s, "
                    "reason = %s, grader = %s, rubric_sha = %s, version = version + 1, "
                    "graded_at = now() WHERE course_id = %s AND assignment = %s AND "
                    "student = %s AND question = %s AND version = %s RETURNING id, version",
                    (spool_id, items, adjustment, reason, grader, sha, *key, seen))
    row = cur.fetchone()
    return None if row is None else (int(row[0]), int(row[1]))


def _read(cur: psycopg.Cursor[TupleRow], course: str, assignment: str | None,
          student: str | None) -> dict[str, list[QuestionGrade]]:
    cur.execute(_GRADES, (course, assignment, assignment, student, student))
    rows = cur.fetchall()
    comments: dict[int, list[LineComment]] = {}
    if rows:
        cur.execute(_COMMENTS, ([r[0] for r in rows],))
        for gid, cid, file, first, last, text, item, grader, made in cur.fetchall():
            comments.setdefault(gid, []).append(
                LineComment(cid, file, first, last, text, item, grader, iso(made)))
    out: dict[str, list[QuestionGrade]] = {}
    for gid, a, st, q, spool, items, adj, why, grader, version, at in rows:
        out.setdefault(a, []).append(QuestionGrade(
            st, q, spool, tuple(items), float(adj), why, grader, int(version), iso(at),
            tuple(comments.get(gid, ()))))
    return out
