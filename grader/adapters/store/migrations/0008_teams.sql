-- Teams (issue #56): an assignment's teams, and the log of who joined and left each,
-- with who made the change and when. Append-only: a change is a new row, never an edit
-- (a trigger refuses UPDATE and DELETE), so a student's earlier team stays known.
CREATE FUNCTION gradeline_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only: a change is a new row', TG_TABLE_NAME;
END $$;

CREATE TABLE teams (
    id          serial PRIMARY KEY,
    course_id   int NOT NULL REFERENCES courses(id),
    assignment  text NOT NULL,
    name        text NOT NULL,
    join_code   text NOT NULL DEFAULT '',      -- '' for a team staff formed
    created_at  timestamptz NOT NULL,
    created_by  text NOT NULL,
    UNIQUE (course_id, assignment, name)
);
CREATE UNIQUE INDEX teams_join_code ON teams (course_id, assignment, join_code)
    WHERE join_code <> '';

CREATE TABLE team_events (
    id          bigserial PRIMARY KEY,
    team_id     int NOT NULL REFERENCES teams(id),
    student     text NOT NULL,
    action      text NOT NULL CHECK (action IN ('join', 'leave')),
    at          timestamptz NOT NULL,
    by_account  text NOT NULL,                 -- the student, or the staff account
    reason      text NOT NULL DEFAULT ''
);
CREATE INDEX team_events_team ON team_events (team_id, at);

CREATE TRIGGER teams_append_only BEFORE UPDATE OR DELETE ON teams
    FOR EACH ROW EXECUTE FUNCTION gradeline_append_only();
CREATE TRIGGER team_events_append_only BEFORE UPDATE OR DELETE ON team_events
    FOR EACH ROW EXECUTE FUNCTION gradeline_append_only();
