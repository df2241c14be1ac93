-- Receipts the student desk gave at hand-in (issue #29): what a student can show staff,
-- and what their page lists while the submission waits to be graded. Not a foreign key
-- to submissions: a receipt exists from the moment the spool took the bytes.
CREATE TABLE receipts (
    spool_id    text PRIMARY KEY,
    course      text NOT NULL,
    assignment  text NOT NULL,
    student     text NOT NULL,
    received_at timestamptz NOT NULL,
    size        bigint NOT NULL,
    sha256      text NOT NULL,
    receipt     jsonb NOT NULL                -- as given, with its signature
);
CREATE INDEX receipts_student ON receipts (course, student);
