"""The Snakemake workflow: lint-clean, config validated, and a real run of one batch."""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.adapters.spool import Spool
from grader.adapters.store.postgres import Store
from grader.measure.corpus import generate_course

from ..support import ROOT

SNAKEMAKE = Path(sys.executable).parent / "snakemake"
ENV = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}


def snakemake(*args, env=None):
    return subprocess.run([str(SNAKEMAKE), *args], cwd=ROOT, capture_output=True, text=True,
                          env={**ENV, **(env or {})}, timeout=900)


def test_lint_is_clean():
    r = snakemake("--lint")
    assert r.returncode == 0 and "good condition" in r.stdout + r.stderr, r.stdout + r.stderr


def test_config_is_validated_against_the_schema():
    r = snakemake("-n", "--config", "executor=sometimes")
    assert r.returncode != 0 and "executor" in r.stdout + r.stderr


@pytest.mark.sandbox
def test_local_profile_grades_a_batch(tmp_path, request, db, sandbox_factory):
    course = tmp_path / "course"
    entries = generate_course(course, count=6, seed=3)
    spool = Spool(tmp_path / "spool", create=True)
    for e in entries:
        spool.submit(course="wf", assignment=e.assignment, student=e.student,
                     path=course / e.path)
    run_id = f"test-{os.getpid()}-{time.time_ns()}"  # never one an earlier run left
    request.addfinalizer(lambda: shutil.rmtree(ROOT / "results" / run_id, ignore_errors=True))
    r = snakemake("--profile", "profiles/local", "--config", f"spool={tmp_path / 'spool'}",
                  "course=wf", f"run_id={run_id}", env={"GRADELINE_DB_URL": db})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    summary = (ROOT / "results" / run_id / "report" / "summary.txt").read_text()
    assert "course wf" in summary
    with Store(db) as s:
        assert s.count("SELECT count(*) FROM results") == 6
    assert len(list((tmp_path / "spool" / "done").iterdir())) == 6
