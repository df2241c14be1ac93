-- Grading by hand (issue #57), part two: a student's grade per question of a rubric, the
-- comments at lines of their files, and an audit row for every change.
--
-- A grade keeps the ids of the items applied, never their points (the rubric file's are
-- read at each use: editing an item recomputes every grade that used it). ``version``
-- is what a save must name (optimistic locking): two graders saving the same question
-- from the same version, the second is refused as a conflict -- never an overwrite --
-- and what it tried to save is kept in its audit row.
CREATE TABLE hand_grades (
    id          bigserial PRIMARY KEY,
    course_id   int NOT NULL REFERENCES courses(id),
    assignment  text NOT NULL,
    student     text NOT NULL,
    question    text NOT NULL,
    spool_id    text,                        -- the submission graded
    items       text[] NOT NULL DEFAULT '{}',
    adjustment  double precision NOT NULL DEFAULT 0,
    reason      text NOT NULL DEFAULT '',
    grader      text NOT NULL,               -- who saved it last
    version     int NOT NULL DEFAULT 1,
    rubric_sha  text NOT NULL DEFAULT '',    -- the rubric version it was saved under
    graded_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (course_id, assignment, student, question)
);
CREATE TABLE hand_comments (
    id          bigserial PRIMARY KEY,
    grade_id    bigint NOT NULL REFERENCES hand_grades(id),
    file        text NOT NULL,
    line_first  int NOT NULL CHECK (line_first >= 1),
    line_last   int NOT NULL CHECK (line_last >= line_first),
    text        text NOT NULL,
    item        text,                        -- a rubric item's id it carries
    grader      text NOT NULL,
    made_at     timestamptz NOT NULL DEFAULT now(),
    deleted_at  timestamptz,
    deleted_by  text
);
CREATE INDEX hand_comments_grade ON hand_comments (grade_id) WHERE deleted_at IS NULL;
CREATE TABLE grade_audit (
    id          bigserial PRIMARY KEY,
    course_id   int NOT NULL REFERENCES courses(id),
    assignment  text NOT NULL,
    student     text NOT NULL,
    question    text NOT NULL,
    grader      text NOT NULL,
    at          timestamptz NOT NULL DEFAULT now(),
    action      text NOT NULL CHECK (action IN ('grade', 'conflict')),
    version     int,                         -- the version written (conflict: the one seen)
    rubric_sha  text NOT NULL DEFAULT '',
    grade       jsonb NOT NULL               -- items, adjustment, reason, comment added/deleted
);
CREATE INDEX grade_audit_question ON grade_audit (course_id, assignment, student, question, at);
