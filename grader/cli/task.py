"""The array-task entry: ``python -m grader.cli.task ARRAY_DIR [--task N]``.

What each Slurm array task runs (``pipeline.slurm.submit.arrays.task_command``). It reads the
settings, wires the sandbox and the counter source, and grades its shard
(``pipeline.slurm.node.task``, whose docstring gives the theory of operation and the exit
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
from grader.compose.worker import worker_spec
from grader.core.cpuset import CpuSet
from grader.core.errors import GradelineError
from grader.pipeline.slurm.node.null import null_grading
from grader.pipeline.slurm.node.pilot import run_pilot
from grader.pipeline.slurm.node.task import OUR_FAULT, local_grading, persistent_grading, run_shard
from grader.pipeline.slurm.shards import ArrayDir
from grader.pipeline.slurm.tickets import SickReports, read_spec
from grader.settings import Settings, load


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m grader.cli.task",
                                description="grade one shard of a batch (a Slurm array task)")
    p.add_argument("array_dir", type=Path, nargs="?",
                   help="the array's directory under the batch")
    p.add_argument("--pilot", type=Path, metavar="POOL",
                   help="be a pilot: grade tickets of this pool until idle")
    p.add_argument("--task", type=int, help="shard number (default $SLURM_ARRAY_TASK_ID)")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        settings = load()
        faults.arm(settings.fault, settings.fault_dir)
        cpus = CpuSet.allowed()  # the cores Slurm gave this task
        if args.pilot is not None:
            return pilot(args.pilot, cpus, settings)
        if args.array_dir is None:
            p.error("ARRAY_DIR or --pilot POOL is required")
        task = args.task if args.task is not None else int(settings.slurm.array_task_id or "")
        grade = null_grading(settings.slurm) if settings.null_grading else \
            local_grading(cpus, worker_spec(settings), settings.slurm)
        return run_shard(ArrayDir(args.array_dir).shard(task), cpus=cpus, grade=grade,
                         slurm=settings.slurm,
                         metrics=source_named(settings.metrics),
                         say=lambda line: print(line, flush=True))
    except (GradelineError, ValueError) as e:
        print(f"gradeline task: error: {e}", file=sys.stderr, flush=True)
        return OUR_FAULT


def _nothing() -> None:
    """What ends a pilot's null grading: there is no container."""


def pilot(pool: Path, cpus: CpuSet, settings: Settings) -> int:
    """A pilot task: one container on its cores (its shape's: one for a serial pool) for
    every ticket it takes."""
    slurm = settings.slurm
    name = f"{slurm.array_job_id or 'local'}_{slurm.array_task_id or '0'}"
    try:
        if settings.null_grading:
            grade, close = null_grading(slurm), _nothing
        else:
            grade, close = persistent_grading(cpus, worker_spec(settings), slurm)
    except GradelineError as e:  # this node cannot grade at all: say so, then fail
        SickReports(pool).report(slurm.node or "unknown", name, f"cannot start: {e}",
                                 "start")
        raise
    metrics = source_named(settings.metrics)

    def say(line: str) -> None:
        print(line, flush=True)

    try:
        return run_pilot(pool, name, lambda shard: run_shard(
            shard, cpus=cpus, grade=grade, slurm=slurm, metrics=metrics,
            steal=False, say=say), read_spec(pool), say=say, node=slurm.node or "")
    finally:
        close()


if __name__ == "__main__":
    raise SystemExit(main())
