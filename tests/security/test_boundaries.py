"""Attacks on the installation, as another local account (created here) and from
inside the sandbox: each one is refused (SECURITY.md lists the boundaries)."""
import grp
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import psycopg
import pytest

from grader.adapters.spool import Spool
from grader.adapters.store.server import LocalServer, _bindir
from grader.core.errors import ConfigError
from grader.formats.load import load_problem

from ..support import BIN, FIXTURES, own_local_server

OTHER = "gradeline-other"


@pytest.fixture(scope="module")
def as_other():
    """Run a command as an ordinary local account that is not the grading account."""
    if os.geteuid() != 0:
        pytest.skip("creating another local account needs root")
    try:
        pwd.getpwnam(OTHER)
    except KeyError:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", OTHER],
                       check=True)

    def run(argv, **env):
        envs = [f"{k}={v}" for k, v in {"PATH": "/usr/bin:/bin", **env}.items()]
        return subprocess.run(["runuser", "-u", OTHER, "--", "env", "-i", *envs,
                               *map(str, argv)], capture_output=True, text=True,
                              timeout=60, cwd="/")
    return run


@pytest.fixture(scope="module")
def server(pg_url):
    with own_local_server() as (s, _):
        yield s


def _psql(run, server, *conn):
    return run([_bindir() / "psql", "-X", "-w", *conn, "-c", "SELECT 1"],
               PGCONNECT_TIMEOUT="3")


def test_only_the_grading_account_gets_into_the_local_database(server, as_other):
    port = str(server.port)
    tries = {
        "superuser over TCP": ["-h", "127.0.0.1", "-p", port, "-U", "postgres", "-d",
                               "gradeline"],
        "gradeline's role without its secret": ["-h", "127.0.0.1", "-p", port, "-U",
                                                server.role, "-d", "gradeline"],
        "the socket": ["-h", str(server.data), "-p", port, "-U", "postgres", "-d",
                       "postgres"],
    }
    for what, conn in tries.items():
        r = _psql(as_other, server, *conn)
        assert r.returncode != 0 and "1 row" not in r.stdout, f"{OTHER} got in: {what}"
    why = " ".join(_psql(as_other, server, *conn).stderr for conn in tries.values())
    assert "no pg_hba.conf entry" in why and "password" in why and "ermission denied" in why
    stolen = as_other(["cat", server.passfile])
    assert stolen.returncode != 0 and not stolen.stdout
    # The grading account: a least-privilege role that owns its database.
    with psycopg.connect(server.url, autocommit=True) as c:
        me, superuser, owner = c.execute(
            "SELECT current_user, rolsuper, pg_get_userbyid(datdba) FROM pg_roles, "
            "pg_database WHERE rolname = current_user AND datname = current_database()"
        ).fetchone()
        assert (me, superuser, owner) == (server.role, False, server.role)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.execute("COPY (SELECT 1) TO PROGRAM 'true'")  # superusers run programs
    assert "passfile=" in server.url and server.passfile.read_text().split(":")[-1].strip() \
        not in server.url


