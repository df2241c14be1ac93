"""PostgreSQL results store (psycopg 3): migrations, idempotent bulk ingest, staff queries.

Ingest is idempotent on its keys -- a submission by its spool id, a result by
(submission, assignment version), a test result by (result, test name) -- so a
batch's JSONL can be ingested any number of times and every row exists once.
Bulk rows go through COPY into temporary staging tables, then one INSERT ...
ON CONFLICT DO NOTHING per table, all in one transaction: a crash mid-ingest
leaves nothing behind, and the re-run ingests everything.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from importlib import resources

import psycopg
from psycopg import sql
from psycopg.rows import TupleRow

from grader import faults
from grader.adapters.store.connections import Connections, answers, connect, reusable
from grader.adapters.store.course_queries import CourseQueries
from grader.adapters.store.grading_queries import GradingQueries
from grader.adapters.store.measurement_queries import MeasurementQueries
from grader.adapters.store.staff_queries import StaffQueries
from grader.adapters.store.team_queries import TeamQueries
from grader.core.errors import StoreError
from grader.core.finished import Finished
from grader.core.finished import epoch as e
from grader.core.record import SubmissionRecord
from grader.core.result import SubmissionResult
from grader.core.samples import ShardSample

log = logging.getLogger(__name__)
Row = tuple[object, ...]  # of a table, in its columns' order

SUB_COLUMNS = ("spool_id", "course", "assignment", "student", "submitted_at", "content_hash",
               "language", "batch_id", "state", "quarantine_code", "quarantine_reason",
               "arrived_at", "claimed_at", "dispatched_at", "started_at", "finished_at")
RES_COLUMNS = ("spool_id", "version", "path", "verdict", "score", "max_score",
               "reused_from_spool", "record")
TEST_COLUMNS = ("spool_id", "version", "name", "group_name", "verdict", "cpu_time_s",
                "wall_time_s", "memory_bytes", "exit_code", "signal")


def _migrations() -> list[tuple[str, str]]:
    files = resources.files("grader.adapters.store").joinpath("migrations")
    return sorted((f.name, f.read_text(encoding="utf-8")) for f in files.iterdir()
                  if f.name.endswith(".sql"))


class Store(CourseQueries, StaffQueries, MeasurementQueries, GradingQueries, TeamQueries):
    """A connection to the results database: its own (``Store(url)``), or one lent by a
    pool (``Store(connections)``), given back when the store is closed unless a call on
    it failed."""

    def __init__(self, source: str | Connections, *, connect_timeout_s: int = 5) -> None:
        self._pool = source if isinstance(source, Connections) else None
        self.url = source.url if isinstance(source, Connections) else source
        self.conn = self._pool.lend() if self._pool is not None else \
            connect(self.url, connect_timeout_s)
        self._failed = self._closed = False

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._pool is None:
            self.conn.close()
        else:
            self._pool.give_back(self.conn, broken=self._failed or not reusable(self.conn))

    def alive(self) -> bool:
        """Whether the connection still answers (``connections.answers``)."""
        return not self._failed and answers(self.conn)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Cursor[TupleRow]]:
        try:
            with self.conn.transaction(), self.conn.cursor() as cur:
                yield cur
        except psycopg.Error as e:
            self._failed = True  # lent by a pool: closed, not lent again
            raise StoreError(f"database error: {str(e).strip().splitlines()[0]}") from e

    # -- schema ----------------------------------------------------------------
    def migrate(self) -> list[str]:
        """Apply pending migrations in order; returns the names applied (none when another
        store of the same pool applied them)."""
        if self._pool is not None and self._pool.migrated:
            return []
        applied: list[str] = []
        with self._tx() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(7271)")  # one migrator at a time
            cur.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, "
                        "sha256 text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())")
            cur.execute("SELECT name, sha256 FROM schema_migrations")
            done = dict(cur.fetchall())
            for name, sql in _migrations():
                digest = hashlib.sha256(sql.encode()).hexdigest()
                if name in done:
                    if done[name] != digest:
                        raise StoreError(f"migration {name} changed after it was applied; "
                                         "add a new migration instead of editing an old one")
                    continue
                cur.execute(sql)
                cur.execute("INSERT INTO schema_migrations (name, sha256) VALUES (%s, %s)",
                            (name, digest))
                applied.append(name)
        if self._pool is not None:
            self._pool.migrated = True
        return applied

    # -- ingest ----------------------------------------------------------------
    def ingest(self, records: Iterable[SubmissionRecord]) -> int:
        """Store a batch's records in one transaction (staged by COPY, then merged);
        returns how many results were newly stored."""
        subs, res, tests = _stage_rows(records)
        if not subs:
            return 0
        with self._tx() as cur:
            cur.execute(_STAGE_SQL)
            for table, cols, rows in (("stage_sub", SUB_COLUMNS, subs),
                                      ("stage_res", RES_COLUMNS, res),
                                      ("stage_test", TEST_COLUMNS, tests)):
                with cur.copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN") as cp:
                    for row in rows:
                        cp.write_row(row)
            faults.point("ingest-after-copy")  # a crash here must leave nothing behind
            cur.execute(_MERGE_SQL)
            cur.execute(_RESULTS_SQL)
            new = cur.rowcount
            cur.execute(_LINK_REUSED_SQL)
            cur.execute(_FINISH_SQL)
        return max(new, 0)

    # -- queries -----------------------------------------------------------------
    def stored_spool_ids(self, spool_ids: Iterable[str]) -> set[str]:
        """Which of these submissions already have a current result (or are quarantined)."""
        ids = list(spool_ids)
        if not ids:
            return set()
        with self._tx() as cur:
            cur.execute("""SELECT s.spool_id FROM submissions s
                           WHERE s.spool_id = ANY(%s) AND (s.state = 'quarantined' OR EXISTS
                             (SELECT 1 FROM results r WHERE r.submission_id = s.id
                              AND r.superseded_at IS NULL))""", (ids,))
            return {row[0] for row in cur.fetchall()}

    def reusable(self, version: str, content_hash: str) -> tuple[str, SubmissionResult] | None:
        """A stored result for identical content of the same assignment version."""
        with self._tx() as cur:
            cur.execute("""SELECT s.spool_id, r.record FROM results r
                           JOIN submissions s ON s.id = r.submission_id
                           WHERE r.version = %s AND s.content_hash = %s AND r.reused_from IS NULL
                             AND r.verdict <> 'JE'
                           ORDER BY r.id LIMIT 1""", (version, content_hash))
            row = cur.fetchone()
        return (row[0], SubmissionResult.from_dict(row[1])) if row else None

    def status(self, course: str) -> list[tuple[str, str, int]]:
        """(assignment, state or verdict, count) rows for a course."""
        with self._tx() as cur:
            cur.execute("""
                SELECT s.assignment, COALESCE(r.verdict, s.state), count(*)
                FROM submissions s JOIN courses c ON c.id = s.course_id
                LEFT JOIN results r ON r.submission_id = s.id AND r.superseded_at IS NULL
                WHERE c.name = %s GROUP BY 1, 2 ORDER BY 1, 2""", (course,))
            return [(a, v, int(n)) for a, v, n in cur.fetchall()]

    def current_results(self, course: str, assignment: str
                        ) -> list[tuple[str, SubmissionResult]]:
        """(student, result record) of each student's latest graded submission."""
        with self._tx() as cur:
            cur.execute("""
                SELECT DISTINCT ON (s.student) s.student, r.record
                FROM submissions s JOIN courses c ON c.id = s.course_id
                JOIN results r ON r.submission_id = s.id AND r.superseded_at IS NULL
                WHERE c.name = %s AND s.assignment = %s
                ORDER BY s.student, s.submitted_at DESC, s.id DESC""", (course, assignment))
            return [(st, SubmissionResult.from_dict(rec)) for st, rec in cur.fetchall()]

    def finished(self, course: str, since: datetime | None = None) -> list[Finished]:
        """Every finished submission of a course (arrived at or after ``since``) with its
        stamps, where it ran and what it used: what traces, SWF and the response-time
        analysis are made of."""
        with self._tx() as cur:
            cur.execute("""
                SELECT s.student, s.assignment, s.state, r.verdict, s.arrived_at,
                  s.started_at, s.finished_at, s.stored_at,
                  (SELECT max(t.memory_bytes) FROM test_results t WHERE t.result_id = r.id),
                  (SELECT sum(t.cpu_time_s) FROM test_results t WHERE t.result_id = r.id),
                  COALESCE(r.record->'runtime'->'slurm'->>'node', r.record->'runtime'->>'host'),
                  r.record->'runtime'->>'cpus', s.claimed_at, s.dispatched_at, s.spool_id,
                  s.content_hash
                FROM submissions s JOIN courses c ON c.id = s.course_id
                LEFT JOIN results r ON r.submission_id = s.id AND r.superseded_at IS NULL
                WHERE c.name = %s AND (%s::timestamptz IS NULL OR s.arrived_at >= %s)
                  AND s.stored_at IS NOT NULL
                ORDER BY s.arrived_at, s.id""", (course, since, since))
            return [Finished(st, a, state, v, e(arr) or 0.0, e(sta), e(fin), e(sto),
                             mem / 1024 if mem is not None else None, cpu, node, cpus,
                             e(cla), e(dis), sid, ch)
                    for st, a, state, v, arr, sta, fin, sto, mem, cpu, node, cpus, cla, dis, sid,
                    ch in cur.fetchall()]

    def outdated(self, course: str, assignment: str, version: str) -> list[str]:
        """Spool ids of graded submissions whose current result is for another version
        of the same phase: a version restricted to some groups (``/groups-``) outdates
        only visible-phase results, a full one only full results."""
        part = "/groups-" in version
        with self._tx() as cur:
            cur.execute("""
                SELECT s.spool_id
                FROM submissions s JOIN courses c ON c.id = s.course_id
                JOIN results r ON r.submission_id = s.id AND r.superseded_at IS NULL
                WHERE c.name = %s AND s.assignment = %s AND r.version <> %s
                  AND (r.version LIKE '%%/groups-%%') = %s
                ORDER BY s.id""", (course, assignment, version, part))
            return [row[0] for row in cur.fetchall()]

    def ingest_metrics(self, batch_id: str, samples: Iterable[ShardSample]) -> int:
        """Counter samples of a batch's array tasks; re-ingesting a batch replaces them."""
        rows = [(batch_id, s.sample.source, s.sample.event, s.sample.value, s.sample.unit,
                 s.sample.cpu, s.sample.context, s.node, s.array_job_id, s.array_task_id,
                 s.submissions) for s in samples]
        if not rows:
            return 0
        with self._tx() as cur:
            cur.execute("INSERT INTO batches (id, host) VALUES (%s, 'gradeline') "
                        "ON CONFLICT (id) DO NOTHING", (batch_id,))
            cur.execute("DELETE FROM metrics WHERE batch_id = %s", (batch_id,))
            with cur.copy("COPY metrics (batch_id, source, name, value, unit, cpu, context, "
                          "node, array_job_id, array_task_id, submissions) FROM STDIN") as cp:
                for row in rows:
                    cp.write_row(row)
        return len(rows)

    def count(self, sql: str, params: tuple[object, ...] = ()) -> int:
        """A single number (tests and benchmarks)."""
        with self._tx() as cur:
            cur.execute(sql, params)
            row = cur.fetchone()
        return int(row[0]) if row else 0

    def save_campaign(self, campaign_id: str, meta: Mapping[str, object],
                      tables: Mapping[str, tuple[Sequence[str], Sequence[Sequence[object]]]]
                      ) -> int:
        """Store a campaign (its meta and rows per table); re-saving replaces it.

        :param tables: table -> (columns, rows), in the columns' order.
        """
        machine = meta.get("machine")
        m = machine if isinstance(machine, Mapping) else {}
        n = 0
        with self._tx() as cur:
            cur.execute("DELETE FROM campaigns WHERE id = %s", (campaign_id,))
            cur.execute("INSERT INTO campaigns (id, started_at, finished_at, host, cpu_model, "
                        "l3_bytes, meta) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                        (campaign_id, meta.get("started_at"), meta.get("finished_at"),
                         m.get("host"), m.get("cpu_model"), m.get("l3_bytes"), json.dumps(meta)))
            for table, (cols, rows) in tables.items():
                stmt = sql.SQL("COPY {} (campaign_id, {}) FROM STDIN").format(
                    sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, cols)))
                with cur.copy(stmt) as cp:
                    for row in rows:
                        cp.write_row([campaign_id, *row])
                n += len(rows)
        return n


