-- Performance measured on demand (issue #54): one row per token a student used, taken
-- through the desk before their deadline (course.handin.admit_measurement). The serving
-- host measures the submission's performance tests at the course's bulk priority and
-- keeps what they gave here, not in results: the submission's grade stays its own.
-- The token number is unique per student and assignment, so two requests at once can
-- never spend one token twice; a refunded row (the measurement failed on our side)
-- keeps its number but no longer counts.
CREATE TABLE measurements (
    id           bigserial PRIMARY KEY,
    course       text NOT NULL,
    assignment   text NOT NULL,
    student      text NOT NULL,
    token        int NOT NULL CHECK (token >= 1),
    spool_id     text NOT NULL,                -- the submission measured
    requested_at timestamptz NOT NULL,
    state        text NOT NULL DEFAULT 'waiting'
                 CHECK (state IN ('waiting', 'measured', 'failed', 'refunded')),
    finished_at  timestamptz,
    reason       text NOT NULL DEFAULT '',     -- why it failed or was refunded
    performance  jsonb,                        -- core.perfresult.Performance, once measured
    UNIQUE (course, assignment, student, token)
);
CREATE INDEX measurements_student ON measurements (course, student);
CREATE INDEX measurements_waiting ON measurements (course) WHERE state = 'waiting';
