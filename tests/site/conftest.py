"""The site user: an ordinary account that runs gradeline as a site would (not root);
student accounts beside it, and a desk and web server it runs for them."""
import contextlib
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..support import (
    BIN,
    CAROL,
    EXAMPLES,
    ONDEMAND,
    PY,
    ROOT,
    STAFF_GROUP,
    TA,
    TA2,
    USER,
    DeskRun,
    Portal,
    answers,
    free_port,
    portal_needs,
    portal_request,
    site_required,
    start_pun,
    stop_pun,
)


@pytest.fixture(scope="session")
def site_user(settings, sandbox_factory, tmp_path_factory):
    """(run as the user, its scratch dir, its environment): created when missing."""
    if os.geteuid() != 0:
        pytest.skip("creating the site user needs root (as that user, run tests/contract)")
    try:
        pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", USER], check=True)
    readable = subprocess.run(["runuser", "-u", USER, "--", "test", "-r",
                               str(ROOT / "pyproject.toml"), "-a", "-x", str(PY)])
    if readable.returncode != 0:
        site_required(f"{USER} cannot read this checkout ({ROOT}) or its venv: a site installs "
                 "gradeline where its users can read it")
    home = Path(pwd.getpwnam(USER).pw_dir)
    scratch = Path("/var/tmp") / f"gradeline-site-user-{os.getpid()}"
    scratch.mkdir(mode=0o700)
    os.chown(scratch, pwd.getpwnam(USER).pw_uid, pwd.getpwnam(USER).pw_gid)
    images = settings.image_dir or settings.state_dir / "images"
    env = {"HOME": str(home), "USER": USER, "LOGNAME": USER, "LC_ALL": "C.UTF-8",
           "PATH": f"{PY.parent}:/usr/local/bin:/usr/bin:/bin",
           "GRADELINE_STATE_DIR": str(scratch / "state"),
           "GRADELINE_IMAGE_DIR": str(images),  # built by root, read-only to the user
           "GRADELINE_REQUIRE_SANDBOX": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    if "SLURM_CONF" in os.environ:
        env["SLURM_CONF"] = os.environ["SLURM_CONF"]

    def run(argv, extra=None, timeout=900):
        envs = [f"{k}={v}" for k, v in {**env, **(extra or {})}.items()]
        return subprocess.run(["runuser", "-u", USER, "--", "env", "-i", *envs, *map(str, argv)],
                              capture_output=True, text=True, timeout=timeout, cwd=scratch)

    yield run, scratch
    run([BIN, "db", "stop"], timeout=120)
    subprocess.run(["rm", "-rf", str(scratch)], check=False)


@pytest.fixture(scope="session")
def staff_account(student_accounts) -> str:
    """A member of the course's staff group (created when missing; root only)."""
    try:
        pwd.getpwnam(TA)
    except KeyError:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", "-G",
                        STAFF_GROUP, TA], check=True)
    subprocess.run(["usermod", "-a", "-G", STAFF_GROUP, TA], check=True)
    return TA


@pytest.fixture(scope="session")
def two_staff_accounts(staff_account) -> tuple[str, str]:
    """Two members of the course's staff group (the second created when missing)."""
    try:
        pwd.getpwnam(TA2)
    except KeyError:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", "-G",
                        STAFF_GROUP, TA2], check=True)
    subprocess.run(["usermod", "-a", "-G", STAFF_GROUP, TA2], check=True)
    return staff_account, TA2


@pytest.fixture(scope="session")
def teams_accounts(student_accounts, staff_account) -> tuple[str, str]:
    """A third student and a second member of the staff group (created when missing)."""
    for name, groups in ((CAROL, []), (TA2, ["-G", STAFF_GROUP])):
        try:
            pwd.getpwnam(name)
        except KeyError:
            subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", *groups,
                            name], check=True)
    subprocess.run(["usermod", "-a", "-G", STAFF_GROUP, TA2], check=True)
    return CAROL, TA2


