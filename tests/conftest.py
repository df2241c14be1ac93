"""Shared fixtures (the helpers they and the tests use are in ``support``). Sandbox
tests need the grading image and a working runtime; without them they skip with the
reason -- unless GRADELINE_REQUIRE_SANDBOX=1 (set by `make test`), where a missing
sandbox is a failure, not a skip."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from .support import (
    ALICE,
    BOB,
    BROWSER_TOOLS,
    CHROMIUM,
    EXAMPLES,
    FIXTURES,
    ROOT,
    SLURM_NODES,
    unavailable,
)


def pytest_addoption(parser):
    parser.addoption(
        "--module-order", default=os.environ.get("GRADELINE_TEST_ORDER", "file"),
        help="file (default), reverse, or random:SEED: the order of the test modules "
             "(each module's tests keep theirs), to show that no tier depends on another "
             "having run first ($GRADELINE_TEST_ORDER)")


def pytest_collection_modifyitems(config, items):
    """Reorder whole modules as --module-order asks (see pytest_addoption)."""
    order = config.getoption("--module-order")
    if order == "file":
        return
    modules: dict[str, list] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    names = list(modules)
    if order == "reverse":
        names.reverse()
    elif order.startswith("random:"):
        import random

        random.Random(order.removeprefix("random:")).shuffle(names)
    else:
        raise pytest.UsageError(f"--module-order {order!r}: file, reverse or random:SEED")
    items[:] = [item for name in names for item in modules[name]]
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and names:
        reporter.write_line(f"module order: {order} ({names[0]} first)")


@pytest.fixture(scope="session")
def browser_tools() -> Path:
    """node_modules holding playwright-core (drives Debian's Chromium; it downloads no
    browser) and axe-core, from npm into build/tools/browser on first use: test tools,
    never the project's."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        unavailable("no node/npm: apt-get install nodejs npm")
    if not CHROMIUM.exists():
        unavailable(f"no {CHROMIUM}: apt-get install chromium")
    mods = BROWSER_TOOLS / "node_modules"
    if not ((mods / "axe-core/axe.min.js").exists()
            and (mods / "playwright-core/package.json").exists()):
        BROWSER_TOOLS.mkdir(parents=True, exist_ok=True)
        r = subprocess.run([npm, "install", "--prefix", str(BROWSER_TOOLS), "--no-audit",
                            "--no-fund", "axe-core@4", "playwright-core@1"],
                           capture_output=True, text=True, timeout=600, check=False)
        if r.returncode != 0:
            unavailable(f"npm install axe-core playwright-core failed: {r.stderr[-300:]}")
    return mods


@pytest.fixture(scope="session")
def settings():
    """This test run's settings (the environment make test sets up)."""
    from grader.settings import load

    return load()


@pytest.fixture(scope="session")
def worker_spec(settings):
    """How workers build their judge here (the installed image, this state dir)."""
    from grader.compose.worker import worker_spec

    return worker_spec(settings)


@pytest.fixture(scope="session")
def sandbox_factory(worker_spec):
    """open_sandbox(cpus, workroot) for one worker, skipping (or failing) when no sandbox
    is usable; every sandbox it made is closed (its container ended) at the end."""
    from grader.adapters.sandbox import open_sandbox
    from grader.core.errors import GradelineError

    if shutil.which("bwrap") is None and shutil.which("apptainer") is None:
        unavailable("neither bwrap nor apptainer is installed (apt-get install bubblewrap)")
    try:
        open_sandbox(worker_spec.sandbox, worker_spec.workroot, build=False).close()
    except GradelineError as e:
        unavailable(f"no usable sandbox: {e} (run 'gradeline image build')")
    made = []

    def make(cpus, workroot):
        box = open_sandbox(worker_spec.sandbox, workroot, slot=min(cpus), cpus=cpus,
                           build=False)
        made.append(box)
        return box

    yield make
    for box in made:
        box.close()


