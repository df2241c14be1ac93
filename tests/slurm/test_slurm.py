"""Grading through a real (local) Slurm cluster: one array job per batch, exclusive
cores, retries, JE after a bound, and a killed `gradeline run` resumed."""
import contextlib
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from grader.adapters.store.postgres import Store
from grader.core.jobs import GradingJob, JudgeFault
from grader.pipeline.local_executor import grade_many

from ..support import BIN, EXAMPLES, ROOT, SLURM_NODES, proc_files, spool_course

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


NODES = SLURM_NODES


def run(tmp_path, url, conf, *extra, fault=None, timeout=900):
    env = {**os.environ, "GRADELINE_DB_URL": url, "GRADELINE_COURSE": "c", "SLURM_CONF": conf,
           "GRADELINE_FAULT_DIR": str(tmp_path)}
    env.pop("GRADELINE_FAULT", None)
    if fault:
        env["GRADELINE_FAULT"] = fault
    return subprocess.run([str(BIN), "run", "--spool", str(tmp_path / "spool"),
                           "--executor", "slurm", "--dispatch", "arrays", *extra],
                          capture_output=True, text=True, env=env, timeout=timeout)


def start_run(tmp_path, url, conf, **popen):
    """`gradeline run` through Slurm in the background (the test kills things under it)."""
    env = {**os.environ, "GRADELINE_DB_URL": url, "GRADELINE_COURSE": "c", "SLURM_CONF": conf}
    env.pop("GRADELINE_FAULT", None)
    return subprocess.Popen([str(BIN), "run", "--spool", str(tmp_path / "spool"), "--executor",
                             "slurm", "--dispatch", "arrays", "--shard-size",
                             popen.pop("shard_size")], env=env, **popen)


def array_jobs(tmp_path):
    return sorted((tmp_path / "spool").glob("*/*/array-*/job.json"))


def test_batch_is_one_array_job_and_matches_direct_grading(tmp_path, slurm_conf, db,
                                                           worker_spec):
    course, entries = spool_course(tmp_path, 60)
    r = run(tmp_path, db, slurm_conf, "--shard-size", "4")
    assert r.returncode == 0, r.stdout + r.stderr
    jobs = array_jobs(tmp_path)
    assert len(jobs) == 1  # exactly one sbatch for the whole batch
    job_id = re.search(r'"job_id": "(\d+)"', jobs[0].read_text()).group(1)
    comp = Path(slurm_conf).parent / "jobcomp.log"
    tasks = [ln for ln in comp.read_text().splitlines() if f"ArrayJobId={job_id} " in ln]
    n_tasks = len(list(jobs[0].parent.glob("shard-*.json")))
    assert len(tasks) == n_tasks >= 2 and all("JobState=COMPLETED" in t for t in tasks)
    with Store(db) as s:
        assert s.count("SELECT count(*) FROM submissions") == 60
        assert s.count("SELECT count(*) FROM results") == 60
        rows = s.conn.execute(
            "SELECT s.student, s.assignment, s.spool_id, r.record FROM submissions s "
            "JOIN results r ON r.submission_id = s.id").fetchall()
    # The same submissions graded directly (no Slurm, no spool) give the same results.
    by_path = {(e.student, e.assignment, e.attempt): course / e.path for e in entries}
    stored = {}
    for student, assignment, _sid, rec in rows:
        stored.setdefault((student, assignment), []).append(rec)
    jobs_direct = [GradingJob(EXAMPLES / a, p) for (_s, a, _n), p in by_path.items()]
    direct = {o.key: o.result for o in grade_many(jobs_direct, [0, 1], worker_spec)}
    for (student, assignment, _n), p in by_path.items():
        d = direct[str(p)]
        assert not isinstance(d, JudgeFault), d
        recs = [x for x in stored[(student, assignment)] if x["content_hash"] == d.content_hash]
        assert recs, f"{student}/{assignment}: no stored result for {p}"
        rec = recs[0]
        assert (rec["verdict"], rec["score"]) == (d.verdict.value, d.score), p
        assert [t["verdict"] for t in rec["tests"]] == [t.verdict.value for t in d.tests]


