-- Capacity planning (issue #13): the node monitor's samples for campaigns and
-- experiments, and the design points of factorial experiments. An experiment is a row
-- of `campaigns` too (its meta says kind = experiment), so deleting it cascades.
CREATE TABLE campaign_monitor (
    campaign_id text NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    run         text NOT NULL,               -- e.g. pipeline/2/0, p3-r1
    host        text NOT NULL,
    t_s         double precision NOT NULL,   -- seconds from the run's start
    cpu         integer,                     -- NULL: a node metric
    metric      text NOT NULL,               -- busy, user, system, iowait, steal,
                                             -- ctxt_per_s, mem_used_bytes, ...
    value       double precision NOT NULL
);
CREATE INDEX campaign_monitor_run ON campaign_monitor (campaign_id, run);

CREATE TABLE experiment_points (
    campaign_id text NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    point       integer NOT NULL,            -- index in the design's standard order
    rep         integer NOT NULL,            -- -1: the discarded warm-up
    warmup      boolean NOT NULL,
    levels      jsonb NOT NULL,              -- {"cores": 2, "runtime": "bwrap", ...}
    response    text NOT NULL,               -- throughput, wall_s, ll_mpki, ...
    value       double precision,
    PRIMARY KEY (campaign_id, point, rep, response)
);
