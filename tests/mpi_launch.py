"""The tests' stand-in for an MPI rank's launcher: one srun task starts the grading image's
container sharing its node's network (gl-runner's ``net_mpi 1`` confines the run instead
of a network namespace), with the task's PMIx and Slurm variables passed in and Open
MPI's TCP ports set to the step's reserved ones, and ``gl-runner --once REQUEST`` inside
(whose request passes them on with ``env_pass``). In each task::

    python tests/mpi_launch.py SPEC.json

SPEC.json holds ``rank_container``'s argv and environment and the runtime's name."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

#: an srun task's variables a rank needs: its stepd's PMIx server, its step, Open MPI's
TASK_PREFIXES = ("PMIX_", "SLURM_", "SLURMD_", "OMPI_", "PRTE_")


def rank_container(box: Any, runner: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """argv and environment that start ``runner`` in ``box``'s image (a ContainerSandbox's)
    as a rank's container: the node's network shared, the work root bound, no cgroup of
    its own (the srun task's bounds it)."""
    argv = box.container_argv([(box.workroot, "/gl/work")], list(runner))
    if box.runtime == "bwrap":
        argv.insert(argv.index("--unshare-all") + 1, "--share-net")
    else:  # apptainer: no "--net --network none"
        at = argv.index("--network")
        del argv[at - 1:at + 2]
    return argv, box._env()


def pass_task_env(runtime: str, argv: Sequence[str], env: Mapping[str, str],
                  task: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """argv and environment with the task's variables ``task`` passed into the container
    (bubblewrap clears the environment, Apptainer cleans it)."""
    if runtime == "bwrap":
        cut = len(argv) - 1 - list(argv)[::-1].index("--")  # the runner's, not setpriv's
        pairs = [x for k, v in task.items() for x in ("--setenv", k, v)]
        return [*argv[:cut], *pairs, *argv[cut:]], dict(env)
    return list(argv), {**env, **{f"APPTAINERENV_{k}": v for k, v in task.items()}}


def mpi_ports(reserved: str) -> dict[str, str]:
    """Open MPI's TCP listeners (v4 and v6) on the step's reserved ports
    (SLURM_STEP_RESV_PORTS, "20000-20001" or "20000,20003"): their first run of
    consecutive ports, which only the task knows."""
    first = reserved.split(",")[0]
    low, _, high = first.partition("-")
    count = int(high or low) - int(low) + 1
    out = {}
    for v in ("v4", "v6"):
        out[f"OMPI_MCA_btl_tcp_port_min_{v}"] = low
        out[f"OMPI_MCA_btl_tcp_port_range_{v}"] = str(count)
    return out


def main(spec_path: str) -> None:
    """Exec the container of SPEC.json with this task's variables."""
    with open(spec_path) as f:
        spec = json.load(f)
    task = {k: v for k, v in os.environ.items() if k.startswith(TASK_PREFIXES)}
    if "SLURM_STEP_RESV_PORTS" in task:
        task.update(mpi_ports(task["SLURM_STEP_RESV_PORTS"]))
    argv, env = pass_task_env(spec["runtime"], spec["argv"], spec["env"], task)
    os.execvpe(argv[0], argv, env)


if __name__ == "__main__":
    main(sys.argv[1])