def test_an_earlier_trust_cluster_is_converted_with_its_data(pg_url, as_other):
    """A cluster an earlier gradeline made (trust for everyone, gradeline connected as
    the superuser) keeps its grades and admits only the grading account afterwards."""
    state = Path(tempfile.mkdtemp(prefix="gradeline-old-", dir="/var/tmp"))
    state.chmod(0o755)
    s = LocalServer(state)
    try:
        root, data = state / "postgres", state / "postgres" / "data"
        root.mkdir()
        data.mkdir(mode=0o700)
        shutil.chown(root, "postgres", "postgres")
        shutil.chown(data, "postgres", "postgres")
        s._run([str(_bindir() / "initdb"), "-D", str(data), "--auth=trust", "-U", "postgres"])
        port = 41000 + os.getpid() % 1000
        with (data / "postgresql.conf").open("a") as f:
            f.write(f"port = {port}\nlisten_addresses = '127.0.0.1'\n"
                    f"unix_socket_directories = '{data}'\n")
        (root / "port").write_text(f"{port}\n")
        s._run([str(_bindir() / "pg_ctl"), "-D", str(data), "-l", str(root / "log"), "-w",
                "start"])
        old = f"postgresql://postgres@127.0.0.1:{port}"
        for db in ("gradeline", "gradeline_demo"):
            with psycopg.connect(old + "/postgres", autocommit=True) as c:
                c.execute(f"CREATE DATABASE {db}")
            with psycopg.connect(f"{old}/{db}", autocommit=True) as c:
                c.execute("CREATE TABLE grades (id serial PRIMARY KEY, verdict text)")
                c.execute("INSERT INTO grades (verdict) VALUES ('AC')")
        assert _psql(as_other, s, "-h", "127.0.0.1", "-p", str(port), "-U", "postgres",
                     "-d", "gradeline").returncode == 0  # the hole this closes

        url = s.start()  # running: converted in place

        assert s.secured()
        assert _psql(as_other, s, "-h", "127.0.0.1", "-p", str(port), "-U", "postgres",
                     "-d", "gradeline").returncode != 0
        for db in ("gradeline", "gradeline_demo"):
            with psycopg.connect(url.replace("/gradeline?", f"/{db}?"), autocommit=True) as c:
                c.execute("INSERT INTO grades (verdict) VALUES ('WA')")  # owns the table
                assert [v for v, in c.execute("SELECT verdict FROM grades ORDER BY id")] \
                    == ["AC", "WA"]
    finally:
        s.stop("immediate")
        shutil.rmtree(state, ignore_errors=True)


