"""Bubblewrap runtime: the grading image's root file system, run with the isolation
``apptainer exec --containall --cleanenv --no-home --net --network none`` gives.

Namespaces: user, pid, net (loopback only), ipc, uts, cgroup. Root is the image,
read-only; /tmp is a private size-limited tmpfs; only /work (the submission's
build dir) and explicitly bound paths are visible from the host.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import subprocess
from pathlib import Path

from grader.adapters.sandbox.cgroups import CgroupManager
from grader.adapters.sandbox.outcome import interpret, split_exit
from grader.adapters.sandbox.runtime import RuntimeBase
from grader.adapters.sandbox.supervisor import (
    AS_CALLER,
    Gate,
    Identity,
    supervise,
)
from grader.core.errors import SandboxError
from grader.core.runmeta import RunMeta
from grader.judge.ports import WORK, RunRequest

#: Runs first inside the sandbox: proves the sandbox was set up (bwrap reports its
#: child's pid *before* mounting, so a failed bind would otherwise look like the
#: program exiting 1 -- a judge fault charged to the student), then closes the
#: marker pipe and execs the program. dash (faster to start) when the fd is a
#: single digit, which is all dash can redirect; bash otherwise.
EXEC_SHIM = 'printf x >&{fd}; exec {fd}>&-; exec "$@"'

BWRAP_HELP = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) or Apptainer; "
              "if bwrap exists but fails with 'setting up uid map', enable unprivileged "
              "user namespaces (sysctl kernel.unprivileged_userns_clone=1)")


class BwrapSandbox(RuntimeBase):
    """Runs commands in an image root file system with bubblewrap."""

    runtime = "bwrap"

    def __init__(self, rootfs: Path, *, identity: Identity = AS_CALLER,
                 cgroups: CgroupManager | None = None, image_id: str = "",
                 image_env: dict[str, str] | None = None, bwrap: str | None = None) -> None:
        super().__init__(rootfs, identity=identity, cgroups=cgroups, image_id=image_id)
        self.rootfs = rootfs
        self.image_env = image_env or {}
        found = bwrap or shutil.which("bwrap")
        if found is None:
            raise SandboxError(f"bwrap not found: {BWRAP_HELP}")
        self.bwrap = found
        for mount_point in ("work", "judge", "tmp", "proc", "dev"):
            if not (rootfs / mount_point).is_dir():
                raise SandboxError(f"image {rootfs} lacks /{mount_point}; rebuild it with "
                                   "'gradeline image build --force'")

    def command(self, req: RunRequest, status_fd: int, marker_fd: int | None = None,
                block_fd: int | None = None) -> list[str]:
        """The bwrap argv for a request (public so tests can read it)."""
        argv = [
            self.bwrap,
            "--unshare-all",  # user (if possible), pid, net, ipc, uts, cgroup
            "--die-with-parent",
            "--new-session",
            "--hostname", "gradeline",
            "--ro-bind", str(self.rootfs), "/",
            "--proc", "/proc",
            "--dev", "/dev",
        ]
        if req.limits.tmpfs_bytes is not None:
            argv += ["--size", str(req.limits.tmpfs_bytes)]
        argv += ["--tmpfs", "/tmp"]
        argv += ["--bind" if req.workdir_writable else "--ro-bind", str(req.workdir), WORK]
        for b in req.binds:
            argv += ["--bind" if b.writable else "--ro-bind", str(b.source), b.target]
        argv += ["--chdir", WORK, "--clearenv"]
        for k, v in {**self.image_env, **req.env}.items():
            argv += ["--setenv", k, v]
        if block_fd is not None:
            argv += ["--block-fd", str(block_fd)]
        argv += ["--json-status-fd", str(status_fd), "--"]
        if marker_fd is not None:
            shell = "/bin/sh" if marker_fd <= 9 else "/bin/bash"
            argv += [shell, "-c", EXEC_SHIM.format(fd=marker_fd), "gradeline-exec"]
        return [*argv, *req.argv]

    def run(self, request: RunRequest) -> RunMeta:
        status_r, status_w = os.pipe()
        block_r, block_w = os.pipe()
        marker_r, marker_w = os.pipe()
        child_fds = (status_w, block_r, marker_w)
        gate = Gate(status_fd=status_r, release_fd=block_w, child_fds=child_fds,
                    child_pid=_child_pid)
        try:
            raw = supervise(
                self.command(request, status_w, marker_w, block_r), limits=request.limits,
                stdin=request.stdin, stdout=request.stdout, stderr=request.stderr,
                cpus=request.cpus, identity=self.identity, cgroups=self.cgroups,
                pass_fds=child_fds, gate=gate,
            )
            exec_reached = os.read(marker_r, 1) == b"x"
        finally:
            for fd in (status_r, block_w, marker_r):
                os.close(fd)
        started = False
        exit_code: int | None = None
        for line in raw.status_text.splitlines():
            with contextlib.suppress(json.JSONDecodeError):
                obj = json.loads(line)
                started = started or "child-pid" in obj
                if "exit-code" in obj:
                    exit_code = int(obj["exit-code"])
        if not (started and exec_reached) and not raw.wall_timed_out:
            tail = request.stderr.read_bytes()[-2000:].decode("utf-8", "replace")
            hint = f"; {BWRAP_HELP}" if "namespace" in tail or "uid map" in tail else ""
            raise SandboxError(f"bwrap could not start the sandbox: {tail.strip()}{hint}")
        code: int | None
        sig: int | None
        if exit_code is not None:
            code, sig = split_exit(exit_code)
        elif os.WIFSIGNALED(raw.status):
            code, sig = None, os.WTERMSIG(raw.status)
        else:
            code, sig = split_exit(os.WEXITSTATUS(raw.status))
        return interpret(raw, request.limits, code, sig)


def _child_pid(line: str) -> int | None:
    """bwrap's first status line: ``{ "child-pid": N, ... }``."""
    with contextlib.suppress(json.JSONDecodeError, TypeError, ValueError):
        obj = json.loads(line)
        if "child-pid" in obj:
            return int(obj["child-pid"])
    return None


@functools.cache
def bwrap_works() -> tuple[bool, str]:
    """Whether bubblewrap can create its namespaces here (check-env's probe)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False, "bwrap not installed"
    r = subprocess.run([bwrap, "--unshare-all", "--ro-bind", "/", "/", "true"],
                       capture_output=True, check=False, timeout=30)
    return r.returncode == 0, r.stderr.decode(errors="replace").strip() or "ok"