#: the staging tables a batch's records are copied into (one COPY each)
_STAGE_SQL = """
    CREATE TEMP TABLE stage_sub (spool_id text, course text, assignment text,
      student text, submitted_at timestamptz, content_hash text, language text,
      batch_id text, state text, quarantine_code text, quarantine_reason text,
      arrived_at timestamptz, claimed_at timestamptz, dispatched_at timestamptz,
      started_at timestamptz, finished_at timestamptz) ON COMMIT DROP;
    CREATE TEMP TABLE stage_res (spool_id text, version text, path text,
      verdict text, score double precision, max_score double precision,
      reused_from_spool text, record jsonb) ON COMMIT DROP;
    CREATE TEMP TABLE stage_test (spool_id text, version text, name text,
      group_name text, verdict text, cpu_time_s double precision,
      wall_time_s double precision, memory_bytes bigint, exit_code int,
      signal int) ON COMMIT DROP;
"""

#: courses, batches, submissions (first stamps kept) and assignment versions
_MERGE_SQL = """
    INSERT INTO courses (name) SELECT DISTINCT course FROM stage_sub
      ON CONFLICT (name) DO NOTHING;
    INSERT INTO batches (id, host) SELECT DISTINCT batch_id, 'gradeline'
      FROM stage_sub WHERE batch_id IS NOT NULL ON CONFLICT (id) DO NOTHING;
    INSERT INTO submissions (spool_id, course_id, assignment, student, submitted_at,
        content_hash, language, batch_id, state, quarantine_code, quarantine_reason,
        arrived_at, claimed_at, dispatched_at, started_at, finished_at)
      SELECT s.spool_id, c.id, s.assignment, s.student, s.submitted_at,
        s.content_hash, s.language, s.batch_id, s.state, s.quarantine_code,
        s.quarantine_reason, s.arrived_at, s.claimed_at, s.dispatched_at,
        s.started_at, s.finished_at
      FROM stage_sub s JOIN courses c ON c.name = s.course
      ON CONFLICT (spool_id) DO UPDATE SET
        state = EXCLUDED.state,
        content_hash = COALESCE(EXCLUDED.content_hash, submissions.content_hash),
        language = COALESCE(EXCLUDED.language, submissions.language),
        quarantine_code = EXCLUDED.quarantine_code,
        quarantine_reason = EXCLUDED.quarantine_reason,
        claimed_at = COALESCE(submissions.claimed_at, EXCLUDED.claimed_at),
        dispatched_at = COALESCE(EXCLUDED.dispatched_at, submissions.dispatched_at),
        started_at = COALESCE(EXCLUDED.started_at, submissions.started_at),
        finished_at = COALESCE(EXCLUDED.finished_at, submissions.finished_at);
    INSERT INTO assignments (course_id, name, version, path, max_score)
      SELECT DISTINCT ON (c.id, s.assignment, r.version) c.id, s.assignment,
        r.version, r.path, r.max_score
      FROM stage_res r JOIN stage_sub s USING (spool_id)
      JOIN courses c ON c.name = s.course
      ON CONFLICT (course_id, name, version) DO NOTHING;
"""

