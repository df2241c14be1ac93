"""The store's queries of teams, regrade requests and grades changed by hand: every
table append-only (0008, 0009). A change is decided by the course's pure rules
(``course.teams``, ``course.regrades``) on what the store holds *inside* the change's
transaction, under a lock of the course's teams or of the request, so that two doors
(the desk, the LTI tool) deciding at once cannot both take the last place of a team or
answer one request twice. A mixin of ``Store`` like ``CourseQueries``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

import psycopg
from psycopg.rows import TupleRow

from grader.core.errors import StoreError
from grader.course.grade_changes import GradeChange, Target
from grader.course.regrades import Answer, Request
from grader.course.teams import Team, TeamEvent, Teams

#: what a change to the teams adds: new teams, then their members' joins and leaves
TeamRows = tuple[Sequence[Team], Sequence[TeamEvent]]
_LOCK_TEAMS = 7272  # pg_advisory_xact_lock(key, hash of the course): one change at once


class TeamQueries:
    """Queries over ``teams``, ``team_events``, ``regrade_requests``,
    ``regrade_answers`` and ``grade_changes``."""

    def _tx(self) -> AbstractContextManager[psycopg.Cursor[TupleRow]]:
        raise NotImplementedError

    # -- teams ---------------------------------------------------------------------
    def teams(self, course: str) -> Teams:
        """Every team of the course and its log, in the order it was written."""
        with self._tx() as cur:
            return _teams(cur, course)

    def change_teams(self, course: str, decide: Callable[[Teams], TeamRows]) -> TeamRows:
        """Apply what ``decide`` makes of the course's teams as they are now (it raises
        to refuse): one change of the course's teams at a time, whoever asks.

        :raises StoreError: a join code that another team has (ask again)."""
        with self._tx() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_LOCK_TEAMS, course))
            new, events = decide(_teams(cur, course))
            cur.execute("INSERT INTO courses (name) VALUES (%s) ON CONFLICT (name) DO NOTHING",
                        (course,))
            for t in new:
                cur.execute("""
                    INSERT INTO teams (course_id, assignment, name, join_code, created_at,
                                       created_by)
                    SELECT id, %s, %s, %s, %s, %s FROM courses WHERE name = %s""",
                            (t.assignment, t.name, t.code, t.created_at, t.created_by, course))
            for e in events:
                cur.execute("""
                    INSERT INTO team_events (team_id, student, action, at, by_account, reason)
                    SELECT t.id, %s, %s, %s, %s, %s FROM teams t
                    JOIN courses c ON c.id = t.course_id
                    WHERE c.name = %s AND t.assignment = %s AND t.name = %s""",
                            (e.student, e.action, e.at, e.by, e.reason, course, e.assignment,
                             e.team))
                if cur.rowcount != 1:
                    raise StoreError(f"no team {e.team} of {e.assignment} in {course}")
        return new, events

    # -- regrade requests ------------------------------------------------------------
    def regrade_requests(self, course: str, *, student: str | None = None,
                         request: int | None = None) -> list[Request]:
        """The course's requests with their answers (of one student, or one request),
        oldest first."""
        with self._tx() as cur:
            return _requests(cur, course, student, request)

    def open_request(self, course: str, student: str,
                     decide: Callable[[list[Request]], Request]) -> Request:
        """Keep the request ``decide`` makes of the student's requests so far (it raises
        to refuse), one of theirs at a time; the request as kept (its id)."""
        with self._tx() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))",
                        (_LOCK_TEAMS + 1, f"{course}|{student}"))
            r = decide(_requests(cur, course, student, None))
            cur.execute("""
                INSERT INTO regrade_requests (course_id, assignment, spool_id, student,
                  target_kind, target, reason, before_points, most_points, out_of,
                  opened_at, opened_by)
                SELECT c.id, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s FROM courses c
                WHERE c.name = %s RETURNING id""",
                        (r.assignment, r.spool_id, r.student, r.target.kind, r.target.name,
                         r.reason, r.before, r.most, r.out_of, r.opened_at, r.opened_by,
                         course))
            row = cur.fetchone()
            if row is None:
                raise StoreError(f"no course {course} in the results database")
        return Request(int(row[0]), r.assignment, r.spool_id, r.student, r.target, r.reason,
                       r.opened_at, r.opened_by, r.before, r.most, r.out_of)

    def answer_request(self, course: str, request: int,
                       decide: Callable[[Request], tuple[Answer, GradeChange | None]]
                       ) -> tuple[Answer, GradeChange | None]:
        """Keep the answer (and the grade change) ``decide`` makes of the request as it
        is now, the request's row locked (``decide`` raises to refuse: answered already).

        :raises StoreError: no such request of the course."""
        with self._tx() as cur:
            cur.execute("""SELECT r.id FROM regrade_requests r JOIN courses c
                           ON c.id = r.course_id WHERE c.name = %s AND r.id = %s
                           FOR UPDATE OF r""", (course, request))
            if cur.fetchone() is None:
                raise StoreError(f"no regrade request {request} in course {course}")
            found = _requests(cur, course, None, request)
            ans, change = decide(found[0])
            cur.execute("""
                INSERT INTO regrade_answers (request_id, outcome, reason, before_points,
                  after_points, answered_at, answered_by)
                VALUES (%s, %s, %s, %s, %s, %s, %s)""",
                        (request, ans.outcome, ans.reason, ans.before, ans.after, ans.at,
                         ans.by))
            if change is not None:
                _add_change(cur, course, change)
        return ans, change

    # -- grades changed by hand ----------------------------------------------------
    def grade_changes(self, course: str) -> list[GradeChange]:
        """Every change of a grade by hand, in the order they were made."""
        with self._tx() as cur:
            cur.execute("""
                SELECT g.assignment, g.target_kind, g.target, g.spool_id, g.student,
                  g.before_points, g.after_points, g.out_of, g.reason, g.made_by, g.made_at,
                  g.request_id
                FROM grade_changes g JOIN courses c ON c.id = g.course_id
                WHERE c.name = %s ORDER BY g.id""", (course,))
            return [GradeChange(a, Target(kind, target), sid, st, b, af, of, why, by, at, req)
                    for a, kind, target, sid, st, b, af, of, why, by, at, req
                    in cur.fetchall()]

    def add_grade_change(self, course: str, change: GradeChange) -> None:
        """Keep a change of a grade by hand (an override of one student's grade)."""
        with self._tx() as cur:
            cur.execute("INSERT INTO courses (name) VALUES (%s) ON CONFLICT (name) DO NOTHING",
                        (course,))
            _add_change(cur, course, change)


def _teams(cur: psycopg.Cursor[TupleRow], course: str) -> Teams:
    cur.execute("""
        SELECT t.assignment, t.name, t.join_code, t.created_at, t.created_by
        FROM teams t JOIN courses c ON c.id = t.course_id WHERE c.name = %s
        ORDER BY t.id""", (course,))
    teams = [Team(*row) for row in cur.fetchall()]
    cur.execute("""
        SELECT t.assignment, t.name, e.student, e.action, e.at, e.by_account, e.reason
        FROM team_events e JOIN teams t ON t.id = e.team_id
        JOIN courses c ON c.id = t.course_id WHERE c.name = %s ORDER BY e.at, e.id""",
                (course,))
    return Teams(teams, [TeamEvent(*row) for row in cur.fetchall()])


def _requests(cur: psycopg.Cursor[TupleRow], course: str, student: str | None,
              request: int | None) -> list[Request]:
    cur.execute("""
        SELECT r.id, r.assignment, r.spool_id, r.student, r.target_kind, r.target, r.reason,
          r.opened_at, r.opened_by, r.before_points, r.most_points, r.out_of,
          a.outcome, a.reason, a.answered_by, a.answered_at, a.before_points, a.after_points
        FROM regrade_requests r JOIN courses c ON c.id = r.course_id
        LEFT JOIN regrade_answers a ON a.request_id = r.id
        WHERE c.name = %s AND (%s::text IS NULL OR r.student = %s)
          AND (%s::int IS NULL OR r.id = %s)
        ORDER BY r.opened_at, r.id""", (course, student, student, request, request))
    out = []
    for (rid, a, sid, st, kind, target, why, at, by, before, most, of,
         outcome, ans_why, ans_by, ans_at, ans_before, ans_after) in cur.fetchall():
        answer = Answer(outcome, ans_why, ans_by, ans_at, ans_before, ans_after) \
            if outcome else None
        out.append(Request(rid, a, sid, st, Target(kind, target), why, at, by, before, most,
                           of, answer))
    return out


def _add_change(cur: psycopg.Cursor[TupleRow], course: str, c: GradeChange) -> None:
    cur.execute("""
        INSERT INTO grade_changes (course_id, assignment, target_kind, target, spool_id,
          student, before_points, after_points, out_of, reason, made_at, made_by, request_id)
        SELECT id, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s FROM courses
        WHERE name = %s""",
                (c.assignment, c.target.kind, c.target.name, c.spool_id, c.student, c.before,
                 c.after, c.out_of, c.reason, c.at, c.by, c.request, course))