def test_other_accounts_cannot_read_or_plant_submissions(as_other, tmp_path):
    base = Path(tempfile.mkdtemp(prefix="gradeline-spool-", dir="/var/tmp"))
    try:
        base.chmod(0o755)
        spool = Spool(base / "spool", create=True)
        src = tmp_path / "a.py"
        src.write_text("print('my own work')\n")
        spool.submit(course="c", assignment="hello", student="alice", path=src)
        batch = spool.claim("b1")
        assert batch
        files = [p for p in (base / "spool").rglob("*") if p.is_file()]
        assert files
        for f in files:
            r = as_other(["cat", f])
            assert r.returncode != 0 and "my own work" not in r.stdout, f
        for d in ("new", "cur", "done", "quarantine"):
            assert as_other(["ls", base / "spool" / d]).returncode != 0
            assert as_other(["touch", base / "spool" / d / "planted"]).returncode != 0
        journal = batch[0].path.parent / "results.jsonl"
        assert as_other(["sh", "-c", f"echo forged >> {journal}"]).returncode != 0
        kept = [f.read_text() for f in (base / "spool").rglob("*") if f.is_file()]
        assert any("my own work" in text for text in kept)  # still there, untouched
        (base / "spool").chmod(0o777)
        with pytest.raises(ConfigError, match=r"writable by every account.*chmod o-w"):
            Spool(base / "spool")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_state_dir_others_can_write_is_refused_with_the_remedy(tmp_path):
    shared = tmp_path / "state"
    shared.mkdir()
    shared.chmod(0o777)
    env = {**os.environ, "GRADELINE_STATE_DIR": str(shared)}
    r = subprocess.run([str(BIN), "status", "--spool", str(tmp_path / "spool")], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "writable by every account" in r.stderr
    assert f"chmod go-w {shared}" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([str(BIN), "check-env"], env=env, capture_output=True, text=True,
                       timeout=120)
    assert "FAIL state dir" in r.stdout and f"-> chmod go-w {shared}" in r.stdout
    shared.chmod(0o700)
    r = subprocess.run([str(BIN), "check-env"], env=env, capture_output=True, text=True,
                       timeout=120)
    assert "ok   state dir" in r.stdout


@pytest.mark.sandbox
def test_the_sandbox_cannot_reach_the_database(server, judge, sbx_tmp):
    """A student's program that knows the server's port and socket path."""
    program = sbx_tmp / "reach_db.py"
    program.write_text(f"""
import socket
for family, where in ((socket.AF_INET, ("127.0.0.1", {server.port})),
                      (socket.AF_UNIX, "{server.data}/.s.PGSQL.{server.port}")):
    s = socket.socket(family)
    s.settimeout(1)
    try:
        s.connect(where)
        print("PWNED: reached the database at", where)
    except OSError:
        pass
a, b = map(int, input().split())
print(a + b)
""")
    result = judge.grade(load_problem(FIXTURES / "tiny"), program)
    assert result.verdict.value == "AC", [(t.name, t.verdict, t.feedback) for t in result.tests]


def test_students_hand_in_through_a_drop_directory_they_cannot_read(as_other, tmp_path):
    """Another account drops a file: it cannot list the box, cannot read or replace a
    drop of someone else's, cannot backdate its own, and is credited by file owner."""
    base = Path(tempfile.mkdtemp(prefix="gradeline-drop-", dir="/var/tmp"))
    try:
        base.chmod(0o755)
        box, spool = base / "box", base / "spool"
        env = {**os.environ, "GRADELINE_COURSE": "c"}
        subprocess.run(["groupadd", "-f", "gradeline-staff"], check=True)  # not OTHER's
        subprocess.run([BIN, "dropbox", "init", box, "--group", "gradeline-staff"],
                       check=True, env=env, timeout=60)
        assert box.stat().st_mode & 0o7777 == 0o3713
        staff = base / "staff.py"  # a drop by someone else (owned by root: refused later)
        staff.write_text("print('secret staff solution')\n")
        theirs = subprocess.run([BIN, "drop", box, "hello", staff], check=True, env=env,
                                capture_output=True, text=True, timeout=60).stdout.strip()
        mine = base / "mine.py"
        mine.write_text("print('hello')\n")
        mine.chmod(0o644)
        r = as_other([BIN, "drop", box, "hello", mine])
        assert r.returncode == 0, r.stderr
        dropped = box / r.stdout.strip()
        assert as_other(["ls", box]).returncode != 0  # cannot list
        assert dropped.stat().st_gid == grp.getgrnam("gradeline-staff").gr_gid
        stolen = as_other(["cat", box / theirs])  # even knowing the name
        assert stolen.returncode != 0 and "secret" not in stolen.stdout
        assert as_other(["rm", "-f", box / theirs]).returncode != 0  # sticky: not its own
        assert as_other(["touch", "-d", "2001-01-01", dropped]).returncode == 0
        link = as_other(["ln", "-s", "/etc/hostname", box / f"hello--{'0' * 32}--x.py"])
        assert link.returncode == 0
        r = subprocess.run([BIN, "dropbox", "collect", box, "--spool", spool], env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert "collected 1, refused 2" in r.stderr, r.stderr
        assert "not a regular file" in r.stderr and "grading account itself" in r.stderr
        (line,) = r.stdout.splitlines()
        _, student, assignment, when = line.split()
        assert (student, assignment) == (OTHER, "hello")
        assert not when.startswith("2001")  # ctime, not the mtime it set
        assert not list(box.iterdir())
        kept = [p.read_text() for p in (spool / "quarantine").rglob("payload/*")]
        assert kept == ["print('secret staff solution')\n"]  # refused, not deleted
        payload = [p for p in spool.rglob("mine.py")]
        assert payload and payload[0].read_text() == "print('hello')\n"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_another_account_cannot_change_what_the_prolog_runs_as_root(as_other):
    """The prolog runs this checkout's gradeline as root: another account can change
    none of it -- or, on a checkout installed carelessly, the prolog refuses it."""
    repo = Path(__file__).resolve().parents[2]
    check = subprocess.run(["sh", "-c", f'. "{repo}/slurm/root-check.sh"; untrusted "{repo}"'],
                           capture_output=True, text=True, timeout=120)
    if check.stdout.strip():  # the prolog would log this path and run nothing
        pytest.skip(f"this checkout is not root-only ({check.stdout.split()[0]}); "
                    "test_prolog_and_epilog_run_only_root_owned_code covers the refusal")
    for target in (repo / "slurm" / "prolog.sh", repo / "slurm" / "root-check.sh",
                   repo / ".venv" / "bin" / "gradeline", repo / "grader" / "__init__.py"):
        r = as_other(["sh", "-c", f"echo 'id > /tmp/pwned' >> {target}"])
        assert r.returncode != 0, f"{OTHER} could change {target}"
    r = as_other(["mv", repo / "grader", repo / "grader.old"])
    assert r.returncode != 0
