"""As a site runs gradeline: an ordinary user (not root), images an admin built,
array tasks on the local Slurm cluster running as that user under Apptainer.

Run by `make test` as root, which creates the user; each check runs the project's
own commands as that user (runuser), so nothing here is simulated."""
import contextlib
import csv
import os
import pwd
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..support import BIN, PY, ROOT, USER, site_required

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


def _uptime() -> float:
    """Seconds since boot, the clock of a process's start time in /proc."""
    return float(Path("/proc/uptime").read_text().split()[0])


def _survivors(since: float, grace_s: float = 10.0) -> list[str]:
    """Processes of the grading account started after ``since`` (seconds since boot)
    still alive, its PostgreSQL aside (the later tests start and stop it): after a
    command, none should be. Processes the account had before (another test's) do not
    count."""
    uid = pwd.getpwnam(USER).pw_uid
    tick = os.sysconf("SC_CLK_TCK")
    deadline = time.monotonic() + grace_s
    while True:
        left = []
        for d in Path("/proc").iterdir():
            with contextlib.suppress(OSError, IndexError, ValueError):
                if d.name.isdigit() and d.stat().st_uid == uid:
                    started = int((d / "stat").read_bytes().rsplit(b")", 1)[1].split()[19])
                    cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                    if started / tick >= since and not cmd.startswith("postgres") and \
                            "/postgres" not in cmd.split(" ")[0]:
                        left.append(f"{d.name}: {cmd.strip()}")
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)


@contextlib.contextmanager
def _cpu_hogs(load: str) -> Iterator[None]:
    """Another job on the node: a busy loop on every core (none when idle)."""
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"])
            for _ in range((os.cpu_count() or 1) if load == "loaded" else 0)]
    try:
        yield
    finally:
        for h in hogs:
            h.kill()
            h.wait()