@pytest.fixture
def portal_factory():
    """A function (a course's desk, the users who log in) -> Portal: gradeline's Open
    OnDemand app installed as a site installs it, behind the portal's Apache (its login,
    then each user's own Passenger on that user's socket); all stopped after the test."""
    portal_needs()
    made: list[tuple[Path, list[str]]] = []

    def make(d: DeskRun, users: list[str]) -> Portal:
        course = yaml.safe_load(Path(d.opts[3]).read_text())["course"]
        root = Path(tempfile.mkdtemp(prefix="gradeline-ood-", dir="/var/tmp"))
        root.chmod(0o755)  # the portal (www-data) and every user pass through
        made.append((root, users))
        passwords = {u: secrets.token_urlsafe(12) for u in users}
        port = free_port()
        app = root / "apps/sys/gradeline"  # installed as a site installs a system app
        config = root / "gradeline-ondemand.yaml"
        config.write_text(yaml.safe_dump({"title": "Grading", "courses": [
            {"name": course, "desk": str(d.sock), "staff": str(d.staff_sock)}]}))
        r = subprocess.run([str(BIN), "ondemand", "install", str(app), "--config",
                            str(config), "--python", str(PY)], capture_output=True, text=True,
                           check=False)
        assert r.returncode == 0, r.stderr
        subprocess.run(["chmod", "-R", "a+rX", str(root / "apps")], check=True)
        (root / "apache").mkdir()
        (root / "run").mkdir()
        for u in users:
            subprocess.run(["htpasswd", "-b", "-B", *(["-c"] if u == users[0] else []),
                            str(root / "apache/htpasswd"), u, passwords[u]],
                           check=True, capture_output=True)
        conf = (ONDEMAND / "portal.conf.in").read_text().replace("@ROOT@", str(root)) \
            .replace("@PORT@", str(port)).replace("@LUA@", str(root / "apache/pun_proxy.lua"))
        shutil.copy(ONDEMAND / "pun_proxy.lua", root / "apache/pun_proxy.lua")
        (root / "apache/httpd.conf").write_text(conf)
        subprocess.run(["chmod", "-R", "a+rX", str(root / "apache")], check=True)
        for u in users:
            start_pun(root, u, app)
        a = subprocess.run(["apache2", "-f", str(root / "apache/httpd.conf"), "-k", "start"],
                           capture_output=True, text=True, check=False)
        assert a.returncode == 0, a.stderr
        url = f"http://127.0.0.1:{port}"
        for _ in range(100):
            if portal_request(url, "GET", "/", None)[0] in (200, 404):
                break
            time.sleep(0.1)
        return Portal(url, root, d, course, passwords)

    yield make
    for root, users in made:
        for u in users:
            stop_pun(root, u)
        pid = root / "apache/httpd.pid"
        if pid.exists():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid.read_text()), 15)
            for _ in range(100):
                if not pid.exists():
                    break
                time.sleep(0.1)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def desk_factory(site_user, student_accounts):
    """A function (assignment extras, course extras) -> DeskRun: the grading account (an
    ordinary user) runs ``gradeline desk`` and ``gradeline web`` for a course whose
    roster holds the two student accounts (or ``roster``, a roster CSV's text); both
    stop after the test."""
    run, scratch = site_user
    alice, bob = student_accounts
    procs: list[subprocess.Popen[str]] = []
    dirs: list[Path] = []

    def make(assignment: dict[str, Any], course_extra: dict[str, Any] | None = None,
             more: tuple[dict[str, Any], ...] = (), roster: str | None = None) -> DeskRun:
        course = scratch / f"desk-course-{len(dirs)}"
        shutil.rmtree(course, ignore_errors=True)
        course.mkdir()
        shutil.copytree(EXAMPLES / "bigsum", course / "bigsum")
        (course / "roster.csv").write_text(roster or
                                           f"student,name,email\n{alice},A,a@x\n{bob},B,b@x\n")
        due = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%d %H:%M")
        (course / "course.yaml").write_text(yaml.safe_dump({
            "course": f"desk-{secrets.token_hex(3)}", "timezone": "UTC",
            "roster": "roster.csv", **(course_extra or {}),
            "assignments": [{"name": "bigsum", "package": "bigsum", "deadline": due,
                             **assignment},
                            *({"package": "bigsum", "deadline": due, **m} for m in more)]}))
        uid = pwd.getpwnam(USER).pw_uid
        subprocess.run(["chown", "-R", f"{uid}:{uid}", str(course)], check=True)
        sockdir = Path(f"/var/tmp/gradeline-desk-{os.getpid()}-{len(dirs)}")
        sockdir.mkdir(mode=0o755)
        os.chown(sockdir, uid, uid)
        dirs.append(sockdir)
        sock, staff_sock = sockdir / "desk.sock", sockdir / "web" / "staff.sock"
        assert run([BIN, "db", "start"], timeout=300).returncode == 0
        opts = ["--spool", scratch / "desk-spool", "--course-file", course / "course.yaml"]
        port = free_port()
        base = f"http://127.0.0.1:{port}"

        def start(*argv: str | Path) -> subprocess.Popen[str]:
            return subprocess.Popen(
                ["runuser", "-u", USER, "--", "env", "-i", f"HOME={scratch}",
                 f"PATH={PY.parent}:/usr/bin:/bin", f"GRADELINE_STATE_DIR={scratch / 'state'}",
                 "LC_ALL=C.UTF-8", str(BIN), *map(str, argv), *map(str, opts)],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

        new = [start("desk", "--desk", sock, "--page-url", base, "--link-minutes", "0.5"),
               start("web", "--port", str(port), "--staff-socket", staff_sock)]
        procs.extend(new)
        for _ in range(300):
            if sock.exists() and staff_sock.exists() and answers(base):
                break
            for p in new:
                assert p.poll() is None, p.stdout.read() if p.stdout else ""
            time.sleep(0.1)
        desk_pid = int(subprocess.run(["pgrep", "-P", str(new[0].pid)], capture_output=True,
                                      text=True).stdout.split()[0])  # runuser's child
        return DeskRun(run, sock, staff_sock, opts, alice, bob, base, desk_pid)

    yield make
    for p in procs:
        p.terminate()
        p.communicate(timeout=30)
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)
