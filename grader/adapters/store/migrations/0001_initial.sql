-- gradeline schema v1. Plain SQL migrations (not Alembic): the schema is the
-- contract other tools read, it stays reviewable as SQL, and we need no ORM.
-- Applied in order, each in one transaction, recorded in schema_migrations.

CREATE TABLE courses (
    id          serial PRIMARY KEY,
    name        text NOT NULL UNIQUE
);

-- One row per version of an assignment package (version = content hash).
CREATE TABLE assignments (
    id          serial PRIMARY KEY,
    course_id   int NOT NULL REFERENCES courses(id),
    name        text NOT NULL,
    version     text NOT NULL,
    path        text NOT NULL,
    max_score   double precision NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (course_id, name, version)
);

CREATE TABLE batches (
    id          text PRIMARY KEY,            -- spool batch name
    host        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);

-- One row per spool entry; spool_id is the maildir-unique name: the ingest key.
CREATE TABLE submissions (
    id              bigserial PRIMARY KEY,
    spool_id        text NOT NULL UNIQUE,
    course_id       int NOT NULL REFERENCES courses(id),
    assignment      text NOT NULL,
    student         text NOT NULL,
    submitted_at    timestamptz NOT NULL,
    content_hash    text,
    language        text,
    batch_id        text REFERENCES batches(id),
    state           text NOT NULL CHECK (state IN ('claimed', 'graded', 'quarantined')),
    quarantine_code text,
    quarantine_reason text,
    -- latency stamps: queueing and service time separate cleanly
    arrived_at      timestamptz NOT NULL,
    claimed_at      timestamptz,
    dispatched_at   timestamptz,
    started_at      timestamptz,
    finished_at     timestamptz,
    stored_at       timestamptz
);
CREATE INDEX submissions_by_assignment ON submissions (course_id, assignment, state);
CREATE INDEX submissions_by_student ON submissions (course_id, student);
CREATE INDEX submissions_by_content ON submissions (content_hash);

-- One row per (submission, assignment version): idempotent ingest key.
CREATE TABLE results (
    id              bigserial PRIMARY KEY,
    submission_id   bigint NOT NULL REFERENCES submissions(id),
    version         text NOT NULL,
    verdict         text NOT NULL CHECK (verdict IN ('AC','WA','TLE','MLE','RE','OLE','CE','JE')),
    score           double precision NOT NULL,
    max_score       double precision NOT NULL,
    reused_from     bigint REFERENCES results(id),
    superseded_at   timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    record          jsonb NOT NULL,
    UNIQUE (submission_id, version)
);
CREATE INDEX results_current ON results (submission_id) WHERE superseded_at IS NULL;
CREATE INDEX results_by_verdict ON results (verdict);

CREATE TABLE test_results (
    result_id       bigint NOT NULL REFERENCES results(id) ON DELETE CASCADE,
    name            text NOT NULL,
    group_name      text NOT NULL,
    verdict         text NOT NULL,
    cpu_time_s      double precision,
    wall_time_s     double precision,
    memory_bytes    bigint,
    exit_code       int,
    signal          int,
    PRIMARY KEY (result_id, name)
);

-- Measurements (L3 counters, timings) attached to a batch or a result.
CREATE TABLE metrics (
    id          bigserial PRIMARY KEY,
    batch_id    text REFERENCES batches(id),
    result_id   bigint REFERENCES results(id),
    source      text NOT NULL,               -- likwid | perf | cachegrind | timer
    name        text NOT NULL,
    value       double precision NOT NULL,
    unit        text,
    recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX metrics_by_batch ON metrics (batch_id, name);
