"""Stopping a command ends everything it started: `gradeline check` and `gradeline
grade`, stopped mid-run on an interactive problem (two containers per test), leave
no worker, container or program behind, and say they were stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from ..support import BIN, EXAMPLES

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` now (by parent links; containers start sessions of
    their own, so sessions would miss them)."""
    parent: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            parent[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out.update(kids)
        todo += kids
    return out


def alive(pids: set[int]) -> set[int]:
    left = set()
    for p in pids:
        try:
            state = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            left.add(p)
    return left


def _as_from_a_terminal() -> None:
    """The stop signals at their defaults, as a terminal's command gets them: a test
    run started in the background by a script inherits SIGINT ignored, and gradeline
    (rightly) leaves an ignored signal ignored."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def stop_mid_run(argv: list[str], sig: int) -> tuple[int, str, set[int]]:
    proc = subprocess.Popen([str(BIN), *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_as_from_a_terminal)
    started: set[int] = set()
    deadline = time.monotonic() + 120
    # wait until the interactive test runs: both runners' containers are up
    while time.monotonic() < deadline and proc.poll() is None:
        started = descendants(proc.pid)
        cmds = [Path(f"/proc/{p}/cmdline").read_bytes() for p in started
                if Path(f"/proc/{p}/cmdline").exists()]
        if sum(b"gl-runner" in c for c in cmds) >= 4:  # two containers, a run in each
            break
        time.sleep(0.2)
    assert proc.poll() is None, "finished before it could be stopped"
    time.sleep(0.5)
    started |= descendants(proc.pid)
    os.kill(proc.pid, sig)
    _, err = proc.communicate(timeout=60)
    time.sleep(1.0)
    return proc.returncode, err, alive(started)


def test_check_stopped_by_sigterm_leaves_nothing_running(sandbox_factory: object) -> None:
    rc, err, left = stop_mid_run(["check", str(EXAMPLES / "guess"), "--no-record"],
                                 signal.SIGTERM)
    assert rc == 128 + signal.SIGTERM and "stopped by SIGTERM" in err, err[-2000:]
    assert not left, [Path(f"/proc/{p}/cmdline").read_bytes() for p in left]


def test_grade_stopped_by_ctrl_c_leaves_nothing_running(sandbox_factory: object) -> None:
    pkg = EXAMPLES / "guess"
    rc, err, left = stop_mid_run(
        ["grade", str(pkg), str(pkg / "submissions/time_limit_exceeded/silent.py")],
        signal.SIGINT)
    assert rc == 128 + signal.SIGINT and "stopped by SIGINT" in err, err[-2000:]
    assert not left, [Path(f"/proc/{p}/cmdline").read_bytes() for p in left]
