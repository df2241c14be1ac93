"""A node whose runtime breaks is drained and its work goes elsewhere (issue #28): on
the local cluster's node n2 the grading runtime cannot start (Apptainer asked for and
not on the node's PATH, set for n2 alone through the cluster's per-node task
environment); pilots that land there report it and fail, the pool drains n2 with the
reason, and every submission is graded on n1 with the verdict it was built to get."""

from __future__ import annotations

import csv
import os
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from grader.adapters.store.postgres import Store

from ..support import BIN, spool_course

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


def _node(conf: str, name: str) -> str:
    return subprocess.run(["scontrol", "show", "node", name], capture_output=True, text=True,
                          env={**os.environ, "SLURM_CONF": conf}, check=True).stdout


def _scontrol(conf: str, *args: str, check: bool = True) -> None:
    subprocess.run(["scontrol", "update", *args], capture_output=True, check=check,
                   env={**os.environ, "SLURM_CONF": conf})


def test_a_node_that_cannot_grade_is_drained_and_the_work_goes_elsewhere(
        tmp_path, slurm_conf, db):
    if "NodeName=n2" not in _node(slurm_conf, "n2"):
        pytest.skip("the local cluster has one node")
    broken = Path(slurm_conf).parent / "node-env" / "n2"
    course, entries = spool_course(tmp_path, 10, seed=21)
    env = {**os.environ, "GRADELINE_DB_URL": db, "GRADELINE_COURSE": "c",
           "SLURM_CONF": slurm_conf}
    env.pop("GRADELINE_FAULT", None)
    broken.write_text("GRADELINE_RUNTIME=apptainer\nPATH=/nonexistent\n")
    # n1 is held first, so that pilots can only land on n2 (else n1's pilot may grade
    # everything before one starts there); n1 comes back once n2 is drained.
    _scontrol(slurm_conf, "NodeName=n1", "State=DRAIN", "Reason=held by a test")
    try:
        run = subprocess.Popen([str(BIN), "run", "--spool", str(tmp_path / "spool"),
                                "--executor", "slurm", "--dispatch", "pilots"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=env)
        deadline = time.monotonic() + 600
        while "DRAIN" not in _node(slurm_conf, "n2") and run.poll() is None:
            assert time.monotonic() < deadline, "n2 was never drained"
            time.sleep(1)
        _scontrol(slurm_conf, "NodeName=n1", "State=RESUME")
        out, _ = run.communicate(timeout=900)
        assert run.returncode == 0, out
        n2 = _node(slurm_conf, "n2")
        assert "DRAIN" in n2 and "gradeline" in n2 and "cannot start" in n2, n2
        status = subprocess.run([str(BIN), "status", "--spool", str(tmp_path / "spool")],
                                capture_output=True, text=True, env=env, timeout=120)
        assert "sick node n2: drained" in status.stdout, status.stdout
    finally:
        broken.unlink(missing_ok=True)
        for node in ("n1", "n2"):
            _scontrol(slurm_conf, f"NodeName={node}", "State=RESUME", check=False)
    with Store(db) as s:
        got = Counter(v for (v,) in s.conn.execute("SELECT verdict FROM results").fetchall())
    with (course / "manifest.csv").open() as f:
        want = Counter(row["expected_verdict"] for row in csv.DictReader(f))
    assert got == want and "JE" not in got  # every one graded elsewhere, as built
    assert sum(got.values()) == len(entries)
