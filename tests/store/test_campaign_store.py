"""A campaign's tidy CSVs into PostgreSQL (real server), idempotently."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from grader.adapters.store.postgres import Store
from grader.measure import persist


def _campaign(tmp: Path) -> Path:
    out = tmp / "c"
    out.mkdir()
    (out / "campaign.json").write_text(json.dumps({
        "id": "campaign-test", "started_at": "2026-11-22T06:00:00",
        "finished_at": "2026-11-22T06:05:00",
        "machine": {"host": "h", "cpu_model": "cpu", "l3_bytes": 2**20}}))
    runs = [{"campaign": "campaign-test", "workload": w, "n": n, "rep": r, "jobs": 40,
             "wall_s": 10.0, "throughput": 4.0 * n, "raw_throughput": 3.9 * n,
             "window_s": 8.0, "mean_response_s": 0.25, "p50_s": 0.2, "p90_s": 0.4,
             "p95_s": 0.5, "p99_s": 0.6, "max_s": 0.7, "occupancy": n, "cpu_s": 9.0,
             "warmup": r < 0}
            for w in ("pipeline", "cpu") for n in (1, 2) for r in (-1, 0, 1)]
    with (out / "runs.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(runs[0]))
        w.writeheader()
        w.writerows(runs)
    with (out / "jobs.csv").open("w", newline="") as f:
        f.write("campaign,workload,n,rep,start_s,finish_s\n"
                "campaign-test,cpu,1,0,0.5,0.62\ncampaign-test,cpu,1,0,0.62,0.75\n")
    with (out / "cachegrind.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["campaign", "ll_mb", "ll_bytes", "assoc", "source", "assignment",
                    "process", "Ir", "Dr", "Dw", "ll_refs", "ll_misses", "ll_read_misses",
                    "ll_write_misses"])
        w.writerow(["campaign-test", 2.5, 2621440, 20, "sum.cpp", "bigsum", "cc1plus",
                    98926882, 24086096, 11452634, 656528, 137830, 72453, 65377])
    return out


def test_save_campaign_twice_stores_once(tmp_path: Path, db: str) -> None:
    out = _campaign(tmp_path)
    with Store(db) as s:
        assert persist.save(out, s) == 15
        assert persist.save(out, s) == 15  # re-saving replaces, never duplicates
        assert s.count("SELECT count(*) FROM campaigns") == 1
        assert s.count("SELECT count(*) FROM campaign_runs") == 12
        assert s.count("SELECT count(*) FROM campaign_runs WHERE warmup") == 4
        assert s.count("SELECT ll_misses FROM campaign_cachegrind WHERE process = 'cc1plus'"
                       ) == 137830
        assert s.count("SELECT l3_bytes FROM campaigns") == 2**20
        assert s.count("SELECT count(*) FROM campaign_jobs") == 2
