"""The batch script of one grading array: ``#SBATCH`` lines, then the task command.

It is the single source of truth for how a batch is requested, whichever
scheduler adapter submits it.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from grader.core.shape import Shape


@dataclass(frozen=True, slots=True)
class ArrayRequest:
    """What an array job asks Slurm for.

    :param tasks: array tasks, numbered 0..tasks-1.
    :param throttle: at most this many tasks at once (``%T``), None: no limit.
    :param minutes: the time limit of each task.
    :param output: per-task log path; ``%a`` is the task id.
    :param nice: lower the job's priority by this much (bulk work behind live feedback).
    :param qos: the site's quality of service for this work, if it has one.
    :param account: the account the job charges (a course's: fair share between them).
    :param nodes: nodes of each task (an MPI assignment's ranks span them), with
        ``ntasks_per_node`` tasks (ranks) on each, of ``cpus_per_task`` CPUs.
    :param gpus_per_node: GRES ``gpu`` on each node.
    :param mem_per_node_mib: memory on each node (None: the cluster's per-CPU default).
    :param exclusive: whole nodes (performance tests).
    """

    name: str
    tasks: int
    cpus_per_task: int
    minutes: int
    output: Path
    throttle: int | None = None
    partition: str | None = None
    nice: int | None = None
    qos: str | None = None
    account: str | None = None
    nodes: int = 1
    ntasks_per_node: int = 1
    gpus_per_node: int = 0
    mem_per_node_mib: int | None = None
    exclusive: bool = False

    def for_shape(self, shape: Shape) -> ArrayRequest:
        """This request sized for ``shape``: a task is one grading's allocation."""
        per_node = shape.ranks_per_node
        return replace(self, nodes=shape.nodes, ntasks_per_node=per_node,
                       cpus_per_task=max(1, shape.cores // per_node),
                       gpus_per_node=shape.gpus, mem_per_node_mib=shape.memory_mib,
                       exclusive=shape.exclusive == "node")


def array_script(req: ArrayRequest, command: Sequence[str]) -> str:
    """The script text; ``command`` runs once per task (it finds its task id in
    ``SLURM_ARRAY_TASK_ID``, so no argument needs the shell)."""
    throttle = f"%{req.throttle}" if req.throttle else ""
    lines = [
        "#!/bin/bash",
        f"#SBATCH --job-name={req.name}",
        f"#SBATCH --array=0-{req.tasks - 1}{throttle}",
        *([f"#SBATCH --nodes={req.nodes}", f"#SBATCH --ntasks-per-node={req.ntasks_per_node}"]
          if req.nodes > 1 or req.ntasks_per_node > 1 else ["#SBATCH --ntasks=1"]),
        f"#SBATCH --cpus-per-task={req.cpus_per_task}",
        "#SBATCH --hint=nomultithread",
        f"#SBATCH --time={req.minutes}",
        "#SBATCH --requeue",
        f"#SBATCH --output={req.output}",
        "#SBATCH --open-mode=append",
    ]
    if req.partition:
        lines.append(f"#SBATCH --partition={req.partition}")
    if req.nice:
        lines.append(f"#SBATCH --nice={req.nice}")
    if req.qos:
        lines.append(f"#SBATCH --qos={req.qos}")
    if req.account:
        lines.append(f"#SBATCH --account={req.account}")
    if req.gpus_per_node:
        lines.append(f"#SBATCH --gres=gpu:{req.gpus_per_node}")
    if req.mem_per_node_mib:
        lines.append(f"#SBATCH --mem={req.mem_per_node_mib}M")
    if req.exclusive:
        lines.append("#SBATCH --exclusive")
    lines += ["# One task of the array: grades its shard on its own cores.",
              "exec " + " ".join(shlex.quote(a) for a in command)]
    return "\n".join(lines) + "\n"
