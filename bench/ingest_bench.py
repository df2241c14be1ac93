"""Ingest throughput: 100,000 per-test results through COPY into PostgreSQL.

    .venv/bin/python bench/ingest_bench.py            # the project's local server
    GRADELINE_DB_URL=postgresql://... .venv/bin/python bench/ingest_bench.py

Uses a scratch database (gradeline_bench) on the same server; target >= 5,000 rows/s.
"""

from __future__ import annotations

import argparse
import time

import psycopg

from grader.adapters.store.connections import recreate_database
from grader.adapters.store.postgres import Store
from grader.adapters.store.server import database_url
from grader.core.record import SubmissionRecord
from grader.core.result import SubmissionResult, TestResult
from grader.core.verdict import Verdict
from grader.settings import load


def record(i: int, tests: int) -> SubmissionRecord:
    result = SubmissionResult(
        "bigsum", "v1", f"spool:bench-{i}", f"{i:064x}", "cpp", Verdict.AC, 100.0, 100.0,
        None, tuple(TestResult(f"secret/{k:02d}", "secret", Verdict.AC, 0.012, 0.02, 3_000_000, 0)
                    for k in range(tests)), ())
    return SubmissionRecord(
        spool_id=f"bench-{i}", course="bench", assignment="bigsum", student=f"s{i:06d}",
        submitted_at="2026-11-20T10:00:00+00:00", batch_id=f"bench-b{i // 1000}",
        state="graded", arrived_at="2026-11-20T10:00:00+00:00",
        claimed_at="2026-11-20T10:00:01+00:00", content_hash=f"{i:064x}", language="cpp",
        result=result)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--test-rows", type=int, default=100_000)
    ap.add_argument("--tests-per-result", type=int, default=10)
    ap.add_argument("--batch", type=int, default=1000, help="results per ingest transaction")
    args = ap.parse_args()
    settings = load()
    url = database_url(settings.state_dir, settings.db_url)
    bench_url = recreate_database(url, "gradeline_bench")
    n = args.test_rows // args.tests_per_result
    recs = [record(i, args.tests_per_result) for i in range(n)]
    with Store(bench_url) as s:
        s.migrate()
        t0 = time.perf_counter()
        for i in range(0, n, args.batch):
            s.ingest(recs[i:i + args.batch])
        dt = time.perf_counter() - t0
        rows = s.count("SELECT count(*) FROM test_results")
        t1 = time.perf_counter()
        s.ingest(recs[: args.batch])  # idempotent re-ingest of one batch
        again = time.perf_counter() - t1
        assert s.count("SELECT count(*) FROM test_results") == rows
    print(f"{rows} per-test rows ({n} results, {n} submissions) in {dt:.2f} s: "
          f"{rows / dt:,.0f} test rows/s ({(rows + 2 * n) / dt:,.0f} rows/s all tables); "
          f"re-ingest of {args.batch} results: {again * 1000:.0f} ms, no new rows")
    with psycopg.connect(url, autocommit=True) as c:
        c.execute("DROP DATABASE gradeline_bench")


if __name__ == "__main__":
    main()
