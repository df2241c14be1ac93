"""The site user: an ordinary account that runs gradeline as a site would (not root);
student accounts beside it, and a desk and web server it runs for them."""
import os
import pwd
import secrets
import shutil
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..support import (
    BIN,
    EXAMPLES,
    PY,
    ROOT,
    STAFF_GROUP,
    TA,
    TA2,
    USER,
    DeskRun,
    answers,
    free_port,
    site_required,
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


@pytest.fixture
def desk_factory(site_user, student_accounts):
    """A function (assignment extras, course extras) -> DeskRun: the grading account (an
    ordinary user) runs ``gradeline desk`` and ``gradeline web`` for a course whose
    roster holds the two student accounts; both stop after the test."""
    run, scratch = site_user
    alice, bob = student_accounts
    procs: list[subprocess.Popen[str]] = []
    dirs: list[Path] = []

    def make(assignment: dict[str, Any], course_extra: dict[str, Any] | None = None,
             more: tuple[dict[str, Any], ...] = ()) -> DeskRun:
        course = scratch / f"desk-course-{len(dirs)}"
        shutil.rmtree(course, ignore_errors=True)
        course.mkdir()
        shutil.copytree(EXAMPLES / "bigsum", course / "bigsum")
        (course / "roster.csv").write_text(f"student,name,email\n{alice},A,a@x\n{bob},B,b@x\n")
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
