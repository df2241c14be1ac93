"""Stopping gradeline: SIGTERM, SIGHUP and Ctrl-C end a command and everything it
started -- its containers (runs in progress included) and its worker processes, which
end theirs on STOP_SIGNAL -- before it exits with 128 + the signal's number. ``serve``
puts its own SIGTERM and SIGINT handlers over these (it drains instead)."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import time
from types import FrameType

from grader.adapters.sandbox import abort_all
from grader.pipeline.local_executor import STOP_SIGNAL

#: how long a worker gets to end its containers before it is killed
WORKER_GRACE_S = 10.0


class Stopped(BaseException):
    """A stop signal arrived (BaseException: no ``except Exception`` swallows it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def stop_everything() -> None:
    """End what this process started: its containers at once, then its worker
    processes (STOP_SIGNAL: each kills its own containers), killed if they linger."""
    abort_all()
    children = multiprocessing.active_children()
    for p in children:
        if p.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, STOP_SIGNAL)
    deadline = time.monotonic() + WORKER_GRACE_S
    for p in children:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    # stop first: a `with` block unwinding after the raise may wait for workers
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)  # one stop is enough
    stop_everything()
    raise Stopped(signum)


def install() -> None:
    """Stop on SIGTERM, SIGHUP and SIGINT, unless the caller ignores one (nohup)."""
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        if signal.getsignal(sig) in (signal.SIG_DFL, signal.default_int_handler):
            signal.signal(sig, _on_signal)
