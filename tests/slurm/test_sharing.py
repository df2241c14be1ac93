"""Two courses share the partition as a site runs it: slurmdbd with MariaDB, each course
its own Slurm account, live feedback under a QOS that outranks bulk grading. Course A's
after-deadline flood holds both cores and queues more; course B's live submission is
graded before A's queued work, within its bound; ``sacct`` (``gradeline usage``) gives
each course's core-hours; an account a course may not charge is a clear refusal with
nothing lost; between courses of one QOS, fair share puts the one that used less first.
(``make test-sharing`` runs this module alone.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from grader.adapters.browser import render_check

from ..support import (
    BIN,
    EXAMPLES,
    ROOT,
    SLURM_NODES,
    db_env,
    running_web,
    started_after_live,
    submit_slow_sums,
)

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
STUDENTS = 8
#: course B's live submission, from hand-in to stored, while A's flood runs: a core
#: comes free within one bulk task (a few seconds) and grading it takes about one
#: second; the rest is Slurm's dispatch and the run's own start (measured 10-20 s)
LIVE_BOUND_S = 60


def _sacctmgr(conf: str, *args: str) -> None:
    r = subprocess.run(["sacctmgr", "-i", "-n", *args], env={**os.environ, "SLURM_CONF": conf},
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 or "Nothing new added" in r.stdout + r.stderr or \
        "already exists" in r.stdout + r.stderr, (args, r.stdout, r.stderr)


@pytest.fixture(scope="module")
def accounting_conf(slurm_conf):
    """The local cluster with accounting: QOS live and bulk, accounts cs101 and cs202
    that root may charge; afterwards the plain cluster again."""
    script = str(ROOT / "slurm/local-cluster.sh")
    r = subprocess.run([script, "start", str(SLURM_NODES), "--accounting"],
                       capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        pytest.fail(f"the cluster with accounting did not start: {r.stderr[-1500:]}")
    try:
        _sacctmgr(slurm_conf, "add", "qos", "live", "Priority=1000")
        _sacctmgr(slurm_conf, "add", "qos", "bulk", "Priority=0")
        for acct in ("cs101", "cs202"):
            _sacctmgr(slurm_conf, "add", "account", acct, "Parent=gradeline",
                      f"Description=course {acct}", "Organization=local")
            _sacctmgr(slurm_conf, "add", "user", "root", f"Account={acct}")
        _sacctmgr(slurm_conf, "modify", "user", "root", "set", "QOS=normal,live,bulk")
        yield slurm_conf
    finally:
        subprocess.run([script, "start", str(SLURM_NODES)], capture_output=True, text=True,
                       timeout=900, check=True)


def course_file(tmp: Path, name: str, deadline: str, **extra: object) -> Path:
    (tmp / name).mkdir()
    shutil.copytree(EXAMPLES / "bigsum", tmp / name / "bigsum")
    path = tmp / name / "course.yaml"
    path.write_text(yaml.safe_dump({"course": name, "assignments": [
        {"name": "bigsum", "package": "bigsum", "deadline": deadline,
         "visibility": {"secret": "after_deadline"}}], **extra}))
    return path


def test_a_courses_live_feedback_is_not_queued_behind_another_courses_flood(
        accounting_conf, db, tmp_path):
    e = db_env(db, accounting_conf)
    a = course_file(tmp_path, "cs101", "2026-12-01T12:00:00+00:00",
                    slurm={"account": "cs101", "qos": "live"},
                    bulk={"nice": 0, "qos": "bulk"})
    b = course_file(tmp_path, "cs202", "2027-12-01T12:00:00+00:00",
                    slurm={"account": "cs202", "qos": "live"})
    spool_a = ["--course-file", str(a), "--spool", str(tmp_path / "spool-a")]
    spool_b = ["--course-file", str(b), "--spool", str(tmp_path / "spool-b")]
    submit_slow_sums(tmp_path, STUDENTS, spool_a, e, sleep_s=0.3,
                     submitted_at="2026-12-01T11:00:00+00:00")  # each holds a core a while
    subprocess.run([str(BIN), "run", *spool_a, "--executor", "local", "--cpus", "0"], env=e,
                   check=True, capture_output=True, timeout=600)  # A's visible phase

    # A's regrade-sized flood: its full suites as a bulk array, one task per student
    # (QOS bulk, account cs101, no nice: only the QOS and fair share set it apart)
    flood = subprocess.Popen([str(BIN), "deadline", *spool_a, "--now",
                              "2026-12-02T00:00:00+00:00", "--executor", "slurm",
                              "--shard-size", "1"], env=e, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        until = time.monotonic() + 180
        while time.monotonic() < until:  # both cores taken and A's tasks waiting
            q = subprocess.run(["squeue", "-h", "-A", "cs101", "-o", "%t %q"], env=e,
                               capture_output=True, text=True).stdout.split("\n")
            if sum(x == "R bulk" for x in q) >= SLURM_NODES and "PD bulk" in q:
                break
            time.sleep(0.2)
        else:
            pytest.fail("course A's bulk array never filled the cluster")
        accepted = EXAMPLES / "bigsum" / "submissions" / "accepted" / "sum.c"
        t0 = time.monotonic()
        subprocess.run([str(BIN), "submit", "bigsum", "live", str(accepted), *spool_b], env=e,
                       check=True, capture_output=True, timeout=60)
        live = subprocess.run([str(BIN), "run", *spool_b, "--executor", "slurm", "--dispatch",
                               "arrays"], env=e, capture_output=True, text=True, timeout=600)
        live_s = time.monotonic() - t0
        assert live.returncode == 0, live.stderr
        assert "account cs202, live QOS live" in live.stderr
        out, err = flood.communicate(timeout=600)
        flood_s = time.monotonic() - t0
    finally:
        if flood.poll() is None:
            flood.kill()
    assert flood.returncode == 0, err
    assert f"{STUDENTS} student(s) due, 0 already fully graded, {STUDENTS} graded now" in out
    after, starts = started_after_live(db, "live", bulk_course="cs101")
    print(f"course B's live submission: {live_s:.1f} s from hand-in to stored; course A's "
          f"flood ended {flood_s:.1f} s after it; A's submissions started after B's: "
          f"{after} of {STUDENTS}")
    assert after >= 2, starts
    assert live_s < LIVE_BOUND_S

    usage = subprocess.run([str(BIN), "usage", "--since", "now-1hours", "--account", "cs101",
                            "--account", "cs202"], env=e, capture_output=True, text=True,
                           timeout=60)
    assert usage.returncode == 0, usage.stderr
    print(usage.stdout)
    rows = {tuple(line.split()[:2]): line.split()[2:] for line in usage.stdout.splitlines()[1:]}
    # each course's jobs under its own account and QOS (slurmctld hands finished jobs to
    # slurmdbd asynchronously: the last of the flood's tasks may not be counted yet)
    assert int(rows[("cs101", "bulk")][0]) >= 1 and float(rows[("cs101", "bulk")][1]) > 0
    assert int(rows[("cs202", "live")][0]) >= 1
    assert not {k for k in rows if k[0] == "cs202" and k[1] == "bulk"}
    _staff_page(tmp_path, ["--course-file", str(a), "--spool", str(tmp_path / "spool-a")], e)


def _staff_page(tmp_path: Path, opts: list[str], env: dict[str, str]) -> None:
    """Course A's staff see its account's core-hours, live and bulk apart, in a browser."""
    with running_web(opts, env) as base:
        shots = Path(os.environ.get("GRADELINE_SCREENSHOTS") or tmp_path)
        shots.mkdir(parents=True, exist_ok=True)
        page = str(render_check(f"{base}/usage", shots / "staff-usage.png",
                                title="cluster use", size=(900, 400))["dom"])
        assert "cs101" in page and "bulk" in page and "core-hours" in page
        assert "cs202" not in page  # another course's use is not this course's business


def test_an_account_the_course_may_not_charge_is_refused_and_nothing_is_lost(
        accounting_conf, db, tmp_path):
    e = db_env(db, accounting_conf)
    c = course_file(tmp_path, "cs303", "2027-12-01T12:00:00+00:00",
                    slurm={"account": "cs303"})  # no such account in the database
    spool = ["--course-file", str(c), "--spool", str(tmp_path / "spool")]
    accepted = EXAMPLES / "bigsum" / "submissions" / "accepted" / "sum.c"
    subprocess.run([str(BIN), "submit", "bigsum", "ann", str(accepted), *spool], env=e,
                   check=True, capture_output=True, timeout=60)
    r = subprocess.run([str(BIN), "run", *spool, "--executor", "slurm", "--dispatch",
                        "arrays"], env=e, capture_output=True, text=True, timeout=600)
    assert r.returncode != 0
    assert "Invalid account" in r.stderr and "refused account cs303" in r.stderr, \
        r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    status = subprocess.run([str(BIN), "status", *spool], env=e, capture_output=True,
                            text=True, timeout=60)
    row = next(x.split() for x in status.stdout.splitlines() if x.startswith("bigsum"))
    assert row[1:4] == ["0", "1", "0"], status.stdout  # claimed, waiting, not graded
    c.write_text(c.read_text().replace("account: cs303", "account: cs202"))
    again = subprocess.run([str(BIN), "run", *spool, "--executor", "slurm", "--dispatch",
                            "arrays"], env=e, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "graded 1," in again.stdout


def _slurm(conf: str, *argv: str, user: str | None = None) -> str:
    """A Slurm command's output (as ``user`` through runuser when given)."""
    cmd = ["runuser", "-u", user, "--", *argv] if user else list(argv)
    r = subprocess.run(cmd, env={**os.environ, "SLURM_CONF": conf}, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, (argv, r.stdout, r.stderr)
    return r.stdout.strip()


def _raw_usage(conf: str, account: str) -> int:
    out = _slurm(conf, "sshare", "-n", "-P", "-A", account, "-o", "Account,User,RawUsage")
    return sum(int(f[2] or 0) for f in (ln.split("|") for ln in out.splitlines())
               if f[0].strip() == account and not f[1])


def test_fair_share_puts_the_course_that_used_less_first(accounting_conf):
    """Two courses with the same QOS: the one that has used the cluster (cs401 held
    both cores for a while) waits behind the one that has not (cs402, submitting as
    the ordinary user gradeline-ci, as a site's course account does), although its job
    was queued first: Slurm's fair share factor, as the local cluster configures it."""
    conf = accounting_conf
    if subprocess.run(["id", "gradeline-ci"], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", "gradeline-ci"],
                       check=True)
    for acct in ("cs401", "cs402"):  # their own: the tests above charged cs101 and cs202
        _sacctmgr(conf, "add", "account", acct, "Parent=gradeline", "Organization=local")
    _sacctmgr(conf, "add", "user", "root", "Account=cs401")
    _sacctmgr(conf, "add", "user", "gradeline-ci", "Account=cs402")
    for user, acct in (("root", "cs401"), ("gradeline-ci", "cs402")):
        _sacctmgr(conf, "modify", "user", "where", f"name={user}", f"account={acct}",
                  "set", "QOS=normal,live")  # a new association has the default QOS only
    for acct in ("cs401", "cs402"):  # an interrupted earlier run's jobs
        _slurm(conf, "scancel", f"--account={acct}")
    job = ["sbatch", "--parsable", "--qos=live", "--cpus-per-task=1", "--output=/dev/null",
           "--chdir=/tmp"]
    holders = [_slurm(conf, *job, "--account=cs401", "--wrap", "sleep 300")
               for _ in range(SLURM_NODES)]
    try:
        # usage accrues while jobs run, folded in every PriorityCalcPeriod (a minute)
        until = time.monotonic() + 200
        while _raw_usage(conf, "cs401") < _raw_usage(conf, "cs402") + 60:  # a core-minute
            assert time.monotonic() < until, _slurm(conf, "sshare", "-a")
            time.sleep(5)
        first = _slurm(conf, *job, "--account=cs401", "--wrap", "sleep 1")
        second = _slurm(conf, *job, "--account=cs402", "--wrap", "sleep 1",
                        user="gradeline-ci")
        factors = {}
        for line in _slurm(conf, "sprio", "-h", "-o", "%i %Y %F", "-j",
                           f"{first},{second}").splitlines():
            jid, prio, fs = line.split()
            factors[jid] = (int(prio), int(fs))
        print(f"sprio (priority, fair share): cs401 {factors[first]}, cs402 {factors[second]}; "
              f"cs401 RawUsage {_raw_usage(conf, 'cs401')}")
        assert factors[second][1] > factors[first][1]
        assert factors[second][0] > factors[first][0]
        _slurm(conf, "scancel", holders[0])  # one core comes free
        until = time.monotonic() + 60
        while True:
            states = dict(ln.split() for ln in _slurm(
                conf, "squeue", "-h", "--states=all", "-o", "%i %t", "-j",
                f"{first},{second}").splitlines())
            if states.get(second) in ("R", "CG", "CD") or states.get(first) != "PD":
                break
            assert time.monotonic() < until, (states, _slurm(
                conf, "squeue", "--states=all", "-o", "%i %a %t %r %N %S"),
                _slurm(conf, "sinfo", "-N", "-o", "%N %t %C %E"))
            time.sleep(0.5)
        assert states.get(first) == "PD", f"cs401's job ran before cs402's: {states}"
        owner = _slurm(conf, "sacct", "-n", "-X", "-P", "-j", second, "-o", "User,Account")
        assert owner.splitlines()[0] == "gradeline-ci|cs402", owner
    finally:
        _slurm(conf, "scancel", "--account=cs401")
        _slurm(conf, "scancel", "--account=cs402")
