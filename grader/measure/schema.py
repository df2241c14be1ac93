"""The tidy CSV files a campaign writes: one schema, read by the campaign runner (to
write them), the store (to copy them into ``campaign_*`` tables) and the analysis.

Every file has a leading ``campaign`` column (the campaign id), then these columns.
"""

from __future__ import annotations

RUNS = ("workload", "n", "rep", "jobs", "wall_s", "throughput", "raw_throughput", "window_s",
        "mean_response_s", "p50_s", "p90_s", "p95_s", "p99_s", "max_s", "occupancy", "cpu_s",
        "warmup")
JOBS = ("workload", "n", "rep", "start_s", "finish_s")
COUNTERS = ("workload", "n", "rep", "source", "event", "cpu", "value", "unit")
#: the node monitor's samples (``grader.adapters.procfs``), for campaigns and experiments:
#: ``run`` names the repetition or design point, ``cpu`` is empty for node metrics
MONITOR = ("run", "host", "t_s", "cpu", "metric", "value")
CACHEGRIND = ("ll_mb", "ll_bytes", "assoc", "source", "assignment", "process", "Ir", "Dr", "Dw",
              "ll_refs", "ll_misses", "ll_read_misses", "ll_write_misses")

#: file name -> (PostgreSQL table, columns); the table's columns are these, lower case.
FILES: dict[str, tuple[str, tuple[str, ...]]] = {
    "runs.csv": ("campaign_runs", RUNS),
    "jobs.csv": ("campaign_jobs", JOBS),
    "counters.csv": ("campaign_counters", COUNTERS),
    "cachegrind.csv": ("campaign_cachegrind", CACHEGRIND),
    "monitor.csv": ("campaign_monitor", MONITOR),
}
META = "campaign.json"
#: an experiment's design points: one row per point x replication x response
POINTS = ("point", "rep", "warmup", "levels", "response", "value")
EXPERIMENT_META = "experiment.json"
EXPERIMENT_FILES: dict[str, tuple[str, tuple[str, ...]]] = {
    "points.csv": ("experiment_points", POINTS),
    "monitor.csv": ("campaign_monitor", MONITOR),
}
