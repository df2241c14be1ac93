-- Regrade requests and grades changed by hand (issue #56), all append-only (the
-- trigger of 0008): a request (about a test group, or a rubric item once hand-grading
-- gives them), at most one answer to it, and every change of a grade with who, when,
-- before, after and why. The latest change of a target counts; the earlier stay.
CREATE TABLE regrade_requests (
    id            serial PRIMARY KEY,
    course_id     int NOT NULL REFERENCES courses(id),
    assignment    text NOT NULL,
    spool_id      text NOT NULL REFERENCES submissions(spool_id),
    student       text NOT NULL,               -- whose grade it is about
    target_kind   text NOT NULL CHECK (target_kind IN ('group', 'rubric')),
    target        text NOT NULL,
    reason        text NOT NULL CHECK (reason <> ''),
    before_points double precision NOT NULL,   -- the target's points when asked
    most_points   double precision NOT NULL,   -- what the target is worth
    out_of        double precision NOT NULL CHECK (out_of > 0),  -- the result's maximum
    opened_at     timestamptz NOT NULL,
    opened_by     text NOT NULL                -- the student, or staff on their behalf
);
CREATE INDEX regrade_requests_course ON regrade_requests (course_id, assignment, opened_at);

CREATE TABLE regrade_answers (
    request_id    int PRIMARY KEY REFERENCES regrade_requests(id),  -- one answer each
    outcome       text NOT NULL CHECK (outcome IN ('regraded', 'adjusted', 'declined')),
    reason        text NOT NULL CHECK (reason <> ''),
    before_points double precision NOT NULL,
    after_points  double precision NOT NULL,
    answered_at   timestamptz NOT NULL,
    answered_by   text NOT NULL
);

CREATE TABLE grade_changes (
    id            bigserial PRIMARY KEY,
    course_id     int NOT NULL REFERENCES courses(id),
    assignment    text NOT NULL,
    target_kind   text NOT NULL CHECK (target_kind IN ('group', 'rubric', 'grade')),
    target        text NOT NULL DEFAULT '',
    spool_id      text NOT NULL DEFAULT '',    -- the submission adjusted ('' a grade)
    student       text NOT NULL DEFAULT '',    -- whose grade it overrides, or who asked
    before_points double precision NOT NULL,
    after_points  double precision NOT NULL,
    out_of        double precision NOT NULL CHECK (out_of > 0),
    reason        text NOT NULL CHECK (reason <> ''),
    made_at       timestamptz NOT NULL,
    made_by       text NOT NULL,
    request_id    int REFERENCES regrade_requests(id)
);
CREATE INDEX grade_changes_course ON grade_changes (course_id, assignment, id);

CREATE TRIGGER regrade_requests_append_only BEFORE UPDATE OR DELETE ON regrade_requests
    FOR EACH ROW EXECUTE FUNCTION gradeline_append_only();
CREATE TRIGGER regrade_answers_append_only BEFORE UPDATE OR DELETE ON regrade_answers
    FOR EACH ROW EXECUTE FUNCTION gradeline_append_only();
CREATE TRIGGER grade_changes_append_only BEFORE UPDATE OR DELETE ON grade_changes
    FOR EACH ROW EXECUTE FUNCTION gradeline_append_only();
