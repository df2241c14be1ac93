"""The array-task entry: ``python -m grader.cli.task ARRAY_DIR [--task N]``.

What each Slurm array task runs (``pipeline.slurm_executor.task_command``). It reads the
settings, wires the sandbox and the counter source, and grades its shard
(``pipeline.task``, whose docstring gives the theory of operation and the exit
contract). It imports neither the database driver nor the other commands, so
compute nodes need neither and a task starts in a fraction of a second.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from grader import faults
from grader.adapters.metrics import source_named
from grader.cli.wiring import worker_spec
from grader.core.errors import GradelineError
from grader.cpuset import CpuSet
from grader.pipeline.shards import ArrayDir
from grader.pipeline.task import OUR_FAULT, local_grading, run_shard
from grader.settings import load


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m grader.cli.task",
                                description="grade one shard of a batch (a Slurm array task)")
    p.add_argument("array_dir", type=Path, help="the array's directory under the batch")
    p.add_argument("--task", type=int, help="shard number (default $SLURM_ARRAY_TASK_ID)")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        settings = load()
        faults.arm(settings.fault, settings.fault_dir)
        task = args.task if args.task is not None else int(settings.slurm.array_task_id or "")
        cpus = CpuSet.allowed()  # the cores Slurm gave this task
        grade = local_grading(cpus, worker_spec(settings), settings.slurm)
        return run_shard(ArrayDir(args.array_dir).shard(task), cpus=cpus, grade=grade,
                         slurm=settings.slurm,
                         metrics=source_named(settings.metrics),
                         say=lambda line: print(line, flush=True))
    except (GradelineError, ValueError) as e:
        print(f"gradeline task: error: {e}", file=sys.stderr, flush=True)
        return OUR_FAULT


if __name__ == "__main__":
    raise SystemExit(main())
