-- Two-phase grading (issue #26): when staff released an assignment's results beyond
-- its visible groups. One row per release; the latest counts, and a release can be
-- withdrawn by a row with withdrawn = true.
CREATE TABLE releases (
    id          serial PRIMARY KEY,
    course_id   int NOT NULL REFERENCES courses(id),
    assignment  text NOT NULL,
    released_at timestamptz NOT NULL DEFAULT now(),
    released_by text NOT NULL,                -- the account that said so
    withdrawn   boolean NOT NULL DEFAULT false
);
CREATE INDEX releases_assignment ON releases (course_id, assignment, released_at);
