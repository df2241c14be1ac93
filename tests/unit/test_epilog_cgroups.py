"""The Slurm epilog removes the shard cgroups a killed task left inside its job's
cgroup (and then the job's own, which Slurm could not remove past them)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _epilog(root: Path, job: str) -> None:
    env = {**os.environ, "GRADELINE_CGROUP_ROOT": str(root), "SLURM_JOB_ID": job,
           "GRADELINE_RESCTRL_ROOT": str(root / "no-resctrl")}
    p = subprocess.run([str(REPO / "slurm/epilog.sh")], env=env, capture_output=True,
                       text=True, timeout=60, check=False)
    assert p.returncode == 0, p.stderr


def _job(root: Path, ctrl: str, job: int, leftover: str | None) -> Path:
    d = root / ctrl / "slurm_n1" / "uid_1000" / f"job_{job}"
    task = d / "step_batch" / "task_0"
    task.mkdir(parents=True)
    if leftover:
        (task / leftover / "slot1").mkdir(parents=True)
    return d


def test_a_killed_tasks_shard_cgroups_go_with_its_job(tmp_path: Path) -> None:
    killed = [_job(tmp_path, c, 7, "gradeline-123-0-abcdef") for c in ("memory", "pids")]
    other = _job(tmp_path, "memory", 8, "gradeline-456-0-123456")  # another job's
    clean = _job(tmp_path, "cpuset", 7, None)  # nothing of ours: Slurm's business
    _epilog(tmp_path, "7")
    assert not any(d.exists() for d in killed)
    assert (other / "step_batch/task_0/gradeline-456-0-123456/slot1").is_dir()
    assert (clean / "step_batch/task_0").is_dir()


def test_a_cgroup_still_in_use_is_left_alone(tmp_path: Path) -> None:
    job = _job(tmp_path, "memory", 9, "gradeline-1-0-aaaaaa")
    busy = job / "step_batch/task_0/gradeline-1-0-aaaaaa/slot1"
    (busy / "cgroup.procs").write_text("4242\n")  # rmdir refuses, as on a live cgroup
    _epilog(tmp_path, "9")
    assert busy.is_dir() and job.is_dir()