@pytest.fixture
def sbx_tmp():
    """A scratch dir the sandbox uid can reach (pytest's tmp_path is mode 700)."""
    d = Path(tempfile.mkdtemp(prefix="gradeline-test-", dir="/var/tmp"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def judge(sandbox_factory, sbx_tmp):
    from grader.judge.compile_cache import CompileCache
    from grader.judge.judge import Judge

    work = sbx_tmp / "work"
    judge = Judge(sandbox_factory([0], work), work, [0], compile_cache=CompileCache(work / "cc"))
    yield judge
    judge.close()


@pytest.fixture
def wide_judge(sandbox_factory, sbx_tmp):
    """A judge on two CPUs: a parallel shape's (``resources: {cores: 2}``)."""
    from grader.judge.compile_cache import CompileCache
    from grader.judge.judge import Judge

    cpus = sorted(os.sched_getaffinity(0))[:2]
    if len(cpus) < 2:
        pytest.skip("a two-core shape needs two CPUs")
    work = sbx_tmp / "work"
    judge = Judge(sandbox_factory(cpus, work), work, cpus,
                  compile_cache=CompileCache(work / "cc"))
    yield judge
    judge.close()


@pytest.fixture
def problem_copy(tmp_path):
    """Copy a problem package (bundled example or fixture) into tmp_path to edit it."""

    def make(name: str) -> Path:
        src = EXAMPLES / name if (EXAMPLES / name).is_dir() else FIXTURES / name
        dst = tmp_path / name
        shutil.copytree(src, dst)
        return dst

    return make


@pytest.fixture(scope="session")
def pg_url(tmp_path_factory):
    """A real PostgreSQL, started by the project's own code in a scratch state dir
    (or GRADELINE_TEST_DB_URL). Skips without server binaries unless
    GRADELINE_REQUIRE_DB=1 (set by `make test`)."""
    from grader.adapters.store.server import LocalServer
    from grader.core.errors import StoreError

    env = os.environ.get("GRADELINE_TEST_DB_URL")
    if env:
        yield env
        return
    state = Path(tempfile.mkdtemp(prefix="gradeline-pg-", dir="/var/tmp"))
    state.chmod(0o755)
    server = LocalServer(state)
    try:
        url = server.start()
    except StoreError as e:
        shutil.rmtree(state, ignore_errors=True)
        if os.environ.get("GRADELINE_REQUIRE_DB") == "1":
            pytest.fail(f"PostgreSQL required (GRADELINE_REQUIRE_DB=1) but: {e}")
        pytest.skip(f"no PostgreSQL: {e}")
    yield url
    server.stop("immediate")
    shutil.rmtree(state, ignore_errors=True)


@pytest.fixture
def db(pg_url):
    """An empty, migrated database for one test."""
    import psycopg

    from grader.adapters.store.postgres import Store

    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    with Store(pg_url) as s:
        s.migrate()
    return pg_url


@pytest.fixture(scope="session")
def slurm_conf():
    """The project's local cluster of two fake nodes (started by its own script)."""
    reason = None
    if os.geteuid() != 0:
        reason = "the local Slurm cluster needs root"
    else:
        r = subprocess.run([str(ROOT / "slurm/local-cluster.sh"), "start", str(SLURM_NODES)],
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            reason = f"local Slurm cluster did not start: {r.stderr.strip()[-500:]}"
    if reason:
        if os.environ.get("GRADELINE_REQUIRE_SLURM") == "1":
            pytest.fail(f"Slurm required (GRADELINE_REQUIRE_SLURM=1) but {reason}")
        pytest.skip(reason)
    conf = subprocess.run([str(ROOT / "slurm/local-cluster.sh"), "conf"], capture_output=True,
                          text=True).stdout.strip()
    return conf


def _slurm_jobs(conf: str) -> set[str]:
    """Every job Slurm holds (an array as its job id), or nothing when it does not answer."""
    r = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True,
                       timeout=60, env={**os.environ, "SLURM_CONF": conf}, check=False)
    return {line.split("_")[0] for line in r.stdout.split()} if r.returncode == 0 else set()


@pytest.fixture(autouse=True)
def _own_slurm_jobs(request):
    """A test that uses the local cluster leaves no job behind: what it submitted (every
    job that appeared while it ran: tests run one at a time) is cancelled after it, and
    the next test starts once Slurm has let them go, so that no test sees another's jobs
    or processes (a pilot idling out, a holder's ``sleep 300``)."""
    if "slurm_conf" not in request.fixturenames:
        yield
        return
    conf = request.getfixturevalue("slurm_conf")
    before = _slurm_jobs(conf)
    yield
    import time

    mine = _slurm_jobs(conf) - before
    if mine:
        subprocess.run(["scancel", *sorted(mine)], capture_output=True, timeout=60,
                       env={**os.environ, "SLURM_CONF": conf}, check=False)
    deadline = time.monotonic() + 120
    while mine and time.monotonic() < deadline:
        time.sleep(0.5)
        mine &= _slurm_jobs(conf)
    assert not mine, f"Slurm jobs {sorted(mine)} of this test outlived scancel by 120 s"


@pytest.fixture(scope="session")
def student_accounts() -> tuple[str, str]:
    """Two real student accounts (created when missing; root only) and a staff group
    neither is in."""
    if os.geteuid() != 0:
        pytest.skip("creating student accounts needs root")
    for name in (ALICE, BOB):
        try:
            pwd.getpwnam(name)
        except KeyError:
            subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", name],
                           check=True)
    subprocess.run(["groupadd", "-f", "gradeline-staff"], check=True)
    return ALICE, BOB


@pytest.fixture(scope="session")
def promtool() -> str:
    """Prometheus's promtool: on PATH, or taken out of Debian's prometheus package
    (downloaded, unpacked under build/, never installed: no service is started)."""
    found = shutil.which("promtool")
    if found:
        return found
    tool = ROOT / "build/tools/prometheus/usr/bin/promtool"
    if not tool.exists():
        dl = ROOT / "build/tools/dl"
        dl.mkdir(parents=True, exist_ok=True)
        r = subprocess.run(["apt-get", "download", "prometheus"], cwd=dl, capture_output=True,
                           text=True, timeout=600)
        debs = sorted(dl.glob("prometheus_*.deb"))
        if r.returncode != 0 or not debs:
            reason = f"promtool: apt-get download prometheus failed: {r.stderr.strip()[-300:]}"
            if os.environ.get("GRADELINE_REQUIRE_SANDBOX") == "1":
                pytest.fail(reason)
            pytest.skip(reason)
        subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(ROOT / "build/tools/prometheus")],
                       check=True)
    return str(tool)
