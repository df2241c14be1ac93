"""Apptainer runtime (production): ``apptainer exec --containall --cleanenv
--no-home --net --network none`` on the grading SIF, gl-runner inside.

Apptainer is started once per worker (it costs ~100-200 ms), never per test. It is
given no cgroup options, so it never moves the job out of its caller's (Slurm's)
cgroup. As root the runner is root in the container and maps each run to the
slot's sandbox uid; as anyone else (a site's array task) it is that user, in
Apptainer's user namespace, and each run is that user without capabilities.
"""

from __future__ import annotations

import os
import pwd
import shutil
from collections.abc import Sequence
from pathlib import Path

from grader.adapters.gpus import INSIDE as GPU_INSIDE
from grader.adapters.gpus import GpuAccess
from grader.adapters.sandbox.cgroups import CgroupManager
from grader.adapters.sandbox.container import ContainerSandbox
from grader.adapters.sandbox.runtime import AS_CALLER, Identity
from grader.core.errors import SandboxError


class ApptainerSandbox(ContainerSandbox):
    """gl-runner in an Apptainer container of the SIF."""

    runtime = "apptainer"

    def __init__(self, sif: Path, workroot: Path, *, identity: Identity = AS_CALLER,
                 cgroups: CgroupManager | None = None, image_id: str = "",
                 cpus: Sequence[int] | None = None, apptainer: str | None = None,
                 gpus: GpuAccess | None = None) -> None:
        super().__init__(sif, workroot, identity=identity, cgroups=cgroups,
                         image_id=image_id, cpus=cpus, gpus=gpus)
        found = apptainer or shutil.which("apptainer")
        if found is None:
            raise SandboxError("apptainer not found; install it or use GRADELINE_RUNTIME=bwrap")
        self.apptainer = found
        self.runner_is_root = os.geteuid() == 0

    def container_argv(self, binds: Sequence[tuple[Path, str]], runner: Sequence[str]
                       ) -> list[str]:
        """The apptainer argv (public so tests can read it)."""
        argv = [self.apptainer, "--silent", "exec", "--containall", "--cleanenv", "--no-home",
                "--no-mount", "cwd", "--net", "--network", "none", "--pwd", "/"]
        for src, dst in binds:
            argv += ["--bind", f"{src}:{dst}:rw"]
        if self.gpus is not None:  # only the allocation's GPUs (--nv would bind every one)
            for src, dst in self.gpus.devices:  # Apptainer binds into /dev only as named
                argv += ["--bind", f"{src}:{dst}"]
            for lib in self.gpus.libraries:
                argv += ["--bind", f"{lib}:{GPU_INSIDE}/{lib.name}:ro"]
        return [*argv, str(self.image), *runner]

    def rank_container(self, runner: Sequence[str]) -> tuple[list[str], dict[str, str]]:
        argv = self.container_argv([(self.workroot, "/gl/work")], list(runner))
        at = argv.index("--network")  # the node's network: the runner confines the run's
        del argv[at - 1:at + 2]
        return argv, self._env()

    def _env(self) -> dict[str, str]:
        home = pwd.getpwuid(os.geteuid()).pw_dir
        return {**super()._env(), "HOME": home}
