"""The MPI rank entry: ``python -m grader.cli.rank SPEC``, what each task of an MPI
test's ``srun`` step runs on its node (``adapters.sandbox.ranks``). It starts the rank's
container with this task's PMIx and Slurm variables passed in and Open MPI's TCP ports
set to the step's reserved ones, by exec: nothing of gradeline stays in the task. It
imports neither the database driver nor the other commands."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from grader.adapters.sandbox.ranks import exec_task
from grader.settings import load


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m grader.cli.rank SPEC.json", file=sys.stderr)
        return 2
    try:
        exec_task(Path(args[0]), dict(load().task_env))
    except (OSError, ValueError, KeyError) as e:  # the runner's reply never comes: JE
        print(f"gradeline rank: cannot start the rank's container: {e}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