#: the results not stored yet (a result is immutable per package version), except that
#: a judge error -- our fault, never a verdict on the student -- is replaced by a later
#: grading of the same version that is not one (``regrade --judge-errors``)
_RESULTS_SQL = """
    INSERT INTO results (submission_id, version, verdict, score, max_score, record)
    SELECT sub.id, r.version, r.verdict, r.score, r.max_score, r.record
    FROM stage_res r JOIN submissions sub USING (spool_id)
    ON CONFLICT (submission_id, version) DO UPDATE SET
        verdict = EXCLUDED.verdict, score = EXCLUDED.score, max_score = EXCLUDED.max_score,
        record = EXCLUDED.record, created_at = now(), reused_from = NULL
      WHERE results.verdict = 'JE' AND EXCLUDED.verdict <> 'JE'
"""

#: reused results linked to their source, which may be inserted just above (a
#: subquery in that INSERT could not see it)
_LINK_REUSED_SQL = """
    UPDATE results SET reused_from = src.id
    FROM stage_res st JOIN submissions s ON s.spool_id = st.spool_id
    JOIN submissions s2 ON s2.spool_id = st.reused_from_spool
    JOIN results src ON src.submission_id = s2.id AND src.version = st.version
    WHERE results.submission_id = s.id AND results.version = st.version
      AND results.reused_from IS NULL
"""

