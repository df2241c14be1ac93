"""The site user: an ordinary account that runs gradeline as a site would (not root)."""
import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT

USER = "gradeline-ci"
PY = Path(sys.executable)
BIN = PY.parent / "gradeline"


def _require(reason: str) -> None:
    if os.environ.get("GRADELINE_REQUIRE_SANDBOX") == "1":
        pytest.fail(f"site-user tier required but {reason}")
    pytest.skip(reason)


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
        _require(f"{USER} cannot read this checkout ({ROOT}) or its venv: a site installs "
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


