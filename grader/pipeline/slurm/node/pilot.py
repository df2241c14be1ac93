"""The pilot task, on a compute node: one container for its life, tickets taken until
it is idle or near its time limit (the protocol: ``slurm.tickets``; the pool that
starts pilots: ``slurm.submit.pool``)."""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from pathlib import Path

from grader import faults
from grader.pipeline.slurm.shards import Shard
from grader.pipeline.slurm.tickets import PilotSpec, SickReports, Tickets

#: Grades one shard (``slurm.node.task.run_shard`` bound to the pilot's judge).
ShardRunner = Callable[[Shard], int]
#: The exit status of a pilot that left because its tickets kept ending in judge faults
#: (its node's runtime is suspect; its report in ``SickReports`` is what the pool reads).
SICK = 3


def idle_poll_s(spec: PilotSpec, empty: int, pilot: str) -> float:
    """How long an idle pilot sleeps after ``empty`` polls in a row found no ticket: the
    interval doubles up to ``poll_s`` x pilots / 8, so that all idle pilots together
    look about 8 / ``poll_s`` times a second whatever their number (64 pilots polling
    every 0.1 s cost half of this machine's two cores; the first ticket after a lull
    still waits ~``poll_s`` x 8 / pilots for the next look), with a jitter of each
    pilot's own so they do not wake together."""
    cap = spec.poll_s * max(1.0, spec.pilots / 8)
    jitter = 0.75 + (zlib.crc32(f"{pilot}/{empty}".encode()) % 512) / 1024
    return min(spec.poll_s * (1 << min(empty - 1, 16)), cap) * jitter


def run_pilot(pool_dir: Path, pilot: str, run: ShardRunner, spec: PilotSpec,
              say: Callable[[str], None] = print, node: str = "") -> int:
    """The body of one pilot task: take tickets until idle or near the time limit."""
    tickets = Tickets(pool_dir)
    t0 = time.monotonic()
    last_work = t0
    done = faults_in_a_row = 0
    # a requeued pilot (same id) first finishes what it held when its node was lost
    mine = [t for t, p in tickets.held() if p == pilot]
    empty = 0  # polls in a row that found no ticket
    while True:
        now = time.monotonic()
        if mine:
            name = mine.pop()
        elif now - t0 > spec.minutes * 60 - spec.margin_s:
            say(f"pilot {pilot}: near the time limit after {done} tickets; leaving")
            return 0
        else:
            taken = tickets.take(pilot, spec.pilots)
            if taken is None:
                if now - last_work > spec.idle_s:
                    say(f"pilot {pilot}: idle {spec.idle_s:g} s after {done} tickets; leaving")
                    return 0
                empty += 1
                time.sleep(idle_poll_s(spec, empty, pilot))
                continue
            empty = 0
            name = taken
        try:
            shard, _ = tickets.read(name, pilot)
        except (OSError, ValueError, KeyError):
            continue  # given back meanwhile
        faults.point("pilot-ticket", name)
        try:
            status = run(shard)
        except OSError as e:  # e.g. the shared file system is full: not the shard's fault
            say(f"pilot {pilot}: ticket {name}: {e}; trying again in 1 s")
            mine.append(name)
            time.sleep(1.0)
            continue
        tickets.finish(name, pilot)
        done += 1
        last_work = time.monotonic()
        if status >= 2:
            say(f"pilot {pilot}: ticket {name} ended with status {status}")
            faults_in_a_row += 1
            if faults_in_a_row >= spec.sick_after:
                why = f"{faults_in_a_row} tickets in a row ended in judge faults"
                say(f"pilot {pilot}: {why}; leaving (this node's runtime is suspect)")
                SickReports(pool_dir).report(node or "unknown", pilot, why, "faults")
                return SICK
        else:
            faults_in_a_row = 0
