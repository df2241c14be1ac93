"""The hostile corpus (tests/hostile): every attack ends in its verdict, within its
limits, with no process left behind and nothing outside the sandbox changed."""
import dataclasses
import os
import re
import socket
import threading
import time
from pathlib import Path

import pytest

from grader.formats.load import load_problem

from ..support import FIXTURES, SLOWDOWN, descendants, proc_files

HOSTILE = Path(__file__).resolve().parent.parent / "hostile"
PROGRAMS = sorted(p for p in HOSTILE.iterdir() if p.suffix in (".c", ".cpp", ".py"))
HOST_DIRS = [Path("/tmp"), Path("/var/tmp"), Path("/dev/shm")]
SANDBOX_UID = 61000  # CPU slot 0

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


def header(path: Path, key: str, default: str | None = None) -> str:
    m = re.search(rf"^(?://|#) {key}: (.+)$", path.read_text(), re.M)
    if m is None:
        if default is None:
            raise AssertionError(f"{path.name} lacks a '{key}:' line")
        return default
    return m.group(1).strip()


def _depth(status: str) -> int:
    """How many PID namespaces deep a process is (its NSpid line)."""
    m = re.search(r"^NSpid:\s+(.+)$", status, re.M)
    return len(m.group(1).split()) if m else 1


def sandbox_processes() -> list[str]:
    """Processes of a run still alive: a sandbox uid, deeper than the container's
    gl-runner (each run has a PID namespace below the runner's, which a program
    cannot leave). The container itself (bwrap, gl-runner) lives on between runs. Only
    this test process's descendants count: another test's pilots run the same uids."""
    procs = []
    mine = descendants()
    for pid, raw in proc_files("status"):
        if pid not in mine:
            continue
        status = raw.decode(errors="replace")
        uid = int(re.search(r"^Uid:\s+(\d+)", status, re.M).group(1))
        procs.append((pid, uid, status.splitlines()[0], _depth(status)))
    runner = min((d for _, _, name, d in procs if name.endswith("\tgl-runner")), default=0)
    if os.geteuid() != 0:  # runs are mapped to our own uid: only depth tells them apart
        return [f"{pid}: {name} (depth {d})" for pid, uid, name, d in procs
                if uid == os.getuid() and runner and d > runner]
    return [f"{pid}: {name} (depth {d})" for pid, uid, name, d in procs
            if 61000 <= uid < 61000 + 4096
            and (d > runner or not name.endswith(("\tgl-runner", "\tbwrap")))]


def survivors() -> list[str]:
    """Run processes still there after a grace of 2 s: gl-runner replies once a run's
    init has reaped every process of the run, while the init itself may still be
    tearing its namespaces down for a few milliseconds."""
    found = sandbox_processes()
    deadline = time.monotonic() + 2.0
    while found and time.monotonic() < deadline:
        time.sleep(0.1)
        found = sandbox_processes()
    return found


def _sandbox_uid(uid: int) -> bool:
    """As root, runs get uids of their own; otherwise they run as the caller."""
    return 61000 <= uid < 61000 + 4096 if os.geteuid() == 0 else uid == os.getuid()


def host_files_of_sandbox() -> list[str]:
    out = []
    for d in HOST_DIRS:
        for p in d.iterdir() if d.is_dir() else []:
            try:
                if _sandbox_uid(p.lstat().st_uid):
                    out.append(str(p))
            except OSError:
                pass
    return out


class Listener:
    """A TCP listener on the host's loopback that counts connections."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        for port in range(40000, 40050):
            try:
                self.sock.bind(("127.0.0.1", port))
                break
            except OSError:
                continue
        self.sock.listen(8)
        self.sock.settimeout(0.1)
        self.accepted = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
                self.accepted += 1
                conn.close()
            except OSError:
                pass

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_hostile(program, request):
    expected = header(program, "expect").split()
    problem = load_problem(FIXTURES / header(program, "problem", "tiny"))
    # a parallel shape's program (tiny2: two cores) on a judge of that many CPUs
    judge = request.getfixturevalue("wide_judge" if problem.shape.cores > 1 else "judge")
    if str(judge.sandbox.describe().get("limits_by", "")).startswith("rlimits"):
        expected = header(program, "expect-rlimits", " ".join(expected)).split()
    if SLOWDOWN != 1:  # an emulated node: every limit's mechanism, at its speed
        problem = dataclasses.replace(problem, limits=problem.limits.slower(SLOWDOWN),
                                      compile_limits=problem.compile_limits.slower(SLOWDOWN))
    before_files = set(host_files_of_sandbox())
    listener = Listener() if program.name.startswith("net_") else None
    t0 = time.monotonic()
    try:
        result = judge.grade(problem, program)
    finally:
        if listener:
            listener.close()
    elapsed = time.monotonic() - t0
    detail = result.compile.output[-300:] if result.compile and not result.compile.ok else \
        [(t.name, t.verdict.value, t.feedback[:200]) for t in result.tests]
    assert result.verdict.value in expected, f"{program.name}: {result.verdict} {detail}"
    # Bounded: compile limits + one test's wall limit + slack.
    bound = problem.compile_limits.wall_s + problem.limits.wall_s * len(problem.cases) + 10
    assert elapsed < bound
    if listener:
        assert listener.accepted == 0, "the sandbox reached the host's loopback"
    assert survivors() == [], "a sandboxed process survived its test"
    assert set(host_files_of_sandbox()) - before_files == set()


def test_every_hostile_program_declares_its_verdict():
    assert len(PROGRAMS) >= 20
    for p in PROGRAMS:
        assert header(p, "expect")
