"""`gradeline serve` on the local Slurm: a closed-loop replay obeys the interactive
response-time law, every stage is stamped, a flood does not starve others, and a
`kill -9` mid-stream loses nothing and grades nothing twice (the CI-sized soak)."""
import json
import os
import signal
import subprocess
import time

import pytest

from grader.adapters.spool import Spool
from grader.adapters.store.postgres import Store
from grader.measure.corpus import generate_course

from ..support import BIN, db_env, gl, proc_files

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


def env_for(url, conf):
    return {**db_env(url, conf), "GRADELINE_COURSE": "c"}


def start_serve(tmp_path, url, conf, *extra, log="serve.log"):
    with (tmp_path / log).open("w") as out:  # the child keeps its own descriptor
        return subprocess.Popen([str(BIN), "serve", "--spool", str(tmp_path / "spool"),
                                 "--executor", "slurm", "--report", "2", "--submit-interval",
                                 "0.2", "--no-dedupe", *extra], env=env_for(url, conf),
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def cli(tmp_path, url, conf, *args, timeout=600):
    return gl(*args, env=env_for(url, conf), cwd=tmp_path, timeout=timeout, ok=True).stdout


def stop(p, tmp_path, timeout=300):
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=timeout) == 0, (tmp_path / "serve.log").read_text()[-3000:]


def test_closed_loop_replay_obeys_the_interactive_response_time_law(tmp_path, slurm_conf, db):
    generate_course(tmp_path / "course", count=60, seed=21)
    trace = tmp_path / "closed.csv"
    cli(tmp_path, db, slurm_conf, "trace", "gen", "closed", "--corpus",
        str(tmp_path / "course"), "--students", "4", "--attempts", "6", "--think", "3",
        "-o", str(trace))
    p = start_serve(tmp_path, db, slurm_conf)
    try:
        cli(tmp_path, db, slurm_conf, "trace", "replay", str(trace), "--mode", "closed",
            "--spool", str(tmp_path / "spool"), "--timeout", "300")
    finally:
        stop(p, tmp_path)
    out = cli(tmp_path, db, slurm_conf, "trace", "analyse", "--students", "4", "--think", "3",
              "--cores", "2", "--json", str(tmp_path / "a.json"))
    a = json.loads((tmp_path / "a.json").read_text())
    assert a["count"] == 24, out
    assert a["closed"]["error"] < 0.10, out  # R = N/X - Z within 10%
    # every stage is stamped, in order, for every submission
    with Store(db) as s:
        rows = s.conn.execute("SELECT arrived_at, claimed_at, dispatched_at, started_at, "
                              "finished_at, stored_at FROM submissions").fetchall()
    assert len(rows) == 24
    for row in rows:
        assert None not in row and list(row) == sorted(row), row
    # the same run, exported for simulators and captured as a trace
    cli(tmp_path, db, slurm_conf, "trace", "swf", "-o", str(tmp_path / "run.swf"))
    jobs = [ln.split() for ln in (tmp_path / "run.swf").read_text().splitlines()
            if not ln.startswith(";")]
    assert len(jobs) == 24 and all(len(j) == 18 for j in jobs)
    cli(tmp_path, db, slurm_conf, "trace", "capture", "--spool", str(tmp_path / "spool"),
        "-o", str(tmp_path / "captured.csv"))
    captured = (tmp_path / "captured.csv").read_text().splitlines()
    assert len(captured) == 25 and "spool:" not in "".join(captured)


def _stray_serve_processes(spool):
    return [pid for pid, cmd in proc_files("cmdline")
            if b"serve" in cmd and str(spool).encode() in cmd]


