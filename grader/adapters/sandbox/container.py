"""The Sandbox port over one long-lived container per worker, gl-runner inside.

Theory of operation
-------------------
Starting a container costs ~10 ms (bubblewrap) to ~200 ms (Apptainer); a test run
must cost ~1 ms more than the bare program. So each worker starts its container
once, on its first run, and keeps it: the container's only process is gl-runner
(``containers/runner/gl-runner.c``), which isolates every run in namespaces of its
own (see CONTRACT.md). Per run, the judge writes a request on the runner's stdin
and reads its reply; the reply's measurements become a RunMeta through
``outcome.interpret`` (the same pure decision for every runtime).

The worker's work root is bound into the container at ``/gl/work`` (paths are
translated: every file of a run lives under the work root), its cgroup, when one
is delegated, at ``/gl/cgroup``; both are hidden from the programs themselves.

Who the runner is: root (Apptainer as root: each run is mapped to the slot's
sandbox uid), or an ordinary uid (a site's array task, or bubblewrap started as the
slot's uid by root): each run is mapped to that same uid, which has no capabilities
once it execs. A runner that dies or stops answering is killed with its container
(SandboxError: the run is JE) and started again for the next run.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import math
import os
import select
import signal
import subprocess
import tempfile
import time
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from grader.adapters.gpus import GpuAccess
from grader.adapters.sandbox.assignment_image import assignment_image_path
from grader.adapters.sandbox.cgroups import CgroupManager, ShardCgroup
from grader.adapters.sandbox.outcome import from_reply
from grader.adapters.sandbox.ranks import run_ranks
from grader.adapters.sandbox.runtime import AS_CALLER, Identity, RuntimeBase, session_members
from grader.core.errors import SandboxError
from grader.core.limits import MIB, Limits
from grader.core.runmeta import RunMeta
from grader.core.shape import Shape
from grader.judge.ports import RunRequest

log = logging.getLogger(__name__)

INSIDE = "/gl/work"  # the work root, inside the container
CGROUP_INSIDE = "/gl/cgroup"
RUNNER = "/usr/local/bin/gl-runner"
HIDDEN = (INSIDE, CGROUP_INSIDE, "/sys/fs/cgroup")  # covered by an empty tmpfs per run
START_TIMEOUT_S = 120.0  # the first Apptainer start may build its caches
REPLY_SLACK_S = 30.0  # beyond a run's own wall limit, before the runner counts as hung
#: Without a memory cgroup: what any run may commit (RLIMIT_DATA) beyond its memory
#: limit (libc, the loader, a little slack), before the language's own runtime_bytes;
#: the address-space backstop (RLIMIT_AS) is that plus the language's reserve_bytes
#: (both measured by bench/memory_allowance.py).
DATA_ALLOWANCE = 64 * MIB


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


#: every container this process has running (``abort_all`` ends them on a stop)
_LIVE: weakref.WeakSet[ContainerSandbox] = weakref.WeakSet()


def abort_all() -> None:
    """Kill every container this process started, runs in progress included: gradeline
    is being stopped, and nothing it started may outlive it."""
    for sandbox in list(_LIVE):
        sandbox.abort()


class ContainerSandbox(RuntimeBase):
    """A Sandbox whose runs go to gl-runner in one container; subclasses say how the
    container starts (``container_argv``) and whether the runner is root."""

    runtime = "?"
    RUNNER = RUNNER
    #: the runner runs as root (and maps each run to the sandbox uid)
    runner_is_root = False

    def __init__(self, image: Path, workroot: Path, *, identity: Identity = AS_CALLER,
                 cgroups: CgroupManager | None = None, image_id: str = "",
                 cpus: Sequence[int] | None = None, gpus: GpuAccess | None = None) -> None:
        super().__init__(image, identity=identity, cgroups=cgroups, image_id=image_id)
        self.workroot = workroot.resolve()
        self.cpus = list(cpus) if cpus else None
        #: the GPUs bound in (their device files and the driver's libraries), else None
        self.gpus = gpus
        self.proc: subprocess.Popen[bytes] | None = None
        self.cgroup: ShardCgroup | None = None
        self.log: IO[bytes] | None = None
        self.starts = 0

    # -- what a runtime provides ---------------------------------------------------
    def container_argv(self, binds: Sequence[tuple[Path, str]], runner: Sequence[str]
                       ) -> list[str]:
        """The command that starts ``runner`` in the image with ``binds`` (host path,
        path inside) and nothing else of the host."""
        raise NotImplementedError

    # -- the container ---------------------------------------------------------------
    def _start(self) -> subprocess.Popen[bytes]:
        self.workroot.mkdir(parents=True, exist_ok=True)
        if self.identity.uid is not None:  # the runner writes the runs' output files here
            gid = self.identity.gid if self.identity.gid is not None else self.identity.uid
            os.chown(self.workroot, self.identity.uid, gid)
        owner = None if self.runner_is_root else self.identity.uid
        if self.cgroups is not None and self.cgroup is None:
            try:
                self.cgroup = self.cgroups.create_shard(self.cpus, owner)
            except OSError as e:
                raise SandboxError(f"cannot create the container's cgroup: {e}; set "
                                   "GRADELINE_CGROUPS=0 to fall back to rlimits") from e
        binds = [(self.workroot, INSIDE)]
        runner = [RUNNER]
        if self.cgroup is not None:
            binds += self.cgroup.binds(CGROUP_INSIDE)
            runner += self.cgroup.runner_args(CGROUP_INSIDE)
        if self.log is not None:  # the container before (it ended): its log goes too
            self.log.close()
        self.log = tempfile.TemporaryFile(prefix="gl-container-")  # noqa: SIM115 -- kept open
        argv = self.container_argv(binds, runner)
        if self.cgroup is not None:
            argv = self.cgroup.enter_argv(argv)
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=self.log, start_new_session=True, env=self._env())
        except OSError as e:
            self.log.close()
            self.log = None
            raise SandboxError(f"cannot start {argv[0]}: {e}") from e
        self.proc = proc
        _LIVE.add(self)
        self.starts += 1
        ready = self._read_reply(START_TIMEOUT_S)
        if "ready" not in ready:
            self._kill()
            raise SandboxError(f"the {self.runtime} container did not start gl-runner: "
                               f"{self._log_tail()}")
        return proc

    def _env(self) -> dict[str, str]:
        """What the runtime process itself gets (never the student's environment)."""
        return {"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "LC_ALL": "C"}

    def _log_tail(self) -> str:
        if self.log is None:
            return ""
        with contextlib.suppress(OSError):
            self.log.seek(0)
            return self.log.read()[-2000:].decode("utf-8", "replace").strip()
        return ""

    def _kill(self) -> None:
        """Kill the container and everything it started: its process group, then
        whatever else is left of its session (the container started it in a session of
        its own)."""
        proc, self.proc = self.proc, None  # a stop may kill it from another thread too
        if proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError, subprocess.TimeoutExpired):
                proc.wait(timeout=10)
            for pid in session_members(proc.pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            for f in (proc.stdin, proc.stdout):
                with contextlib.suppress(OSError, ValueError):
                    if f is not None:
                        f.close()

    def close(self) -> None:
        """End the container (EOF ends the runner) and remove its cgroup."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(OSError):
                if self.proc.stdin is not None:
                    self.proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
        self._kill()
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        if self.log is not None:
            self.log.close()
            self.log = None

    def abort(self) -> None:
        """Kill the container at once, whatever it runs (no wait for the runner)."""
        self._kill()
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None

    def sibling(self) -> ContainerSandbox:
        """Another container like this one (its own runner, cgroup and log), started on
        its first run."""
        twin = copy.copy(self)
        twin.proc = None
        twin.cgroup = None
        twin.log = None
        twin.starts = 0
        return twin

    def for_autograder(self, digest: str) -> ContainerSandbox:
        """A container like this one on the image built for the autograder with
        ``digest`` (``assignment_image``); :raises SandboxError: when it is not built."""
        path = assignment_image_path(self.image, digest)
        if not path.exists():
            raise SandboxError(f"the image with this autograder's setup.sh ({path.name}) is "
                               "not built: run 'gradeline image build --assignment PACKAGE' "
                               "where the grading image is built")
        twin = self.sibling()
        twin.image, twin.image_id = path, path.name.removesuffix(".sif")
        return twin

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    # -- one run ---------------------------------------------------------------------
    def inside(self, path: Path) -> str:
        """A host path of a run, as the container sees it. Lexically when it already
        lies under the (resolved) work root -- the judge names only directories it made
        there, and resolving every path of every run cost ~40 lstat calls a run."""
        text = os.path.normpath(os.path.abspath(path))  # noqa: PTH100 -- no lstat calls
        root = str(self.workroot)
        if text == root:
            return INSIDE
        if text.startswith(root + "/"):
            return f"{INSIDE}/{text[len(root) + 1:]}"
        try:
            rel = path.resolve().relative_to(self.workroot)
        except ValueError:
            raise SandboxError(f"{path} is outside the work root {self.workroot}: the "
                               "container cannot see it") from None
        return f"{INSIDE}/{rel}" if str(rel) != "." else INSIDE

    def wall_kill_s(self, lim: Limits) -> float:
        """When the runner ends a run by the clock. With a cgroup the CPU limit is kept
        to the millisecond, below the wall limit; without one RLIMIT_CPU ends a CPU-bound
        run only at the next whole second (2 s for a 1.75 s hard limit), so the clock
        waits a second more, or it would end CPU-bound runs first and their CPU time
        and memory would go unmeasured. The verdict does not move: a run over its wall
        limit is TLE either way (``outcome.interpret``)."""
        if self.cgroups is not None or lim.cores > 1:  # a parallel run: wall time rules
            return lim.wall_s
        return max(lim.wall_s, math.ceil(lim.cpu_hard_s) + 1.0)

    def request_text(self, req: RunRequest) -> str:
        lim = req.limits
        lines = [f"argv {_escape(a)}" for a in req.argv]
        lines += [f"env {_escape(f'{k}={v}')}" for k, v in req.env.items()]
        lines += [f"workdir {_escape(self.inside(req.workdir))}",
                  f"writable {int(req.workdir_writable)}",
                  f"stdout {_escape(self.inside(req.stdout))}",
                  f"stderr {_escape(self.inside(req.stderr))}"]
        if req.stdin is not None:
            lines.append(f"stdin {_escape(self.inside(req.stdin))}")
        if req.fifo:
            lines.append("fifo 1")
        if req.count_threads:
            lines.append("threads 1")
        for b in req.binds:
            lines.append("bind " + _escape(f"{self.inside(b.source)}\t{b.target}\t"
                                          f"{int(b.writable)}"))
        lines += [f"hide {h}" for h in HIDDEN]
        if req.cpus:
            lines.append("cpus " + ",".join(map(str, req.cpus)))
        if self.runner_is_root and self.identity.uid is not None:
            gid = self.identity.gid if self.identity.gid is not None else self.identity.uid
            lines += [f"uid {self.identity.uid}", f"gid {gid}"]
        # RLIMIT_CPU counts whole seconds: the backstop; with a cgroup the runner
        # ends the run at cpu_hard_ms itself
        lines.append(f"cpu_hard_s {max(1, int(lim.cpu_hard_s + 0.999))}")
        lines.append(f"cpu_hard_ms {max(1, round(lim.cpu_hard_s * 1000))}")
        lines.append(f"wall_ms {int(self.wall_kill_s(lim) * 1000)}")
        if lim.memory_bytes is not None:  # applied by the runner where no cgroup is
            data = lim.memory_bytes + DATA_ALLOWANCE + lim.runtime_bytes
            lines += [f"data {data}", f"as {data + lim.reserve_bytes}"]
        for key, value in (("memory", lim.memory_bytes), ("stack", lim.stack_bytes),
                           ("procs", lim.processes), ("fsize", lim.output_bytes),
                           ("tmpfs", lim.tmpfs_bytes)):
            if value is not None:
                lines.append(f"{key} {value}")
        return "\n".join([*lines, "run"]) + "\n"

    def _read_reply(self, timeout_s: float,
                    on_open: Callable[[], None] | None = None) -> dict[str, str]:
        """``key: value`` lines up to an empty one; {} when the runner died or hung.
        ``on_open`` is called when the runner says it opened a run's FIFOs."""
        assert self.proc is not None and self.proc.stdout is not None
        out: dict[str, str] = {}
        deadline = time.monotonic() + timeout_s
        fd = self.proc.stdout.fileno()
        buf = b""
        while True:
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if not line:
                    if buf:
                        log.warning("gl-runner sent more than one reply")
                    return out
                key, _, value = line.decode("utf-8", "replace").partition(":")
                out[key.strip()] = value.strip()
                if key == "opened" and on_open is not None:
                    on_open()
            left = deadline - time.monotonic()
            ready = select.select([fd], [], [], max(0.0, left))[0] if left > 0 else []
            if not ready:
                return {}
            chunk = os.read(fd, 65536)
            if not chunk:
                return {}
            buf += chunk

    def start(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            self._kill()
            self._start()

    def run(self, request: RunRequest) -> RunMeta:
        if self.proc is not None and self.proc.poll() is not None:
            log.error("the %s container ended (%s); starting a new one", self.runtime,
                      self._log_tail()[-300:])
        self.start()
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(self.request_text(request).encode())
            self.proc.stdin.flush()
        except OSError as e:
            tail = self._log_tail()
            self._kill()
            raise SandboxError(f"the {self.runtime} container is gone: {e}; {tail}") from e
        reply = self._read_reply(self.wall_kill_s(request.limits) + REPLY_SLACK_S, request.on_open)
        if not reply:
            tail = self._log_tail()
            self._kill()
            raise SandboxError(f"gl-runner in the {self.runtime} container did not answer: "
                               f"{tail[-500:]}")
        if reply.get("status") != "ok":
            raise SandboxError(f"gl-runner: {reply.get('error', reply)}")
        return self.meta(request, reply)

    def meta(self, request: RunRequest, reply: dict[str, str]) -> RunMeta:
        """The RunMeta of a run from the runner's reply (``outcome.from_reply``)."""
        return from_reply(request, reply)

    def run_ranks(self, request: RunRequest, shape: Shape) -> RunMeta:
        """``request`` as an MPI step's ranks across the pilot's nodes (``ranks``)."""
        return run_ranks(self, request, shape)

    def rank_container(self, runner: Sequence[str]) -> tuple[list[str], dict[str, str]]:
        """argv and environment that start ``runner`` as an MPI rank's container: the
        node's network shared (the runner confines the run's), the work root bound, no
        cgroup of its own (the srun task's bounds it)."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        facts = super().describe()
        facts["container"] = "one per worker (gl-runner inside)"
        facts["limits_by"] = ("cgroup per run below the container's "
                              f"({self.cgroups.describe()})" if self.cgroups else
                              "rlimits (no delegated cgroup): memory by address space, "
                              "processes per user namespace")
        return facts
