"""Bubblewrap runtime: the grading image's root file system, isolated as
``apptainer exec --containall --network none`` isolates a SIF, with gl-runner inside.

Namespaces: user, pid, net (loopback only), ipc, uts, cgroup. Root is the image,
read-only; /tmp is a private tmpfs; only the worker's work root (at /gl/work) and
its cgroup (at /gl/cgroup) come from the host. As root, bubblewrap is started as
the slot's sandbox uid (util-linux setpriv), so the runner and every run are
unprivileged, as under a site's Slurm.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from grader.adapters.gpus import INSIDE as GPU_INSIDE
from grader.adapters.gpus import GpuAccess
from grader.adapters.sandbox.cgroups import CgroupManager
from grader.adapters.sandbox.container import ContainerSandbox
from grader.adapters.sandbox.runtime import AS_CALLER, Identity
from grader.core.errors import SandboxError

BWRAP_HELP = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) or Apptainer; "
              "if bwrap exists but fails with 'setting up uid map', enable unprivileged "
              "user namespaces (sysctl kernel.unprivileged_userns_clone=1)")
SETPRIV = shutil.which("setpriv", path="/usr/bin:/bin")


class BwrapSandbox(ContainerSandbox):
    """gl-runner in a bubblewrap container over the image's root file system."""

    runtime = "bwrap"
    runner_is_root = False  # root starts bwrap as the slot's uid

    def __init__(self, rootfs: Path, workroot: Path, *, identity: Identity = AS_CALLER,
                 cgroups: CgroupManager | None = None, image_id: str = "",
                 image_env: dict[str, str] | None = None, cpus: Sequence[int] | None = None,
                 bwrap: str | None = None, gpus: GpuAccess | None = None) -> None:
        super().__init__(rootfs, workroot, identity=identity, cgroups=cgroups,
                         image_id=image_id, cpus=cpus, gpus=gpus)
        self.image_env = image_env or {}
        found = bwrap or shutil.which("bwrap")
        if found is None:
            raise SandboxError(f"bwrap not found: {BWRAP_HELP}")
        self.bwrap = found
        for mount_point in ("work", "judge", "tmp", "proc", "dev", "gl/work",
                            "usr/local/bin/gl-runner"):
            if not (rootfs / mount_point).exists():
                raise SandboxError(f"image {rootfs} lacks /{mount_point}; rebuild it with "
                                   "'gradeline image build --force'")

    def container_argv(self, binds: Sequence[tuple[Path, str]], runner: Sequence[str]
                       ) -> list[str]:
        """The bwrap argv (public so tests can read it)."""
        argv: list[str] = []
        if self.identity.uid is not None:
            if SETPRIV is None:
                raise SandboxError("setpriv (util-linux) is needed to start bwrap as the "
                                   "sandbox uid")
            gid = self.identity.gid if self.identity.gid is not None else self.identity.uid
            argv = [SETPRIV, f"--reuid={self.identity.uid}", f"--regid={gid}",
                    "--clear-groups", "--"]
        argv += [self.bwrap, "--unshare-all", "--die-with-parent", "--new-session",
                 "--hostname", "gradeline", "--ro-bind", str(self.image), "/",
                 "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        for src, dst in binds:
            argv += ["--bind", str(src), dst]
        if self.gpus is not None:  # only the allocation's GPUs, and the driver's libraries
            for src, dst in self.gpus.devices:
                argv += ["--dev-bind", str(src), dst]
            argv += ["--tmpfs", GPU_INSIDE]
            for lib in self.gpus.libraries:
                argv += ["--ro-bind", str(lib), f"{GPU_INSIDE}/{lib.name}"]
        argv += ["--chdir", "/", "--clearenv"]
        for k, v in {"PATH": "/usr/local/bin:/usr/bin:/bin", **self.image_env}.items():
            argv += ["--setenv", k, v]
        return [*argv, "--", *runner]


    def rank_container(self, runner: Sequence[str]) -> tuple[list[str], dict[str, str]]:
        argv = self.container_argv([(self.workroot, "/gl/work")], list(runner))
        argv.insert(argv.index("--unshare-all") + 1, "--share-net")
        return argv, self._env()


@functools.cache
def bwrap_works() -> tuple[bool, str]:
    """Whether bubblewrap can create its namespaces here (check-env's probe)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False, "bwrap not installed"
    r = subprocess.run([bwrap, "--unshare-all", "--ro-bind", "/", "/", "true"],
                       capture_output=True, check=False, timeout=30)
    return r.returncode == 0, r.stderr.decode(errors="replace").strip() or "ok"
