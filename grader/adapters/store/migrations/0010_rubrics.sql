-- Grading by hand (issue #57), part one: the rubric versions grades were given under and
-- the reveals of an anonymously graded assignment's names. The rubric itself lives in a
-- file beside the course file (versioned with it); the store keeps each version a grade
-- was saved under, by its content hash, so an audit row can be read with the points its
-- items had then.
CREATE TABLE rubric_versions (
    course_id   int NOT NULL REFERENCES courses(id),
    assignment  text NOT NULL,
    sha256      text NOT NULL,
    rubric      jsonb NOT NULL,              -- the file's data, as checked
    first_seen  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (course_id, assignment, sha256)
);
-- An instructor revealed (or hid again) the names of an anonymously graded assignment:
-- the latest row counts; every one stays, with who and when.
CREATE TABLE name_reveals (
    id          serial PRIMARY KEY,
    course_id   int NOT NULL REFERENCES courses(id),
    assignment  text NOT NULL,
    revealed_by text NOT NULL,
    revealed_at timestamptz NOT NULL DEFAULT now(),
    hidden      boolean NOT NULL DEFAULT false
);
CREATE INDEX name_reveals_assignment ON name_reveals (course_id, assignment, revealed_at);
