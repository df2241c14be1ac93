"""One pilot's CPU per ticket with grading that costs nothing, by tickets per batch.

A ticket's cost must not grow with the batch: a pilot reads its own shard's outcomes
only (``Shard.graded_here``; reading every shard's made a ticket cost O(shards), the
control plane's first ceiling in ``bench/control_plane.py``). In-process, no Slurm::

    .venv/bin/python bench/pilot_tickets.py --tickets 30,300
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from grader.core.cpuset import CpuSet
from grader.core.jobs import GradingJob
from grader.pipeline.slurm.node.null import null_grading
from grader.pipeline.slurm.node.pilot import run_pilot
from grader.pipeline.slurm.node.task import run_shard
from grader.pipeline.slurm.shards import ArrayDir, Shard
from grader.pipeline.slurm.tickets import PilotSpec, Tickets
from grader.settings import SlurmTask

PROBLEM = Path(__file__).resolve().parent.parent / "grader" / "examples" / "bigsum"


def per_ticket_ms(n: int, work: Path) -> tuple[float, float]:
    """(CPU, wall) ms per ticket of one pilot taking ``n`` one-submission tickets."""
    tickets = Tickets(work / "pool")
    tickets.ensure()
    array = ArrayDir.create(work / "batch")
    for i in range(n):
        src = work / f"s{i}" / "sum.cpp"
        src.parent.mkdir()
        src.write_text(f"// {i}\n")
        array.shard(i).write_jobs([GradingJob(PROBLEM, src)])
        tickets.post(f"0001.b.array-0.{i:05d}", array.shard(i))
    grade = null_grading(SlurmTask())

    def run(shard: Shard) -> int:
        return run_shard(shard, cpus=CpuSet([0]), grade=grade, slurm=SlurmTask(),
                         steal=False, say=lambda _: None)

    c0, t0 = time.process_time(), time.perf_counter()
    run_pilot(work / "pool", "p1", run, PilotSpec(idle_s=0.05, poll_s=0.01),
              say=lambda _: None)
    return ((time.process_time() - c0) / n * 1000, (time.perf_counter() - t0) / n * 1000)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tickets", default="30,300", help="tickets per batch, comma-separated")
    args = ap.parse_args()
    for n in (int(x) for x in args.tickets.split(",")):
        with tempfile.TemporaryDirectory(prefix="gl-pilot-tickets-", dir="/var/tmp") as tmp:
            cpu, wall = per_ticket_ms(n, Path(tmp))
        print(f"{n:5d} tickets in the batch: {cpu:.2f} ms CPU, {wall:.2f} ms wall per ticket")
    return 0


if __name__ == "__main__":
    sys.exit(main())
