"""After the deadline, the full suite runs as one bulk Slurm array at the course's lower
priority: a live submission made while it runs is graded before the bulk work that was
still pending (two one-core nodes, the local cluster)."""

from __future__ import annotations

import shutil
import signal
import subprocess
import time

import psycopg
import pytest
import yaml

from ..support import BIN, EXAMPLES, db_env, started_after_live, submit_slow_sums

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
STUDENTS = 8


def test_live_feedback_is_not_queued_behind_the_bulk_after_deadline_job(db, slurm_conf,
                                                                        tmp_path):
    shutil.copytree(EXAMPLES / "bigsum", tmp_path / "bigsum")
    course = tmp_path / "course.yaml"
    course.write_text(yaml.safe_dump({
        "course": "prio", "assignments": [
            {"name": "bigsum", "package": "bigsum", "deadline": "2026-12-01T12:00:00+00:00",
             "visibility": {"secret": "after_deadline"}},
            {"name": "late", "package": "bigsum", "deadline": "2027-12-01T12:00:00+00:00"}],
        "bulk": {"nice": 5000}}))
    e = db_env(db, slurm_conf)
    spool = ["--course-file", str(course), "--spool", str(tmp_path / "spool")]
    accepted = EXAMPLES / "bigsum" / "submissions" / "accepted" / "sum.c"
    submit_slow_sums(tmp_path, STUDENTS, spool, e, sleep_s=0.2,
                     submitted_at="2026-12-01T11:00:00+00:00")
    subprocess.run([str(BIN), "run", *spool, "--executor", "local", "--cpus", "0"], env=e,
                   check=True, capture_output=True, timeout=600)  # the visible phase

    bulk = subprocess.Popen([str(BIN), "deadline", *spool, "--now", "2026-12-02T00:00:00+00:00",
                             "--executor", "slurm", "--shard-size", "1"], env=e,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # the bulk array is queued
            q = subprocess.run(["squeue", "-h", "-t", "PD", "-o", "%j %y"], env=e,
                               capture_output=True, text=True).stdout
            if "5000" in q:
                break
            time.sleep(0.2)
        else:
            pytest.fail("the bulk array never showed up pending at nice 5000")
        subprocess.run([str(BIN), "submit", "late", "live", str(accepted), *spool], env=e,
                       check=True, capture_output=True, timeout=60)
        live = subprocess.run([str(BIN), "run", *spool, "--executor", "slurm", "--dispatch",
                               "arrays"], env=e, capture_output=True, text=True, timeout=600)
        assert live.returncode == 0, live.stderr
        out, err = bulk.communicate(timeout=600)
    finally:
        if bulk.poll() is None:
            bulk.kill()
    assert bulk.returncode == 0, err
    assert f"{STUDENTS} student(s) due, 0 already fully graded, {STUDENTS} graded now" in out
    after, starts = started_after_live(db, "live", bulk_assignment="bigsum")
    # first come first served, every bulk task (all queued before it) would start first
    print(f"bulk submissions started after the live one: {after} of {STUDENTS}")
    assert after >= 2, starts


def test_serve_runs_the_after_deadline_phase_by_itself(db, slurm_conf, tmp_path):
    shutil.copytree(EXAMPLES / "bigsum", tmp_path / "bigsum")
    course = tmp_path / "course.yaml"
    course.write_text(yaml.safe_dump({"course": "auto", "assignments": [
        {"name": "bigsum", "package": "bigsum", "deadline": "2026-01-01T00:00:00+00:00"}]}))
    e = db_env(db, slurm_conf)
    spool = ["--course-file", str(course), "--spool", str(tmp_path / "spool")]
    accepted = EXAMPLES / "bigsum" / "submissions" / "accepted" / "sum.c"
    subprocess.run([str(BIN), "submit", "bigsum", "ann", str(accepted), *spool,
                    "--submitted-at", "2025-12-31T23:00:00+00:00"], env=e, check=True,
                   capture_output=True, timeout=60)
    log = (tmp_path / "serve.log").open("w")
    serve = subprocess.Popen([str(BIN), "serve", *spool, "--executor", "slurm",
                              "--deadline-every", "1"], env=e, stdout=log,
                             stderr=subprocess.STDOUT, start_new_session=True)
    try:
        until = time.monotonic() + 180
        with psycopg.connect(db, autocommit=True) as c:
            while time.monotonic() < until:
                rows = c.execute("SELECT r.version LIKE '%/groups-%' FROM results r "
                                 "ORDER BY r.id").fetchall() \
                    if c.execute("SELECT to_regclass('results')").fetchone()[0] else []
                if [r[0] for r in rows] == [True, False]:
                    break
                time.sleep(0.5)
            else:
                pytest.fail("serve never graded the counting submission with the full "
                            "suite: " + (tmp_path / "serve.log").read_text()[-3000:])
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=120)
        log.close()
    assert "after the deadline of bigsum: 1 counting submission(s) graded" in \
        (tmp_path / "serve.log").read_text()
