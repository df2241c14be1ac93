"""The interface every counter source implements, and ``counting()``: how an array
task's whole shard is measured on its exclusive cores.

``likwid`` and ``perf`` read hardware counters of whole cores, so everything
counted on a task's exclusive cores is that task's work. ``cachegrind`` simulates
the caches instead (with an L3 of a chosen size), so it works on any machine --
VMs without a PMU, like our CI, included -- at ~50x slowdown.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from grader.core.samples import Sample


@dataclass(frozen=True, slots=True)
class Availability:
    """Whether a source works here, and why (not): said plainly, never just "no"."""

    source: str
    usable: bool
    reason: str
    detail: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.source:<10} {'usable' if self.usable else 'UNUSABLE':<9} {self.reason}"


class MetricsSource(Protocol):
    name: str

    def availability(self) -> Availability: ...

    def wrap(self, argv: Sequence[str], cores: Sequence[int], out: Path) -> list[str]:
        """The command that runs ``argv`` while counting into ``out``."""
        ...

    def collect(self, out: Path) -> list[Sample]: ...


def run_counted(source: MetricsSource, argv: Sequence[str], cores: Sequence[int], out: Path
                ) -> tuple[int, list[Sample]]:
    """Run ``argv`` under ``source``: its exit status and the samples counted."""
    rc = subprocess.run(source.wrap(argv, cores, out), check=False).returncode
    return rc, source.collect(out)


def run_tool(argv: Sequence[str], timeout: float = 20) -> subprocess.CompletedProcess[str]:
    """Run a counter tool's probe, capturing its output (never raises on exit codes)."""
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout,
                          check=False)


@contextlib.contextmanager
def counting(source: MetricsSource | None, cores: Sequence[int], out: Path
             ) -> Iterator[list[Sample]]:
    """Count on ``cores`` while the body runs; the list fills with samples on exit.

    The counter runs around a command that ends when its stdin closes; closing it at
    the end lets perf and likwid-perfctr finish the way they always do, printing what
    they counted. (Stopping them with SIGINT raced their start-up on a loaded machine:
    a signal before their handler is installed kills them without output.) SIGINT
    remains the fallback for a counter that does not end with its command. On
    exclusive cores everything counted there is the body's work -- how an array task's
    whole shard is measured. With no usable source this counts nothing and costs
    nothing."""
    samples: list[Sample] = []
    if source is None:
        yield samples
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(source.wrap(["sh", "-c", "cat >/dev/null"], cores, out),
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(0.3)  # let the counters arm before the work starts
    try:
        yield samples
    finally:
        with contextlib.suppress(OSError):
            if proc.stdin is not None:
                proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        with contextlib.suppress(OSError, ValueError):
            samples.extend(source.collect(out))