def test_run_on_pilots_grades_each_submission_once_and_leaves_no_pilot(tmp_path, slurm_conf,
                                                                      db):
    """`gradeline run`'s default on Slurm: pilot tasks pull tickets of the batch; when it
    is stored, no pilot is left holding a core."""
    spool_course(tmp_path, 20, seed=21)
    env = {**os.environ, "GRADELINE_DB_URL": db, "GRADELINE_COURSE": "c", "SLURM_CONF": slurm_conf}
    env.pop("GRADELINE_FAULT", None)
    r = subprocess.run([str(BIN), "run", "--spool", str(tmp_path / "spool"), "--executor",
                        "slurm", "--shard-size", "3"], capture_output=True, text=True, env=env,
                       timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "pilot tasks pulling work" in r.stderr
    pilot_jobs = sorted((tmp_path / "spool/pilots").glob("array-*/job.json"))
    assert pilot_jobs and not array_jobs(tmp_path)  # pilots only, no array per batch
    with Store(db) as s:
        assert s.count("SELECT count(*) FROM submissions") == 20
        assert s.count("SELECT count(*) FROM results WHERE verdict = 'JE'") == 0
        tasks = s.conn.execute(
            "SELECT DISTINCT r.record->'runtime'->'slurm'->>'slurm_array_job_id' FROM results r "
            "WHERE r.reused_from IS NULL").fetchall()
    ids = {re.search(r'"job_id": "(\d+)"', j.read_text()).group(1) for j in pilot_jobs}
    assert {t for (t,) in tasks} <= ids  # every result was graded in a pilot
    shards = (tmp_path / "spool").glob("*/*/array-*/shard-*[0-9].jsonl")
    keys = [json.loads(ln)["submission"] for o in shards for ln in o.read_text().splitlines()]
    assert keys and len(keys) == len(set(keys))  # nothing graded twice
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # scancel is asynchronous
        q = subprocess.run(["squeue", "-h", "-j", ",".join(sorted(ids)), "-o", "%i %T"],
                           capture_output=True, text=True, env=env)
        if not q.stdout.strip():
            break
        time.sleep(0.5)
    assert not q.stdout.strip(), f"pilots still queued or running: {q.stdout}"


def test_tasks_run_concurrently_on_distinct_cores(tmp_path, slurm_conf, db):
    spool_course(tmp_path, 24, seed=9)
    r = run(tmp_path, db, slurm_conf, "--shard-size", "3")
    assert r.returncode == 0, r.stderr
    with Store(db) as s:
        rows = s.conn.execute(
            "SELECT r.record->'runtime'->'slurm'->>'slurm_array_task_id', "
            "r.record->'runtime'->'cpus', s.started_at, s.finished_at FROM results r "
            "JOIN submissions s ON s.id = r.submission_id WHERE r.reused_from IS NULL").fetchall()
    spans = {}
    for task, cpus, start, end in rows:
        assert len(cpus) == 1  # one whole core per task, and it is recorded
        lo, hi, cs = spans.get(task, (start, end, set()))
        spans[task] = (min(lo, start), max(hi, end), cs | {cpus[0]})
    overlapping = [(a, b) for a in spans for b in spans if a < b
                   and spans[a][2] != spans[b][2]
                   and spans[a][0] < spans[b][1] and spans[b][0] < spans[a][1]]
    assert overlapping, f"no two tasks ran at the same time on different cores: {spans}"


def test_a_crashed_task_is_retried(tmp_path, slurm_conf, db):
    spool_course(tmp_path, 12, seed=11)
    r = run(tmp_path, db, slurm_conf, "--shard-size", "3", fault="shard-start:shard-0=crash-once")
    assert r.returncode == 0, r.stderr
    assert len(array_jobs(tmp_path)) == 2  # the first array, then one retry of shard 0
    with Store(db) as s:
        assert s.count("SELECT count(*) FROM results") == 12
        assert s.count("SELECT count(*) FROM results WHERE verdict = 'JE'") == 0


def test_a_task_that_always_fails_ends_in_je_not_a_hang(tmp_path, slurm_conf, db):
    spool_course(tmp_path, 8, seed=12)
    t0 = time.monotonic()
    r = run(tmp_path, db, slurm_conf, "--shard-size", "3", "--retries", "1",
            fault="shard-start:shard-0=crash")
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - t0 < 300
    with Store(db) as s:
        je = s.count("SELECT count(*) FROM results WHERE verdict = 'JE'")
        assert 1 <= je <= 3  # shard 0's submissions (identical ones may share a result)
        assert s.count("SELECT count(*) FROM results") == 8
    # our fault, not the students': graded again with the same package, each judge error
    # replaced (its test rows too), nothing else touched
    env = {**os.environ, "GRADELINE_DB_URL": db, "GRADELINE_COURSE": "c",
           "SLURM_CONF": slurm_conf}
    env.pop("GRADELINE_FAULT", None)
    rg = subprocess.run([str(BIN), "regrade", "--spool", str(tmp_path / "spool"),
                         "--judge-errors", "--executor", "local", "--cpus", "0"],
                        capture_output=True, text=True, env=env, timeout=600)
    assert rg.returncode == 0, rg.stderr
    assert f"regraded {je} judge errors" in rg.stdout
    with Store(db) as s:
        assert s.count("SELECT count(*) FROM results WHERE verdict = 'JE'") == 0
        assert s.count("SELECT count(*) FROM results") == 8
        assert s.count("SELECT count(*) FROM test_results t JOIN results r ON r.id = "
                       "t.result_id WHERE t.verdict = 'JE'") == 0
        assert s.count("SELECT count(*) FROM test_results") == s.count(
            "SELECT sum(jsonb_array_length(record->'tests')) FROM results")


def test_killed_run_resumes_exactly_once(tmp_path, slurm_conf, db):
    spool_course(tmp_path, 30, seed=13)
    p = start_run(tmp_path, db, slurm_conf, shard_size="3", stdout=subprocess.DEVNULL,
                  stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        outs = list((tmp_path / "spool" / "cur").glob("*/array-*/shard-*[0-9].jsonl"))
        if sum(len(o.read_text().splitlines()) for o in outs) >= 3:
            break
        time.sleep(0.2)
    os.killpg(p.pid, signal.SIGKILL)  # the run dies; its array keeps going in Slurm
    p.wait()
    r = run(tmp_path, db, slurm_conf, "--shard-size", "3")
    assert r.returncode == 0, r.stderr
    assert len(array_jobs(tmp_path)) == 1  # waited for the running array, resubmitted nothing
    with Store(db) as s:
        assert s.count("SELECT count(*) FROM submissions") == 30
        assert s.count("SELECT count(*) FROM results") == 30
    lines = [ln for o in (tmp_path / "spool").glob("*/*/array-*/shard-*[0-9].jsonl")
             for ln in o.read_text().splitlines()]
    assert len(lines) == len(set(lines))  # nothing graded twice
    logs = "".join(p.read_text() for p in (tmp_path / "spool").glob("*/*/array-*/logs/*.log"))
    assert "Traceback" not in logs  # the resumed run left the running tasks' files alone


def _node_processes(node):
    """Every process of array tasks running on ``node`` (by their Slurm environment)."""
    return [int(pid) for pid, env in proc_files("environ")
            if f"SLURMD_NODENAME={node}".encode() in env.split(b"\0")]


def test_losing_a_node_mid_batch_loses_nothing(tmp_path, slurm_conf, db):
    """n2 runs tasks and dies mid-batch (its slurmd and everything its tasks ran):
    every submission is still stored exactly once, none as a judge error. Which node
    finished which submission depends on timing, so that is not asserted."""
    spool_course(tmp_path, 40, seed=17)
    p = start_run(tmp_path, db, slurm_conf, shard_size="2", stdout=subprocess.PIPE,
                  stderr=subprocess.STDOUT, text=True)
    state = Path(slurm_conf).parent
    victims = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not victims:
        time.sleep(0.2)
        victims = _node_processes("n2")
    assert victims, "no task ever ran on n2"
    # The node dies: its slurmd and everything its tasks were running.
    slurmd = int((state / "slurmd-n2.pid").read_text())
    os.kill(slurmd, signal.SIGKILL)
    for pid in _node_processes("n2"):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    try:
        out, _ = p.communicate(timeout=600)
        lost = not Path(f"/proc/{slurmd}").exists() and not _node_processes("n2")
    finally:
        subprocess.run([str(ROOT / "slurm/local-cluster.sh"), "start", str(NODES)],
                       capture_output=True, timeout=300)  # bring n2 back for other tests
    assert lost, "n2 was not lost"
    assert p.returncode == 0, out
    with Store(db) as s:
        assert s.count("SELECT count(*) FROM submissions") == 40
        assert s.count("SELECT count(*) FROM results") == 40
        assert s.count("SELECT count(*) FROM results WHERE verdict = 'JE'") == 0
        assert s.count("SELECT count(*) FROM (SELECT submission_id FROM results "
                       "GROUP BY submission_id HAVING count(*) > 1) d") == 0


def test_prolog_and_epilog_run_for_every_array_task(tmp_path, slurm_conf, db):
    """The Slurm prolog gives each task its L3 partition -- or, without RDT (this VM),
    says so in the cache log -- and never stops the task from grading."""
    log = Path("/var/log/gradeline/cache.log")
    before = log.read_text() if log.exists() else ""
    spool_course(tmp_path, 6)
    r = run(tmp_path, db, slurm_conf, "--shard-size", "3")
    assert r.returncode == 0, r.stdout + r.stderr
    job_id = re.search(r'"job_id": "(\d+)"', array_jobs(tmp_path)[0].read_text()).group(1)
    comp = (Path(slurm_conf).parent / "jobcomp.log").read_text().splitlines()
    task_ids = [re.search(r"JobId=(\d+)", ln).group(1) for ln in comp
                if f"ArrayJobId={job_id} " in ln]
    assert len(task_ids) == 2
    new = log.read_text()[len(before):]
    for t in task_ids:
        assert re.search(rf"prolog job {t}(:| cpus)", new), new[-2000:]
    with Store(db) as s:
        assert s.count("SELECT count(*) FROM results") == 6
