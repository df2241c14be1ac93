"""A GPU assignment on Slurm: its pilots ask for GRES gpu and land on the node that has
one, and the run sees that GPU's device file (and CUDA_VISIBLE_DEVICES), bound in by
the sandbox from where the node keeps it; on a cluster without a GPU it is refused
before anything is graded. The local cluster's first node gets a GPU stand-in while
this runs (GRES gpu:1 on /dev/null, a file named nvidia0 where the node's worker looks
for device files): Slurm's scheduling and gradeline's binding are real, the GPU is not
(bench/results/gpu has the runs on one)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import psycopg
import pytest
import yaml

from ..support import ROOT, SLURM_NODES, db_env, gl

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

SEES = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void) {
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    printf("%s %s %s\n", v ? v : "-", access("/dev/nvidia0", F_OK) == 0 ? "yes" : "no",
           access("/dev/nvidia1", F_OK) == 0 ? "yes" : "no");
    return 0;
}
"""


def _package(root: Path) -> Path:
    pkg = root / "gpusees"
    (pkg / "data" / "secret").mkdir(parents=True)
    (pkg / "problem.yaml").write_text("name: What a GPU run sees\nlimits: {memory: 256}\n")
    (pkg / "gradeline.yaml").write_text(yaml.safe_dump(
        {"time_limit_s": 2.0, "languages": ["c"], "resources": {"gpus": 1}}))
    (pkg / "data" / "secret" / "1.in").write_text("\n")
    (pkg / "data" / "secret" / "1.ans").write_text("0 yes no\n")
    return pkg


@pytest.fixture(scope="module")
def gpu_node(slurm_conf):
    """The two-node cluster with a GPU (stand-in) on its first node, its worker told
    where that node's device files are; afterwards the plain cluster again."""
    script = str(ROOT / "slurm/local-cluster.sh")
    devices = Path(tempfile.mkdtemp(prefix="gradeline-gpu-", dir="/var/tmp"))
    devices.chmod(0o755)
    (devices / "nvidia0").touch()
    (devices / "nvidia1").touch()  # on the node, but not the job's: never bound in
    r = subprocess.run([script, "start", str(SLURM_NODES), "--gpu"], capture_output=True,
                       text=True, timeout=900)
    if r.returncode != 0:
        pytest.fail(f"the cluster with a GPU did not start: {r.stderr[-1500:]}")
    env_dir = Path(slurm_conf).parent / "node-env"
    (env_dir / "n1").write_text(f"GRADELINE_GPU_DEVICES={devices}\nGRADELINE_RUNTIME=bwrap\n")
    try:
        yield slurm_conf
    finally:
        (env_dir / "n1").unlink(missing_ok=True)
        subprocess.run([script, "start", str(SLURM_NODES)], capture_output=True, text=True,
                       timeout=900, check=True)
        shutil.rmtree(devices, ignore_errors=True)


def test_a_gpu_assignment_is_refused_where_no_node_has_one(slurm_conf, db, tmp_path):
    """(First in the module: the module's GPU stand-in comes with the next test.)"""
    _package(tmp_path / "pk")
    src = tmp_path / "sees.c"
    src.write_text(SEES)
    common = ["--spool", tmp_path / "spool", "--assignments", tmp_path / "pk"]
    env = db_env(db, slurm_conf)
    gl("submit", "gpusees", "ann", src, *common, env=env, ok=True, timeout=120)
    r = gl("run", *common, "--executor", "slurm", env=env, timeout=300)
    assert r.returncode != 0
    assert "gpusees: the Slurm cluster cannot give one grading 1 core, 1 GPU per node: it " \
           "asks for 1 GPU(s) on a node, and it has no GPU (Slurm GRES gpu). Nothing was " \
           "graded" in r.stderr, r.stderr
    assert list((tmp_path / "spool" / "new").iterdir())  # still waiting, nothing lost


def test_a_gpu_assignment_grades_on_the_gres_node_seeing_its_gpu(gpu_node, db, tmp_path):
    env = db_env(db, gpu_node)
    pkg = _package(tmp_path / "pk")
    src = tmp_path / "sees.c"
    src.write_text(SEES)
    common = ["--spool", tmp_path / "spool", "--assignments", tmp_path / "pk"]
    gl("submit", "gpusees", "ann", src, *common, env=env, ok=True, timeout=120)
    r = gl("run", *common, "--executor", "slurm", "--dispatch", "pilots", env=env,
           timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    with psycopg.connect(db) as c:
        verdict, record = c.execute(
            "SELECT r.verdict, r.record FROM results r WHERE r.superseded_at IS NULL").fetchone()
    slurm = record["runtime"].get("slurm", {})
    assert verdict == "AC", json.dumps(record["tests"])[:2000]
    assert slurm.get("slurmd_nodename") == "n1" and slurm.get("slurm_job_gpus") == "0", slurm
    assert pkg.exists()
