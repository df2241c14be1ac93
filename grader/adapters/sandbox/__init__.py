"""Sandboxed execution in the grading image; ``open_sandbox`` picks the runtime.

Runtime choice: ``apptainer`` where installed (production), otherwise ``bwrap``
on a root file system realised from the same definition. The choice and its
reason are logged. What each runtime enforces is in CONTRACT.md beside this file.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.adapters.gpus import GpuAccess
from grader.adapters.sandbox.apptainer import ApptainerSandbox
from grader.adapters.sandbox.bwrap import BwrapSandbox
from grader.adapters.sandbox.cgroups import CgroupManager
from grader.adapters.sandbox.container import abort_all
from grader.adapters.sandbox.image import ImageStore, Runtime, default_definition
from grader.adapters.sandbox.runtime import Identity
from grader.core.errors import CapabilityError, ImageError
from grader.judge.ports import Sandbox

log = logging.getLogger(__name__)
__all__ = ["SandboxConfig", "abort_all", "choose_runtime", "open_sandbox"]

@dataclass(frozen=True, slots=True)
class SandboxConfig:
    """Where the image lives and how runs are confined (built from the settings).

    :param runtime: ``auto`` (apptainer when on PATH), ``apptainer`` or ``bwrap``.
    :param uid_base: as root, each worker slot runs as uid ``uid_base + slot``.
    :param cgroups: create a cgroup per run where a hierarchy is writable.
    """

    state_dir: Path
    definition: Path | None = None
    runtime: str = "auto"
    uid_base: int = 61000
    cgroups: bool = True
    debian_mirror: str | None = None
    image_dir: Path | None = None  # default: <state_dir>/images

    @property
    def definition_path(self) -> Path:
        return self.definition or default_definition()

    def images(self) -> ImageStore:
        return ImageStore(self.image_dir or self.state_dir / "images", mirror=self.debian_mirror)


def choose_runtime(wanted: str = "auto") -> tuple[Runtime, str]:
    """(runtime, reason) from the wanted one and what is installed."""
    if wanted == "apptainer":
        return "apptainer", "GRADELINE_RUNTIME"
    if wanted == "bwrap":
        return "bwrap", "GRADELINE_RUNTIME"
    if shutil.which("apptainer"):
        return "apptainer", "apptainer found"
    if shutil.which("bwrap"):
        return "bwrap", "apptainer not found; bubblewrap fallback with the same image definition"
    raise CapabilityError("neither apptainer nor bwrap is installed: apt-get install bubblewrap")


def open_sandbox(config: SandboxConfig, workroot: Path, *, slot: int = 0,
                 cpus: Sequence[int] | None = None, build: bool = True,
                 gpus: GpuAccess | None = None) -> Sandbox:
    """A sandbox for one worker: its container starts on the first run and lives until
    ``close()``; builds the image when missing and ``build``.

    :param workroot: the worker's scratch space; every file of a run lives under it.
    :param slot: the worker's slot on this machine. As root it selects the sandbox
        uid, so concurrent workers never share one.
    :param cpus: the worker's CPUs (the container's cgroup gets them).
    :param gpus: the worker's GPUs, bound in (``adapters.gpus``); None: none.
    """
    runtime, reason = choose_runtime(config.runtime)
    store = config.images()
    d = config.definition_path
    image = store.ensure(d, runtime) if build else store.find(d, runtime)
    if image is None:
        raise ImageError(f"the grading image for {d} is not built: run 'gradeline image build'")
    identity = Identity()
    if os.geteuid() == 0:
        identity = Identity(uid=config.uid_base + slot, gid=config.uid_base + slot)
    cgroups = CgroupManager.detect() if config.cgroups else None
    if cgroups is None:
        log.warning("no writable cgroup hierarchy: memory and process limits fall back to "
                    "rlimits (RLIMIT_DATA/AS, peak RSS; see CONTRACT.md). Run as root, or "
                    "delegate a cgroup v2 subtree, for cgroup limits.")
    log.info("runtime: %s (%s); image %s; limits by %s", runtime, reason, image.image_id,
             cgroups.describe() if cgroups else "rlimits")
    if runtime == "apptainer":
        return ApptainerSandbox(image.path, workroot, identity=identity, cgroups=cgroups,
                                image_id=image.image_id, cpus=cpus, gpus=gpus)
    return BwrapSandbox(image.path, workroot, identity=identity, cgroups=cgroups,
                        image_id=image.image_id, image_env=image.environment, cpus=cpus,
                        gpus=gpus)