#: the tests of new results; older versions superseded; the submissions stored
_FINISH_SQL = """
    DELETE FROM test_results USING results res, stage_res r, submissions s
      WHERE test_results.result_id = res.id AND res.created_at = now()
        AND s.spool_id = r.spool_id AND res.submission_id = s.id AND res.version = r.version;
    INSERT INTO test_results (result_id, name, group_name, verdict, cpu_time_s,
        wall_time_s, memory_bytes, exit_code, signal)
      SELECT res.id, t.name, t.group_name, t.verdict, t.cpu_time_s, t.wall_time_s,
        t.memory_bytes, t.exit_code, t.signal
      FROM stage_test t JOIN submissions s USING (spool_id)
      JOIN results res ON res.submission_id = s.id AND res.version = t.version
      ON CONFLICT (result_id, name) DO NOTHING;
    UPDATE results SET superseded_at = now()
      FROM stage_res r JOIN submissions s USING (spool_id)
      WHERE results.submission_id = s.id AND results.version <> r.version
        AND results.superseded_at IS NULL;
    UPDATE submissions SET stored_at = COALESCE(stored_at, now())
      WHERE spool_id IN (SELECT spool_id FROM stage_sub);
"""


def _stage_rows(records: Iterable[SubmissionRecord]
                ) -> tuple[list[Row], list[Row], list[Row]]:
    """(submissions, results, tests) rows of the staging tables."""
    subs: list[Row] = []
    res: list[Row] = []
    tests: list[Row] = []
    for r in records:
        subs.append(tuple(getattr(r, c) for c in SUB_COLUMNS))
        result = r.result
        if result is None:
            continue
        res.append((r.spool_id, result.problem_version, r.package_path or "",
                    result.verdict.value, result.score, result.max_score, r.reused_from,
                    json.dumps(result.to_dict())))
        for t in result.tests:
            tests.append((r.spool_id, result.problem_version, t.name, t.group,
                          t.verdict.value, t.cpu_time_s, t.wall_time_s, t.memory_bytes,
                          t.exit_code, t.signal))
    return subs, res, tests
