"""An experiment as the Snakemake workflow through Slurm: Snakemake's Slurm executor
plugin submits one exclusive job per design point x replication (and the warm-up), and
the report is built from what they wrote."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..support import ROOT

SNAKEMAKE = Path(sys.executable).parent / "snakemake"
pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


def test_one_slurm_job_per_point(tmp_path, request, slurm_conf, sandbox_factory):
    cfg = tmp_path / "experiment.yaml"
    cfg.write_text('experiment:\n  factors: ["cache=0,1"]\n  reps: 1\n  work: 2\n')
    run_id = f"exp-test-{os.getpid()}-{time.time_ns()}"  # never one an earlier run left
    request.addfinalizer(lambda: shutil.rmtree(ROOT / "results" / run_id, ignore_errors=True))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "SLURM_CONF": slurm_conf}
    r = subprocess.run([str(SNAKEMAKE), "--profile", "profiles/experiment-slurm",
                        "experiment_report", "--configfile", "workflows/config.yaml", str(cfg),
                        "--config", f"run_id={run_id}",
                        # the local cluster's nodes have one core each
                        "--set-threads", "experiment_point=1", "experiment_warmup=1",
                        "--slurm-logdir", str(tmp_path / "slurm-logs")],
                       cwd=ROOT, capture_output=True, text=True, env=env, timeout=1200)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    exp = ROOT / "results" / run_id / "experiment"
    recs = [json.loads(p.read_text()) for p in sorted((exp / "points").glob("*.json"))]
    assert sorted((x["point"], x["rep"]) for x in recs) == [(0, -1), (0, 0), (1, 0)]
    jobs = [x["context"].get("slurm_job") for x in recs]
    assert all(jobs) and len(set(jobs)) == 3, jobs  # one Slurm job each
    assert all(x["jobs"] == 2 for x in recs)
    assert (exp / "report" / "index.html").exists()
