"""The GPUs of this node, as the kernel's NVIDIA device files name them, and the ones a
grading may use: within a Slurm job, the job's (GRES ``gpu``: ``SLURM_JOB_GPUS``);
outside one, every one there is. A sandbox binds in exactly those device files (and the
driver's control devices), so a run sees only the GPU its allocation holds: Apptainer's
``--nv`` would bind them all.
"""

from __future__ import annotations

import re
from pathlib import Path

DEVICE = re.compile(r"^nvidia(\d+)$")
#: the driver's control devices every CUDA program opens beside its GPU's own
CONTROL = ("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools")


def present(dev: Path = Path("/dev")) -> list[int]:
    """The indices of the GPUs whose device files this node has (``/dev/nvidiaN``)."""
    try:
        names = [p.name for p in dev.iterdir()]
    except OSError:
        return []
    return sorted(int(m.group(1)) for n in names if (m := DEVICE.match(n)))


def allowed(job_gpus: str | None, dev: Path = Path("/dev")) -> list[int]:
    """The GPUs a grading here may use: the Slurm job's (``SLURM_JOB_GPUS``, e.g.
    ``0,2``) where it runs in one that holds some, else every one present."""
    here = present(dev)
    if job_gpus is None:
        return here
    wanted = {int(x) for x in re.findall(r"\d+", job_gpus)}
    return [i for i in here if i in wanted]


def device_files(gpus: list[int], dev: Path = Path("/dev")) -> list[Path]:
    """The device files a run with ``gpus`` needs: theirs, then the control devices
    (none when it has no GPU)."""
    if not gpus:
        return []
    return [dev / f"nvidia{i}" for i in gpus] + \
        [dev / c for c in CONTROL if (dev / c).exists()]
