"""A task Slurm ends with SIGTERM (scancel, its time limit) leaves through its cleanup:
its container stops and its shard cgroup is removed. A cgroup left inside Slurm's
task cgroup would keep Slurm from removing the job's (a leak per cancelled task)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.adapters.sandbox.cgroups import CgroupManager
from grader.core.jobs import GradingJob
from grader.pipeline.shards import ArrayDir

from ..conftest import EXAMPLES, ROOT


def _ours(mgr: CgroupManager, pid: int) -> list[Path]:
    return [d for base in mgr.bases.values() for d in base.glob(f"gradeline-{pid}-*")]


def test_sigterm_mid_grading_removes_the_shard_cgroup(sandbox_factory, sbx_tmp: Path,
                                                      tmp_path: Path) -> None:
    mgr = CgroupManager.detect()
    if os.geteuid() != 0 or mgr is None:
        pytest.skip("needs root and a writable cgroup hierarchy")
    spin = tmp_path / "spin.py"
    spin.write_text("while True:\n    pass\n")  # every test runs to its time limit
    array = ArrayDir.create(sbx_tmp / "batch")
    array.shard(0).write_jobs([GradingJob(EXAMPLES / "bigsum", spin)])
    pool = sbx_tmp / "pool"
    for d in ("queue", "taken", "dropped"):
        (pool / d).mkdir(parents=True)
    (pool / "spec.json").write_text(json.dumps(
        {"idle_s": 120, "minutes": 60, "margin_s": 0, "poll_s": 0.1}))
    (pool / "queue" / "t0").write_text(json.dumps({"array_dir": str(array.path),
                                                   "index": 0}))
    env = {**os.environ, "GRADELINE_STATE_DIR": os.environ.get("GRADELINE_STATE_DIR", ""),
           "PYTHONUNBUFFERED": "1"}
    env = {k: v for k, v in env.items() if v}
    p = subprocess.Popen([sys.executable, "-m", "grader.cli.task", "--pilot", str(pool)],
                         cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        deadline = time.monotonic() + 120
        while not _ours(mgr, p.pid):  # its container is up, a test is running
            assert p.poll() is None, p.communicate()
            assert time.monotonic() < deadline, "the pilot never started its container"
            time.sleep(0.1)
        time.sleep(0.5)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 128 + signal.SIGTERM, (p.returncode, out, err)
    assert _ours(mgr, p.pid) == []
