"""PostgreSQL results store (psycopg 3): migrations, idempotent bulk ingest, staff queries.

Ingest is idempotent on its keys -- a submission by its spool id, a result by
(submission, assignment version), a test result by (result, test name) -- so a
batch's JSONL can be ingested any number of times and every row exists once.
Bulk rows go through COPY into temporary staging tables, then one INSERT ...
ON CONFLICT DO NOTHING per table, all in one transaction: a crash mid-ingest
leaves nothing behind, and the re-run ingests everything.
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import psycopg

from grader.errors import StoreError

log = logging.getLogger(__name__)

SUB_COLUMNS = ("spool_id", "course", "assignment", "student", "submitted_at", "content_hash",
               "language", "batch_id", "state", "quarantine_code", "quarantine_reason",
               "arrived_at", "claimed_at", "dispatched_at", "started_at", "finished_at")
RES_COLUMNS = ("spool_id", "version", "path", "verdict", "score", "max_score",
               "reused_from_spool", "record")
TEST_COLUMNS = ("spool_id", "version", "name", "group_name", "verdict", "cpu_time_s",
                "wall_time_s", "memory_bytes", "exit_code", "signal")


def _migrations() -> list[tuple[str, str]]:
    files = resources.files("grader").joinpath("migrations")
    return sorted((f.name, f.read_text(encoding="utf-8")) for f in files.iterdir()
                  if f.name.endswith(".sql"))


class Store:
    """A connection to the results database."""

    def __init__(self, url: str, *, connect_timeout_s: int = 5) -> None:
        try:
            self.conn = psycopg.connect(url, connect_timeout=connect_timeout_s)
        except psycopg.OperationalError as e:
            raise StoreError(f"cannot connect to the results database: "
                             f"{str(e).strip().splitlines()[0]}") from e
        self.url = url

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Cursor[Any]]:
        try:
            with self.conn.transaction(), self.conn.cursor() as cur:
                yield cur
        except psycopg.Error as e:
            raise StoreError(f"database error: {str(e).strip().splitlines()[0]}") from e

    # -- schema ----------------------------------------------------------------
    def migrate(self) -> list[str]:
        """Apply pending migrations in order; returns the names applied."""
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
        return applied

    # -- ingest ----------------------------------------------------------------
    def ingest(self, records: Iterable[Mapping[str, Any]], *, fault: str | None = None) -> int:
        """Store a batch of records (see grader.pipeline); returns results newly stored.

        :param fault: test hook: "after-copy" exits the process before commit.
        """
        subs, res, tests = [], [], []
        for r in records:
            subs.append(tuple(r.get(c) for c in SUB_COLUMNS))
            result = r.get("result")
            if result is None:
                continue
            res.append((r["spool_id"], result["problem_version"], r.get("package_path", ""),
                        result["verdict"], result["score"], result["max_score"],
                        r.get("reused_from_spool"), json.dumps(result)))
            for t in result.get("tests", []):
                tests.append((r["spool_id"], result["problem_version"], t["name"], t["group"],
                              t["verdict"], t.get("cpu_time_s"), t.get("wall_time_s"),
                              t.get("memory_bytes"), t.get("exit_code"), t.get("signal")))
        if not subs:
            return 0
        with self._tx() as cur:
            cur.execute("""
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
                  signal int) ON COMMIT DROP;""")
            for table, cols, rows in (("stage_sub", SUB_COLUMNS, subs),
                                      ("stage_res", RES_COLUMNS, res),
                                      ("stage_test", TEST_COLUMNS, tests)):
                with cur.copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN") as cp:
                    for row in rows:
                        cp.write_row(row)
            if fault == "after-copy":
                import os
                os._exit(137)  # simulate a crash before commit (tests only)
            cur.execute("""
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
                  ON CONFLICT (course_id, name, version) DO NOTHING;""")
            cur.execute("""
                INSERT INTO results (submission_id, version, verdict, score, max_score, record)
                  SELECT sub.id, r.version, r.verdict, r.score, r.max_score, r.record
                  FROM stage_res r JOIN submissions sub USING (spool_id)
                  ON CONFLICT (submission_id, version) DO NOTHING""")
            new = cur.rowcount
            # Link reused results to their source (which may be inserted just above:
            # a subquery in that INSERT could not see it).
            cur.execute("""
                UPDATE results SET reused_from = src.id
                  FROM stage_res st JOIN submissions s ON s.spool_id = st.spool_id
                  JOIN submissions s2 ON s2.spool_id = st.reused_from_spool
                  JOIN results src ON src.submission_id = s2.id AND src.version = st.version
                  WHERE results.submission_id = s.id AND results.version = st.version
                    AND results.reused_from IS NULL""")
            cur.execute("""
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
                  WHERE spool_id IN (SELECT spool_id FROM stage_res);""")
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

    def reusable(self, version: str, content_hash: str) -> tuple[str, dict[str, Any]] | None:
        """A stored result for identical content of the same assignment version."""
        with self._tx() as cur:
            cur.execute("""SELECT s.spool_id, r.record FROM results r
                           JOIN submissions s ON s.id = r.submission_id
                           WHERE r.version = %s AND s.content_hash = %s AND r.reused_from IS NULL
                             AND r.verdict <> 'JE'
                           ORDER BY r.id LIMIT 1""", (version, content_hash))
            row = cur.fetchone()
        return (row[0], row[1]) if row else None

    def status(self, course: str) -> list[tuple[str, str, int]]:
        """(assignment, state or verdict, count) rows for a course."""
        with self._tx() as cur:
            cur.execute("""
                SELECT s.assignment, COALESCE(r.verdict, s.state), count(*)
                FROM submissions s JOIN courses c ON c.id = s.course_id
                LEFT JOIN results r ON r.submission_id = s.id AND r.superseded_at IS NULL
                WHERE c.name = %s GROUP BY 1, 2 ORDER BY 1, 2""", (course,))
            return [(a, v, int(n)) for a, v, n in cur.fetchall()]

    def current_results(self, course: str, assignment: str) -> list[tuple[str, dict[str, Any]]]:
        """(student, result record) of each student's latest graded submission."""
        with self._tx() as cur:
            cur.execute("""
                SELECT DISTINCT ON (s.student) s.student, r.record
                FROM submissions s JOIN courses c ON c.id = s.course_id
                JOIN results r ON r.submission_id = s.id AND r.superseded_at IS NULL
                WHERE c.name = %s AND s.assignment = %s
                ORDER BY s.student, s.submitted_at DESC, s.id DESC""", (course, assignment))
            return [(st, rec) for st, rec in cur.fetchall()]

    def outdated(self, course: str, assignment: str, version: str
                 ) -> list[dict[str, Any]]:
        """Graded submissions whose current result is for another package version."""
        with self._tx() as cur:
            cur.execute("""
                SELECT s.spool_id, s.student, s.submitted_at, s.content_hash, s.language,
                       s.arrived_at
                FROM submissions s JOIN courses c ON c.id = s.course_id
                JOIN results r ON r.submission_id = s.id AND r.superseded_at IS NULL
                WHERE c.name = %s AND s.assignment = %s AND r.version <> %s
                ORDER BY s.id""", (course, assignment, version))
            cols = [d.name for d in cur.description or []]
            return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]

    def count(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        """A single number (tests and benchmarks)."""
        with self._tx() as cur:
            cur.execute(sql, params)
            row = cur.fetchone()
        return int(row[0]) if row else 0

    def save_campaign(self, out: Path) -> int:
        """Store a campaign directory (campaign.json + tidy CSVs); re-saving replaces it."""
        meta = json.loads((out / "campaign.json").read_text())
        cid = meta["id"]
        tables = {"runs.csv": ("campaign_runs", [
                      "workload", "n", "rep", "warmup", "jobs", "wall_s", "throughput",
                      "raw_throughput", "window_s", "mean_response_s", "p50_s", "p90_s",
                      "p95_s", "p99_s", "max_s", "occupancy", "cpu_s"]),
                  "jobs.csv": ("campaign_jobs", ["workload", "n", "rep", "start_s",
                                                 "finish_s"]),
                  "counters.csv": ("campaign_counters", [
                      "workload", "n", "rep", "source", "event", "cpu", "value", "unit"]),
                  "cachegrind.csv": ("campaign_cachegrind", [
                      "ll_mb", "ll_bytes", "assoc", "source", "assignment", "process", "Ir",
                      "Dr", "Dw", "ll_refs", "ll_misses", "ll_read_misses",
                      "ll_write_misses"])}
        n = 0
        m = meta.get("machine", {})
        with self._tx() as cur:
            cur.execute("DELETE FROM campaigns WHERE id = %s", (cid,))
            cur.execute("INSERT INTO campaigns (id, started_at, finished_at, host, cpu_model, "
                        "l3_bytes, meta) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                        (cid, meta.get("started_at"), meta.get("finished_at"), m.get("host"),
                         m.get("cpu_model"), m.get("l3_bytes"), json.dumps(meta)))
            for fname, (table, cols) in tables.items():
                path = out / fname
                if not path.exists() or not path.stat().st_size:
                    continue
                with path.open(newline="") as f:
                    rows = list(csv.DictReader(f))
                db_cols = ", ".join(c.lower() for c in cols)
                with cur.copy(f"COPY {table} (campaign_id, {db_cols}) FROM STDIN") as cp:
                    for r in rows:
                        cp.write_row([cid, *[r.get(c) if r.get(c) not in ("", None) else None
                                             for c in cols]])
                n += len(rows)
        return n
