"""Settings -> the sandbox and a worker's configuration, for both entry points (``main``
and the array task's ``task``). Imports nothing of the database, so an array task
stays lean."""

from __future__ import annotations

from pathlib import Path

from grader.adapters import gpus
from grader.adapters.sandbox import SandboxConfig
from grader.adapters.scheduler.slurm import SlurmCLI
from grader.pipeline.local_executor import WorkerSpec
from grader.settings import Settings


def sandbox_config(settings: Settings, state_dir: Path | None = None) -> SandboxConfig:
    return SandboxConfig(state_dir=state_dir or settings.state_dir,
                         definition=settings.image_def, runtime=settings.runtime,
                         uid_base=settings.sandbox_uid_base, cgroups=settings.cgroups,
                         debian_mirror=settings.debian_mirror,
                         image_dir=settings.image_dir)


def workroot(state_dir: Path) -> Path:
    """Scratch space the sandbox uid can traverse (not under a mode-700 home)."""
    return state_dir / "work"


def worker_spec(settings: Settings, state_dir: Path | None = None) -> WorkerSpec:
    """How a worker here builds its judge: on a compute node the node's own GPUs (those
    its Slurm job holds) are found where the worker starts."""
    state = state_dir or settings.state_dir
    slurm = settings.slurm
    nodes, peers = 1, tuple[str, ...]()
    if slurm.num_nodes and int(slurm.num_nodes) > 1 and slurm.nodelist:  # an MPI pilot's
        nodes = int(slurm.num_nodes)
        peers = tuple(SlurmCLI(settings.slurm_conf).node_addresses(slurm.nodelist))
    return WorkerSpec(sandbox_config(settings, state), workroot(state), nodes=nodes,
                      peers=peers,
                      compile_cache=settings.compile_cache,
                      compile_accel=settings.compile_accel, on_reject=settings.on_reject,
                      gpus=tuple(gpus.allowed(slurm.job_gpus, in_job=slurm.job_id is not None,
                                              dev=settings.gpu_devices)),
                      gpu_devices=settings.gpu_devices)
