"""The GPUs of this node, as the kernel's NVIDIA device files name them, and the ones a
grading may use: within a Slurm job, the job's (GRES ``gpu``: ``SLURM_JOB_GPUS``);
outside one, every one there is. A sandbox binds in exactly those device files (and the
driver's control devices), so a run sees only the GPU its allocation holds: Apptainer's
``--nv`` would bind them all.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from grader.judge.ports import GPU_LIBRARIES

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


def allowed(job_gpus: str | None, in_job: bool, dev: Path = Path("/dev")) -> list[int]:
    """The GPUs a grading here may use: in a Slurm job, the job's (``SLURM_JOB_GPUS``,
    e.g. ``0,2``; none when it holds none, whatever the node has); outside one (a
    check on a workstation), every one present."""
    here = present(dev)
    if job_gpus is None:
        return [] if in_job else here
    wanted = {int(x) for x in re.findall(r"\d+", job_gpus)}
    return [i for i in here if i in wanted]


def device_files(gpus: list[int], dev: Path = Path("/dev")) -> list[tuple[Path, str]]:
    """The device files a run with ``gpus`` needs, each as (this node's file, its path
    in the sandbox: under /dev, as CUDA opens it): theirs, then the control devices
    (none when it has no GPU)."""
    if not gpus:
        return []
    names = [f"nvidia{i}" for i in gpus] + [c for c in CONTROL if (dev / c).exists()]
    return [(dev / n, f"/dev/{n}") for n in names]


#: where a sandbox puts the host driver's libraries a CUDA program loads (libcuda): a
#: directory of the image (``containers/grader.def``), empty there, filled by binds
INSIDE = GPU_LIBRARIES
#: the driver's user-space libraries a CUDA program may load, as ldconfig names them
LIBRARY = re.compile(r"^(libcuda\.so|libcudadebugger\.so|libnvidia-[a-z0-9-]+\.so)(\.\d+)*$")


@dataclass(frozen=True, slots=True)
class GpuAccess:
    """What a sandbox binds in for its GPUs: their device files (and the control
    devices), and the driver's libraries (to ``INSIDE``; a run's ``LD_LIBRARY_PATH``)."""

    indices: tuple[int, ...]
    devices: tuple[tuple[Path, str], ...]  # (this node's file, the sandbox's path)
    libraries: tuple[Path, ...]


def driver_libraries(ldconfig_cache: str) -> list[Path]:
    """The NVIDIA driver's libraries in ``ldconfig -p``'s listing (this architecture's
    first, one path per name)."""
    seen: dict[str, Path] = {}
    for line in ldconfig_cache.splitlines():
        name, _, path = line.strip().partition(" => ")
        name = name.split(" (")[0]
        if LIBRARY.match(name) and name not in seen and ("x86-64" in line or "64bit" in line):
            seen[name] = Path(path.strip())
    return list(seen.values())


def access(gpus: list[int], dev: Path = Path("/dev")) -> GpuAccess | None:
    """What a sandbox with ``gpus`` binds in (None: no GPU)."""
    if not gpus:
        return None
    try:
        cache = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True,
                               timeout=30, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        cache = ""
    return GpuAccess(tuple(gpus), tuple(device_files(gpus, dev)),
                     tuple(driver_libraries(cache)))
