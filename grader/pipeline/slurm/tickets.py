"""The pilot ticket protocol: what the submitting side and the pilots share on the
file system the nodes mount (``<spool>/pilots/``)::

    spec.json                 what pilots read of the pool's settings
    queue/<ticket>            work waiting: a ticket names one shard of a batch
                              (the batch's ``array-<n>/shard-<i>.json``, written
                              as for an array task; ``slurm.shards``)
    taken/<ticket>@<pilot>    a pilot took it (an atomic rename: one taker)
    dropped/<ticket>          its pilots kept dying: the batch records JE
    array-<n>/                one pilot array: job.sbatch, job.json, logs/
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from grader.pipeline.slurm.shards import Shard

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PilotSpec:
    """How pilots are requested and when they leave.

    :param pilots: pilot tasks at once at most (one core each).
    :param idle_s: a pilot exits after this long without a ticket.
    :param minutes: each pilot's Slurm time limit; it takes no new ticket in the
        last ``margin_s`` of it.
    :param max_attempts: pilots that may die holding one ticket before it is dropped.
    :param sick_after: a pilot leaves (status ``SICK``) after this many tickets in a row
        ended in judge faults, and the pool drains its node; a node where this many
        pilots could not start grading is drained too: a node whose runtime broke
        stops taking work.
    """

    pilots: int = 2
    idle_s: float = 20.0
    minutes: int = 60
    margin_s: float = 300.0
    max_attempts: int = 3
    poll_s: float = 0.1
    submit_interval_s: float = 2.0
    partition: str | None = None
    account: str | None = None  # the course's Slurm account
    qos: str | None = None  # live feedback's QOS
    ticket_size: int | None = None  # submissions per ticket; None: ``ticket_sizes``
    sick_after: int = 2


def write_spec(pool_dir: Path, spec: PilotSpec) -> None:
    """What pilots read of the spec (the serving side's settings reach them here).

    Written aside and renamed; when the shared file system is full the previous spec
    stays (or pilots use the defaults) and the server starts anyway: a restart during
    a full spool must not become a crash loop (the soak over NFS found one)."""
    tmp = pool_dir / f".spec.json.{os.getpid()}.tmp"  # two servers on one spool: theirs
    try:
        tmp.write_text(json.dumps(
            {"idle_s": spec.idle_s, "minutes": spec.minutes, "margin_s": spec.margin_s,
             "poll_s": spec.poll_s, "sick_after": spec.sick_after, "pilots": spec.pilots}))
        tmp.replace(pool_dir / "spec.json")
    except OSError as e:
        tmp.unlink(missing_ok=True)
        log.warning("pilots: cannot write %s (%s); pilots keep the previous settings",
                    pool_dir / "spec.json", e)


def read_spec(pool_dir: Path) -> PilotSpec:
    try:
        d = json.loads((pool_dir / "spec.json").read_text())
        return PilotSpec(idle_s=float(d["idle_s"]), minutes=int(d["minutes"]),
                         margin_s=float(d["margin_s"]), poll_s=float(d["poll_s"]),
                         sick_after=int(d.get("sick_after", PilotSpec().sick_after)),
                         pilots=int(d.get("pilots", PilotSpec().pilots)))
    except (OSError, ValueError, KeyError, TypeError):
        return PilotSpec()


def pilot_command(pool_dir: Path) -> list[str]:
    """What each pilot task runs (the lean task entry, this interpreter)."""
    return [sys.executable, "-m", "grader.cli.task", "--pilot", str(pool_dir)]


class Tickets:
    """The ticket directories of a pool (shared by pilots and the submitting side)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.queue, self.taken, self.dropped = (root / d for d in ("queue", "taken", "dropped"))

    def ensure(self) -> None:
        for d in (self.queue, self.taken, self.dropped):
            d.mkdir(parents=True, exist_ok=True)

    def post(self, name: str, shard: Shard, attempts: int = 0) -> None:
        """Queue a ticket for ``shard`` (written aside, then renamed: never half seen)."""
        body = json.dumps({"array_dir": str(shard.array_dir), "index": shard.index,
                           "attempts": attempts})
        tmp = self.queue / f".{name}.tmp"
        tmp.write_text(body)
        tmp.replace(self.queue / name)

    def waiting(self) -> list[str]:
        try:  # names, not Paths: every idle pilot lists the queue ten times a second
            return sorted(n for n in os.listdir(self.queue)  # noqa: PTH208
                          if not n.startswith("."))
        except FileNotFoundError:
            return []

    def held(self) -> list[tuple[str, str]]:
        """(ticket, pilot) of every taken ticket."""
        try:
            names = [p.name for p in self.taken.iterdir()]
        except FileNotFoundError:
            return []
        return [tuple(n.rsplit("@", 1)) for n in names if "@" in n]  # type: ignore[misc]

    def take(self, pilot: str, spread: int = 1) -> str | None:
        """One of the oldest waiting tickets, now held by ``pilot``; None when none
        waits. Each pilot starts at its own place among the oldest ``spread`` (the
        number of pilots): pilots that all reached for the oldest one collided, every
        ticket costing the losers a failed rename each."""
        names = self.waiting()
        if not names:
            return None
        start = zlib.crc32(pilot.encode()) % max(1, min(len(names), spread))
        for name in names[start:] + names[:start]:
            try:
                (self.queue / name).rename(self.taken / f"{name}@{pilot}")
            except FileNotFoundError:
                continue  # another pilot was faster
            return name
        return None

    def read(self, name: str, pilot: str) -> tuple[Shard, int]:
        d = json.loads((self.taken / f"{name}@{pilot}").read_text())
        return Shard(Path(d["array_dir"]), int(d["index"])), int(d.get("attempts", 0))

    def finish(self, name: str, pilot: str) -> None:
        # missing_ok: given back meanwhile (we looked dead); the outcomes are in anyway
        (self.taken / f"{name}@{pilot}").unlink(missing_ok=True)

    def give_back(self, name: str, pilot: str, max_attempts: int) -> None:
        """A dead pilot's ticket: queued again, or dropped after ``max_attempts``."""
        src = self.taken / f"{name}@{pilot}"
        try:
            d = json.loads(src.read_text())
        except (OSError, ValueError):
            return
        attempts = int(d.get("attempts", 0)) + 1
        if attempts >= max_attempts:
            src.replace(self.dropped / name)
            log.error("ticket %s dropped: %d pilots died holding it", name, attempts)
            return
        self.post(name, Shard(Path(d["array_dir"]), int(d["index"])), attempts)
        src.unlink(missing_ok=True)
        log.warning("pilot %s is gone; its ticket %s is queued again", pilot, name)


class SickReports:
    """Pilots' word that their node's runtime fails (``sick/<node>@<pilot>.json``), and
    what the pool did about each node (``sick/handled/<node>.json``): written by pilots
    on compute nodes, read by the serving side, like tickets."""

    def __init__(self, root: Path) -> None:
        self.dir = root / "sick"
        self.handled_dir = self.dir / "handled"

    def report(self, node: str, pilot: str, reason: str, kind: str) -> None:
        """``kind``: ``faults`` (tickets in a row ended in judge faults: the pilot
        left) or ``start`` (the pilot could not start grading at all)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.dir / f".{node}@{pilot}.tmp"
        tmp.write_text(json.dumps({"node": node, "pilot": pilot, "reason": reason,
                                   "kind": kind, "at": time.time()}))
        tmp.replace(self.dir / f"{node}@{pilot}.json")

    def open_reports(self) -> dict[str, list[dict[str, object]]]:
        """node -> the reports not handled yet."""
        out: dict[str, list[dict[str, object]]] = {}
        try:
            paths = sorted(self.dir.glob("*@*.json"))
        except FileNotFoundError:
            return out
        for p in paths:
            try:
                d = json.loads(p.read_text())
            except (OSError, ValueError):
                continue
            out.setdefault(str(d.get("node", "")), []).append({**d, "file": p.name})
        return out

    def handle(self, node: str, outcome: dict[str, object]) -> None:
        """Record what was done about ``node`` and set its reports aside."""
        self.handled_dir.mkdir(parents=True, exist_ok=True)
        for p in self.dir.glob(f"{node}@*.json"):
            p.replace(self.handled_dir / p.name)
        (self.handled_dir / f"{node}.json").write_text(json.dumps(outcome, indent=1))

    def handled(self) -> list[dict[str, object]]:
        """What was done about each sick node (for staff: status, the live page)."""
        out = []
        for p in sorted(self.handled_dir.glob("*.json")):
            if "@" in p.name:
                continue
            try:
                out.append(json.loads(p.read_text()))
            except (OSError, ValueError):
                continue
        return out
