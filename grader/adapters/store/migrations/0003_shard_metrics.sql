-- Counter samples of array tasks (issue #9: the metrics flow reaches the database).
-- One row per event and CPU (cpu NULL: total over the task's cores), counted around
-- a whole shard on its exclusive cores; source says likwid | perf (measured) or
-- cachegrind (simulated), so the two never mix silently.
ALTER TABLE metrics
    ADD COLUMN cpu           integer,
    ADD COLUMN context       text,
    ADD COLUMN node          text,
    ADD COLUMN array_job_id  text,
    ADD COLUMN array_task_id text,
    ADD COLUMN submissions   integer;
