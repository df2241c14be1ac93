-- Which submission counts, when the course says the student chooses (issue #26): one
-- row per choice; a student's latest choice for an assignment is the one that counts.
CREATE TABLE choices (
    id          serial PRIMARY KEY,
    course_id   int NOT NULL REFERENCES courses(id),
    assignment  text NOT NULL,
    student     text NOT NULL,
    spool_id    text NOT NULL REFERENCES submissions(spool_id),
    chosen_at   timestamptz NOT NULL DEFAULT now(),
    chosen_by   text NOT NULL                 -- the account that recorded it
);
CREATE INDEX choices_student ON choices (course_id, assignment, student, chosen_at);
