"""The judge's port: the Sandbox interface every runtime (bubblewrap, Apptainer)
implements, and the request a run is described by."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from grader.core.limits import Limits
from grader.core.perfcache import CacheEvents, Source
from grader.core.runmeta import RunMeta
from grader.core.shape import Shape

#: Paths inside the image. They exist in the image (made by containers/grader.def's
#: %post) because a read-only root cannot grow new mount points.
WORK = "/work"
JUDGE = "/judge"
#: where the sandbox binds the host driver's GPU libraries (``adapters.gpus.INSIDE``)
GPU_LIBRARIES = "/gl/gpu"
#: where a counter that runs inside the sandbox (a simulator) writes its counts: a
#: directory of the run's own, bound writable there (``CacheCounter``)
COUNTERS = "/gl/counters"

DEFAULT_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
}


@dataclass(frozen=True, slots=True)
class Bind:
    """A host path made visible inside the sandbox."""

    source: Path
    target: str
    writable: bool = False


@dataclass(frozen=True, slots=True)
class RunRequest:
    """One command to run in the image.

    :param workdir: host directory mounted at /work (the current directory).
    :param stdin: host file fed as standard input (opened outside the sandbox,
        so its path is never visible inside); None: /dev/null.
    :param stdout: host file receiving standard output (size-limited).
    :param cpus: CPUs the run is pinned to; None: the caller's own.
    :param fifo: stdin and stdout are the FIFOs of an interactive test (the judge
        holds their other ends open while both runs start).
    :param on_open: with ``fifo``, called as soon as the run has opened both FIFOs.
    :param count_threads: measure the most threads the run had at once
        (``RunMeta.threads_peak``): a parallel program's, whose feedback says when it
        oversubscribed its cores.
    """

    argv: Sequence[str]
    workdir: Path
    limits: Limits
    stdout: Path
    stderr: Path
    stdin: Path | None = None
    workdir_writable: bool = False
    binds: Sequence[Bind] = ()
    cpus: Sequence[int] | None = None
    env: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_ENV))
    fifo: bool = False
    on_open: Callable[[], None] | None = field(default=None, compare=False)
    count_threads: bool = False
    #: an MPI rank's: the addresses of the step's nodes on the MPI network, the only
    #: ones besides its PMIx server its run may reach (``Sandbox.run_ranks``)
    net_peers: tuple[str, ...] = ()


class Sandbox(Protocol):
    """Runs commands in the grading image. Student faults come back in RunMeta;
    faults of the sandbox itself raise SandboxError."""

    runtime: str

    def run(self, request: RunRequest) -> RunMeta:
        """Run one command; never leaves a process behind."""
        ...

    def run_ranks(self, request: RunRequest, shape: Shape) -> RunMeta:
        """Run ``request`` as ``shape``'s MPI ranks across the nodes of this worker's
        allocation, each in a sandbox of its own on its node; rank 0's output is the
        program's; never leaves a process behind."""
        ...

    def own(self, path: Path) -> None:
        """Make ``path`` (recursively) writable by the sandbox's user."""
        ...

    def describe(self) -> dict[str, Any]:
        """Facts for the result record and logs (runtime, image, isolation)."""
        ...

    def start(self) -> None:
        """Start the container now instead of at the first run (a pilot does while it
        waits for its first ticket, so the start is off the grading path); idempotent.

        :raises SandboxError: when it cannot start (the first run would say the same)."""
        ...

    def close(self) -> None:
        """Release the sandbox (its container); idempotent."""
        ...

    def abort(self) -> None:
        """End the sandbox now, a run in progress included (gradeline is being
        stopped); idempotent."""
        ...

    def for_autograder(self, digest: str) -> Sandbox:
        """A sandbox like this one on the image built with the setup.sh of the
        autograder whose content hash is ``digest``.

        :raises SandboxError: when that image is not built."""
        ...

    def sibling(self) -> Sandbox:
        """Another sandbox like this one (same image, user and CPUs, a container of its
        own): an interactive test's validator runs there while the submission runs
        here."""
        ...



class CacheCounter(Protocol):
    """Counts one run's L3 traffic for a performance test's cache reading
    (``core.perfcache``; made by ``adapters.metrics.judging``): hardware counters of the
    run's cores, counted from outside the sandbox, or a simulator inside it."""

    @property
    def source(self) -> Source:
        """likwid, perf or cachegrind."""
        ...

    @property
    def note(self) -> str:
        """Where the counts come from, in words (and, for a simulator, why not
        hardware)."""
        ...

    @property
    def probe(self) -> tuple[str, ...]:
        """A command the sandbox runs to tell whether the image has the simulator (()
        for hardware counters: nothing runs inside)."""
        ...

    def wrap(self, argv: Sequence[str], l3_bytes: int) -> list[str]:
        """``argv`` as run inside the sandbox: under the simulator with an L3 of
        ``l3_bytes``, writing into ``COUNTERS``; as it is for hardware counters."""
        ...

    def counting(self, cpus: Sequence[int], out: Path) -> AbstractContextManager[None]:
        """Hardware counters of ``cpus`` while the block runs, kept in ``out`` (the host
        side of ``COUNTERS``); nothing for a simulator."""
        ...

    def read(self, out: Path) -> CacheEvents:
        """What the run counted, from ``out``.

        :raises ValueError: nothing was counted there (the run died before it could be).
        """
        ...
