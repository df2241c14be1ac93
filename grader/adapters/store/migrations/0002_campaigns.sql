-- Scaling campaigns (issue #5): one row per campaign, per repetition, per counter
-- sample and per cachegrind run. Same shape as the campaign's tidy CSV files.
CREATE TABLE campaigns (
    id          text PRIMARY KEY,
    started_at  timestamptz,
    finished_at timestamptz,
    host        text,
    cpu_model   text,
    l3_bytes    bigint,
    meta        jsonb NOT NULL
);

CREATE TABLE campaign_runs (
    campaign_id     text NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    workload        text NOT NULL,
    n               integer NOT NULL,
    rep             integer NOT NULL,
    warmup          boolean NOT NULL,
    jobs            integer NOT NULL,
    wall_s          double precision NOT NULL,
    throughput      double precision,
    raw_throughput  double precision,
    window_s        double precision,
    mean_response_s double precision,
    p50_s double precision, p90_s double precision, p95_s double precision,
    p99_s double precision, max_s double precision,
    occupancy       double precision,
    cpu_s           double precision,
    PRIMARY KEY (campaign_id, workload, n, rep)
);

CREATE TABLE campaign_jobs (               -- every job of every rep (response times)
    campaign_id text NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    workload    text NOT NULL,
    n           integer NOT NULL,
    rep         integer NOT NULL,
    start_s     double precision NOT NULL,  -- seconds from the rep's start
    finish_s    double precision NOT NULL
);

CREATE TABLE campaign_counters (
    campaign_id text NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    workload    text NOT NULL,
    n           integer NOT NULL,
    rep         integer NOT NULL,
    source      text NOT NULL,            -- likwid | perf
    event       text NOT NULL,
    cpu         integer,                  -- NULL: total over the measured cores
    value       double precision NOT NULL,
    unit        text
);

CREATE TABLE campaign_cachegrind (
    campaign_id     text NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    ll_mb           double precision NOT NULL,  -- simulated L3 (source: cachegrind)
    ll_bytes        bigint,
    assoc           integer,
    source          text NOT NULL,
    assignment      text,
    process         text NOT NULL,
    ir              bigint, dr bigint, dw bigint,
    ll_refs         bigint, ll_misses bigint, ll_read_misses bigint, ll_write_misses bigint
);
