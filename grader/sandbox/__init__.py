"""Sandboxed execution in the grading image; ``open_sandbox`` picks the runtime.

Runtime choice (``GRADELINE_RUNTIME``): ``apptainer`` where installed (production),
otherwise ``bwrap`` on a root file system realised from the same definition.
The choice and the reason are logged.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from grader.errors import CapabilityError, ImageError
from grader.sandbox.base import Sandbox

log = logging.getLogger(__name__)

SANDBOX_UID_BASE = 61000  # sandbox uid = base + CPU slot; never a real account


def choose_runtime() -> tuple[str, str]:
    """(runtime, reason) from GRADELINE_RUNTIME and what is installed."""
    wanted = os.environ.get("GRADELINE_RUNTIME", "auto").strip().lower()
    if wanted not in ("auto", "apptainer", "bwrap"):
        raise CapabilityError(f"GRADELINE_RUNTIME={wanted!r}: use auto, apptainer or bwrap")
    if wanted != "auto":
        return wanted, "GRADELINE_RUNTIME"
    if shutil.which("apptainer"):
        return "apptainer", "apptainer found"
    if shutil.which("bwrap"):
        return "bwrap", "apptainer not found; bubblewrap fallback with the same image definition"
    raise CapabilityError("neither apptainer nor bwrap is installed: apt-get install bubblewrap")


def open_sandbox(cpus: Sequence[int] | None = None, *, state_dir: Path | None = None,
                 def_path: Path | None = None, build: bool = True) -> Sandbox:
    """A ready sandbox for a CPU slot; builds the image when missing and ``build``."""
    from grader.image import ImageStore, default_definition
    from grader.sandbox.cgroups import CgroupManager
    from grader.sandbox.supervisor import Identity

    runtime, reason = choose_runtime()
    store = ImageStore(state_dir)
    d = def_path or default_definition()
    image = store.ensure(d, runtime) if build else store.find(d, runtime)  # type: ignore[arg-type]
    if image is None:
        raise ImageError(f"the grading image for {d} is not built: run 'gradeline image build'")
    identity = Identity()
    if os.geteuid() == 0:
        base = int(os.environ.get("GRADELINE_SANDBOX_UID_BASE", SANDBOX_UID_BASE))
        slot = min(cpus) if cpus else 0
        identity = Identity(uid=base + slot, gid=base + slot)
    cgroups = None
    if os.environ.get("GRADELINE_CGROUPS", "1") != "0":
        cgroups = CgroupManager.detect()
    if cgroups is None:
        log.warning("no writable cgroup hierarchy: memory and process limits fall back to "
                    "rlimits (coarser; MLE detection is heuristic). Run as root for cgroups.")
    log.info("runtime: %s (%s); image %s; limits by %s", runtime, reason, image.image_id,
             cgroups.describe() if cgroups else "rlimits")
    if runtime == "apptainer":
        from grader.sandbox.apptainer import ApptainerSandbox
        return ApptainerSandbox(image.path, identity=identity, cgroups=cgroups,
                                image_id=image.image_id)
    from grader.sandbox.bwrap import BwrapSandbox
    return BwrapSandbox(image.path, identity=identity, cgroups=cgroups, image_id=image.image_id,
                        image_env=image.environment)
