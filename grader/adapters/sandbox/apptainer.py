"""Apptainer runtime (production): ``apptainer exec --containall --cleanenv --no-home
--net --network none`` on the grading SIF, under the same supervisor as bwrap.

Not exercised on the dev machine (Apptainer is in no registry it reaches); its
command line is unit-tested and it is selected automatically where installed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from grader.adapters.sandbox.cgroups import CgroupManager
from grader.adapters.sandbox.outcome import interpret, split_exit
from grader.adapters.sandbox.runtime import RuntimeBase
from grader.adapters.sandbox.supervisor import (
    AS_CALLER,
    Identity,
    supervise,
)
from grader.core.errors import SandboxError
from grader.core.runmeta import RunMeta
from grader.judge.ports import WORK, RunRequest


class ApptainerSandbox(RuntimeBase):
    """Runs commands in a SIF image with Apptainer."""

    runtime = "apptainer"

    def __init__(self, sif: Path, *, identity: Identity = AS_CALLER,
                 cgroups: CgroupManager | None = None, image_id: str = "",
                 apptainer: str | None = None) -> None:
        found = apptainer or shutil.which("apptainer")
        if found is None:
            raise SandboxError("apptainer not found; install it or use GRADELINE_RUNTIME=bwrap")
        super().__init__(sif, identity=identity, cgroups=cgroups, image_id=image_id)
        self.apptainer = found
        self.sif = sif

    def command(self, req: RunRequest) -> list[str]:
        """The apptainer argv for a request."""
        argv = [self.apptainer, "--silent", "exec", "--containall", "--cleanenv", "--no-home",
                "--net", "--network", "none", "--no-mount", "cwd", "--pwd", WORK,
                "--bind", f"{req.workdir}:{WORK}:{'rw' if req.workdir_writable else 'ro'}"]
        for b in req.binds:
            argv += ["--bind", f"{b.source}:{b.target}:{'rw' if b.writable else 'ro'}"]
        for k, v in req.env.items():
            argv += ["--env", f"{k}={v}"]
        return [*argv, str(self.sif), *req.argv]

    def run(self, request: RunRequest) -> RunMeta:
        raw = supervise(self.command(request), limits=request.limits, stdin=request.stdin,
                        stdout=request.stdout, stderr=request.stderr, cpus=request.cpus,
                        identity=self.identity, cgroups=self.cgroups)
        code: int | None
        sig: int | None
        if os.WIFSIGNALED(raw.status):
            code, sig = None, os.WTERMSIG(raw.status)
        else:
            code, sig = split_exit(os.WEXITSTATUS(raw.status))
            if code == 255 and raw.stdout_bytes == 0 and b"FATAL" in \
                    request.stderr.read_bytes()[-4000:]:
                raise SandboxError("apptainer failed: " + request.stderr.read_bytes()[-2000:]
                                   .decode("utf-8", "replace").strip())
        return interpret(raw, request.limits, code, sig)