@pytest.mark.parametrize("load", ["idle", "loaded"])
@pytest.mark.parametrize("runtime", ["apptainer", "bwrap"])
def test_sandbox_contract_and_hostile_corpus_hold_for_an_ordinary_user(site_user, runtime, load):
    """Every limit of the contract and every hostile program, without root: user
    namespaces and rlimits (no cgroup is delegated to an ordinary user here); the
    same verdicts with a busy loop on every core as on an idle node."""
    if runtime == "apptainer" and not Path("/usr/local/bin/apptainer").exists() and \
            subprocess.run(["which", "apptainer"], capture_output=True).returncode != 0:
        site_required("apptainer is not installed (make test installs it as root)")
    run, _ = site_user
    tests = [ROOT / "tests/contract", ROOT / "tests/integration/test_hostile.py",
             ROOT / "tests/integration/test_autograder.py",
             ROOT / "tests/integration/test_unittests.py"]
    if load == "idle":  # every language within its memory limit under rlimits
        tests.append(ROOT / "tests/integration/test_examples.py::"
                     "test_every_language_runs_its_accepted_solution")
    since = _uptime()
    with _cpu_hogs(load):
        r = run([PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", *tests],
                {"GRADELINE_RUNTIME": runtime})
    tail = (r.stdout + r.stderr)[-3000:]
    assert r.returncode == 0, f"as {USER} under {runtime}, {load}:\n{tail}"
    assert " passed" in tail and "skipped" not in tail, tail
    left = _survivors(since)
    assert not left, f"processes of {USER} outlived the run under {runtime}: {left}"


def _steps(run, extra, steps) -> None:
    for argv in steps:
        r = run(argv, extra)
        assert r.returncode == 0, f"{argv[1]} as {USER}: {(r.stdout + r.stderr)[-2000:]}"


def _verdicts_as_expected(run, extra, course: str, manifest_csv: Path) -> None:
    """Each (student, assignment)'s latest attempt has the verdict the corpus was built
    to get (as ``gradeline results`` reports it to the user)."""
    latest: dict[tuple[str, str], dict[str, str]] = {}
    for row in csv.DictReader(manifest_csv.read_text().splitlines()):
        key = (row["student"], row["assignment"])
        if key not in latest or row["submitted_at"] > latest[key]["submitted_at"]:
            latest[key] = row
    graded = 0
    for assignment in sorted({a for _, a in latest}):
        r = run([BIN, "results", "--course", course, "--assignment", assignment], extra)
        assert r.returncode == 0, r.stderr[-1000:]
        for row in csv.DictReader(r.stdout.splitlines()):
            expected = latest[(row["student"], assignment)]["expected_verdict"]
            assert row["verdict"] == expected, (row, expected)
            graded += 1
    assert graded == len(latest)


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_missing_assignment_image_is_refused_before_grading(site_user, settings, command):
    """The grading account may not build images (root does): an assignment whose image
    nobody built is refused before anything is graded, with the command that builds it,
    and its submission waits in the spool -- never a judge error for every student."""
    run, scratch = site_user
    images = settings.image_dir or settings.state_dir / "images"
    base_only = scratch / f"images-base-only-{command}"
    base_only.mkdir()
    for built in images.glob("grader-*"):  # the grading image, none of an assignment's
        if "+ag-" not in built.name and not built.name.endswith(".tmp"):
            (base_only / built.name).symlink_to(built)
    extra = {"GRADELINE_IMAGE_DIR": str(base_only)}
    gsutils = scratch / f"packages-{command}" / "gsutils"  # the one package of the course
    shutil.copytree(ROOT / "grader/examples/gsutils", gsutils)
    subprocess.run(["chown", "-R", USER, gsutils.parent], check=True)
    spool = scratch / f"spool-noimage-{command}"
    if command == "run":
        _steps(run, extra, [[BIN, "submit", "gsutils", "alice", gsutils /
                             "submissions/accepted/temps.py", "--spool", spool,
                             "--course", "noimage"]])
        r = run([BIN, "run", "--spool", spool, "--course", "noimage", "--executor", "local",
                 "--assignments", gsutils.parent], extra)
    else:
        r = run([BIN, "check", gsutils], extra)
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stdout + r.stderr
    assert f"run 'gradeline image build --assignment {gsutils}' as root" in r.stderr, r.stderr
    assert "nothing was graded" in r.stderr and "checked" not in r.stdout, r.stdout
    if command == "run":
        assert len(list((spool / "new").iterdir())) == 1  # waiting, not quarantined


def test_serve_on_pilot_tasks_as_an_ordinary_user(site_user, slurm_conf):
    """`serve` as a site user: the pilot tasks it starts run as that user under
    Apptainer, pull every submission, and leave; every verdict is the expected one."""
    run, scratch = site_user
    extra = {"SLURM_CONF": slurm_conf, "GRADELINE_RUNTIME": "apptainer"}
    steps = [
        [BIN, "corpus", scratch / "course2", "--count", "18", "--seed", "13",
         "--submit-to", scratch / "spool2", "--course", "c2"],
        [BIN, "db", "start"],
        [BIN, "serve", "--spool", scratch / "spool2", "--course", "c2", "--executor",
         "slurm", "--exit-when-idle", "--report", "0", "--pilot-idle", "5"],
    ]
    _steps(run, extra, steps)
    _verdicts_as_expected(run, extra, "c2", scratch / "course2/manifest.csv")
    logs = list((scratch / "spool2" / "pilots").glob("array-*/logs/*.log"))
    assert logs and any("to grade on" in p.read_text() for p in logs)
    jobs = [line for line in Path(slurm_conf).with_name("jobcomp.log").read_text().splitlines()
            if "Name=gradeline-pilot" in line and f"UserId={USER}(" in line]
    assert jobs, "no pilot task ran as the user"


def test_a_course_graded_through_slurm_as_an_ordinary_user(site_user, slurm_conf):
    """The production path: the user's own PostgreSQL, `gradeline run` through the
    local Slurm cluster, array tasks as the user under Apptainer; every verdict is
    the one the corpus was built to get."""
    run, scratch = site_user
    extra = {"SLURM_CONF": slurm_conf, "GRADELINE_RUNTIME": "apptainer"}
    steps = [
        [BIN, "corpus", scratch / "course", "--count", "24", "--seed", "11",
         "--submit-to", scratch / "spool", "--course", "c"],
        [BIN, "db", "start"],
        [BIN, "run", "--spool", scratch / "spool", "--course", "c", "--executor", "slurm",
         "--dispatch", "arrays", "--shard-size", "6"],
    ]
    _steps(run, extra, steps)
    _verdicts_as_expected(run, extra, "c", scratch / "course/manifest.csv")
    jobs = [line for line in Path(slurm_conf).with_name("jobcomp.log").read_text().splitlines()
            if "Name=gradeline-" in line and f"UserId={USER}(" in line]
    assert jobs, "no array task ran as the user"


def test_gradescope_autograders_on_pilot_tasks_as_an_ordinary_user(site_user, slurm_conf):
    """Autograders written for Gradescope, through Slurm pilot tasks that run as the
    user under Apptainer: two on the grading image (Python, Java), one on the image its
    setup.sh built (root builds images; the user grades with them), a notebook graded
    by the autograder Otter-Grader made (its image built with pip alone); and the
    unit-test assignments (pytest, Java with JUnit 5, C with CMake and CTest, a cargo
    crate, a Maven project on its own image) the same way."""
    build = subprocess.run([str(BIN), "image", "build", "--examples"],
                           capture_output=True, text=True, timeout=1800, check=False)
    assert build.returncode == 0, build.stdout + build.stderr
    run, scratch = site_user
    extra = {"SLURM_CONF": slurm_conf, "GRADELINE_RUNTIME": "apptainer"}
    spool = scratch / "spool-ag"
    expected = {}
    steps = [[BIN, "db", "start"]]
    for assignment, module in (("gsutils", "temps.py"), ("wordfreq", "wordfreq.py"),
                               ("stats", "stats.py"), ("intstack", "IntStack.java"),
                               ("strutil", "strutil.c"), ("romans", "romans"),
                               ("bank", "account"), ("ringbuf", "RingBuffer.java"),
                               ("notebook", "notebook.ipynb")):
        for student, kind in (("alice", "accepted"), ("bob", "wrong_answer")):
            path = ROOT / "grader/examples" / assignment / "submissions" / kind / module
            if assignment == "notebook" and kind == "wrong_answer":
                path = path.with_name("partial.ipynb")
            steps.append([BIN, "submit", assignment, student, path, "--spool", spool,
                          "--course", "ag"])
            expected[(assignment, student)] = "AC" if kind == "accepted" else "WA"
    steps.append([BIN, "run", "--spool", spool, "--course", "ag", "--executor", "slurm"])
    _steps(run, extra, steps)
    scores = {}
    for assignment in ("gsutils", "wordfreq", "stats", "intstack", "strutil", "romans",
                       "bank", "ringbuf", "notebook"):
        r = run([BIN, "results", "--spool", spool, "--course", "ag", "--assignment",
                 assignment], extra)
        assert r.returncode == 0, r.stderr[-1000:]
        for row in csv.DictReader(r.stdout.splitlines()):
            assert row["verdict"] == expected[(assignment, row["student"])], row
            scores[(assignment, row["student"])] = (row["score"], row["max_score"])
    assert scores == {("gsutils", "alice"): ("10", "10"), ("gsutils", "bob"): ("8", "10"),
                      ("wordfreq", "alice"): ("10", "10"), ("wordfreq", "bob"): ("6", "10"),
                      ("stats", "alice"): ("10", "10"), ("stats", "bob"): ("6", "10"),
                      ("intstack", "alice"): ("9", "9"), ("intstack", "bob"): ("7", "9"),
                      ("strutil", "alice"): ("6", "6"), ("strutil", "bob"): ("4", "6"),
                      ("romans", "alice"): ("7", "7"), ("romans", "bob"): ("5", "7"),
                      ("bank", "alice"): ("7", "7"), ("bank", "bob"): ("5", "7"),
                      ("ringbuf", "alice"): ("10", "10"), ("ringbuf", "bob"): ("5", "10"),
                      ("notebook", "alice"): ("10", "10"), ("notebook", "bob"): ("7", "10")}
    jobs = [line for line in Path(slurm_conf).with_name("jobcomp.log").read_text().splitlines()
            if "Name=gradeline-pilot" in line and f"UserId={USER}(" in line]
    assert jobs, "no pilot task ran as the user"