def test_kill_9_mid_stream_loses_nothing_and_grades_nothing_twice(tmp_path, slurm_conf, db):
    """The CI-sized soak: 200 submissions (one student flooding) arrive while serve
    grades them; serve is killed with SIGKILL mid-stream and started again."""
    course = tmp_path / "course"
    entries = generate_course(course, count=160, seed=23)
    spool = Spool(tmp_path / "spool", create=True)
    flood = [e for e in entries if e.assignment == "bigsum"][:1] * 40
    p = start_serve(tmp_path, db, slurm_conf, "--batch-max", "30", "--per-student", "2")
    killed = False
    try:
        for i, e in enumerate(entries):
            spool.submit(course="c", assignment=e.assignment, student=e.student,
                         path=course / e.path)
            if i < len(flood):
                spool.submit(course="c", assignment=flood[i].assignment, student="flooder",
                             path=course / flood[i].path)
            if i == 80:  # mid-stream: results are being stored, arrays are in flight
                deadline = time.monotonic() + 300
                while not any((tmp_path / "spool" / "done").iterdir()):
                    assert time.monotonic() < deadline, "nothing was stored"
                    time.sleep(0.2)
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                killed = True
                p = start_serve(tmp_path, db, slurm_conf, "--batch-max", "30",
                                "--per-student", "2", log="serve2.log")
            time.sleep(0.02)
        p2 = subprocess.run([str(BIN), "serve", "--spool", str(tmp_path / "spool"),
                             "--executor", "slurm", "--exit-when-idle", "--report", "0",
                             "--no-dedupe", "--per-student", "2"], env=env_for(db, slurm_conf),
                            capture_output=True, text=True, timeout=900)  # a second server
        assert p2.returncode == 0, p2.stdout + p2.stderr
    finally:
        if p.poll() is None:
            stop(p, tmp_path)
    assert killed
    total = len(entries) + len(flood)
    new, cur, done, quarantined = (len(list(spool.dir(d).iterdir()))
                                   for d in ("new", "cur", "done", "quarantine"))
    assert (new, cur, done + quarantined) == (0, 0, total)
    with Store(db) as s:
        assert s.count("SELECT count(*) FROM submissions") == total
        assert s.count("SELECT count(*) FROM results") == done
        assert s.count("SELECT count(*) FROM submissions WHERE stored_at IS NULL") == 0
        per_batch = s.conn.execute(
            "SELECT max(n) FROM (SELECT count(*) AS n FROM submissions WHERE student = "
            "'flooder' GROUP BY batch_id) f").fetchone()[0]
    journals = [ln for j in (tmp_path / "spool" / "batches").glob("*/results.jsonl")
                for ln in j.read_text().splitlines()]
    ids = [json.loads(ln)["spool_id"] for ln in journals]
    assert len(ids) == len(set(ids)) == total  # each recorded exactly once
    assert per_batch == 2  # the flood waited its turn: two per batch, everyone else first
    assert not _stray_serve_processes(tmp_path / "spool")


def test_a_pilot_that_dies_holding_work_loses_nothing(tmp_path, slurm_conf, db):
    """A pilot task is killed (exit 137, as by SIGKILL) as it takes its first ticket:
    the server gives the ticket back, another pilot grades it; every submission gets
    its real verdict, once."""
    course = tmp_path / "course"
    entries = generate_course(course, count=12, seed=29)
    spool = Spool(tmp_path / "spool", create=True)
    for e in entries:
        spool.submit(course="c", assignment=e.assignment, student=e.student,
                     path=course / e.path)
    env = {**env_for(db, slurm_conf), "GRADELINE_FAULT": "pilot-ticket=crash-once",
           "GRADELINE_FAULT_DIR": str(tmp_path)}
    r = subprocess.run([str(BIN), "serve", "--spool", str(tmp_path / "spool"), "--executor",
                        "slurm", "--exit-when-idle", "--report", "0", "--no-dedupe",
                        "--pilot-idle", "5"], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "queued again" in r.stderr, r.stderr  # the dead pilot's ticket was given back
    pilot_logs = "".join(p.read_text() for p in (tmp_path / "spool" / "pilots").glob(
        "array-*/logs/*.log"))
    assert "to grade on" in pilot_logs
    with Store(db) as s:
        rows = s.conn.execute("SELECT r.verdict FROM results r").fetchall()
    assert len(rows) == len(entries)
    assert all(v != "JE" for (v,) in rows), rows
