"""The on-disk layout of a batch's Slurm arrays, shared by the submitting side
(``slurm.submit``) and the array tasks and pilots (``slurm.node``)::

    <batch>/array-<n>/shard-<i>.json           the jobs of task i
    <batch>/array-<n>/shard-<i>.jsonl          outcomes graded by task i, one fsync'd line each
    <batch>/array-<n>/claims/<hash>            which task took a submission (linked into place)
    <batch>/array-<n>/shard-<i>.metrics.jsonl  counter samples of the whole shard
    <batch>/array-<n>/job.sbatch, job.json     the batch script; the job id
    <batch>/array-<n>/logs/<i>.log             task output

The batch directory sits on a file system the compute nodes share.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.core.jobs import GradingJob, Outcome
from grader.core.samples import ShardSample
from grader.pipeline.journal import append_line, append_lines, read_lines

#: link(2) refused because the file system has no hard links (some FUSE and SMB mounts)
NO_LINKS = frozenset({errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK})


def shard_count(array_dir: Path) -> int:
    """How many shards (array tasks) an array has: its ``shard-<i>.json`` files."""
    return len(list(array_dir.glob("shard-*.json")))


@dataclass(frozen=True, slots=True)
class Shard:
    """The files of one array task."""

    array_dir: Path
    index: int

    @property
    def spec(self) -> Path:
        return self.array_dir / f"shard-{self.index}.json"

    @property
    def outcomes(self) -> Path:
        return self.array_dir / f"shard-{self.index}.jsonl"

    @property
    def metrics(self) -> Path:
        return self.array_dir / f"shard-{self.index}.metrics.jsonl"

    @property
    def name(self) -> str:
        return f"shard-{self.index}"

    def write_jobs(self, jobs: Sequence[GradingJob]) -> None:
        self.spec.write_text(json.dumps([j.to_json() for j in jobs]))

    def jobs(self) -> list[GradingJob]:
        return [GradingJob.from_json(d) for d in json.loads(self.spec.read_text())]

    def record(self, outcome: Outcome) -> None:
        append_line(self.outcomes, outcome.to_json())

    def read_outcomes(self, offset: int = 0) -> tuple[list[Outcome], int]:
        lines, end = read_lines(self.outcomes, offset)
        return [Outcome.from_json(d) for d in lines], end

    def siblings(self) -> list[Shard]:
        """The array's other shards, starting after this one (where an idle task steals)."""
        n = shard_count(self.array_dir)
        return [Shard(self.array_dir, (self.index + k) % n) for k in range(1, n)]

    def graded_here(self) -> set[str]:
        """Keys this task (or its requeued instance) already has an outcome for.

        Enough to skip what is done: a job is graded only by the task whose claim holds
        it (``claim``), and that task records it in its own file; jobs another task
        graded fail this task's claim. (Reading every shard's outcomes instead made a
        ticket cost O(shards): 18.7 ms of a pilot's CPU per ticket in a 300-ticket
        batch against 5.2 ms in a 30-ticket one, the control plane's first ceiling;
        ``bench/pilot_tickets.py``, ``bench/control_plane.py``.)"""
        return {o.key for o in self.read_outcomes()[0]}

    def claim(self, job: GradingJob) -> bool:
        """Take ``job`` for this task: it succeeds once per submission and array (a link,
        also on NFS), and again for this task's own requeued instance."""
        claims = self.array_dir / "claims"
        claims.mkdir(exist_ok=True)
        path = claims / hashlib.sha256(job.key.encode()).hexdigest()[:32]
        mine = str(self.index)
        # A claim appears whole or not at all: written under a name of this process's
        # own, then linked into place (link(2) fails where the name exists, on NFS too).
        # Created empty and then written, a full file system (the write's ENOSPC) or a
        # crash between the two left it empty: this task's own retry then read "" as
        # another task's claim, and the job ended without an outcome (a judge error).
        tmp = claims / f".{path.name}.{mine}.{os.getpid()}"
        try:
            tmp.write_text(mine, encoding="ascii")  # OSError (full): nothing is claimed
            try:
                os.link(tmp, path)
                return True
            except FileExistsError:
                pass
            except OSError as e:
                if e.errno not in NO_LINKS:
                    raise
                return _claim_exclusive(path, mine)
        finally:
            tmp.unlink(missing_ok=True)
        return _claimed_by(path, mine)

    def record_samples(self, samples: Sequence[ShardSample]) -> None:
        """The shard's counter and monitor samples, in one write and without fsync:
        measurements, not results (a machine crash may take them; it was one fsync
        per sample, several per ticket of a pilot)."""
        append_lines(self.metrics, [s.to_json() for s in samples], sync=False)

    def samples(self) -> list[ShardSample]:
        return [ShardSample.from_json(d) for d in read_lines(self.metrics)[0]]


def _claimed_by(path: Path, mine: str) -> bool:
    """Whether the claim at ``path`` is ``mine`` (this task's own, requeued)."""
    try:
        return path.read_text(encoding="ascii") == mine
    except OSError:
        return False


def _claim_exclusive(path: Path, mine: str) -> bool:
    """A claim where the file system has no hard links: created (O_EXCL) and written,
    removed again when the write fails, so that a retry can take it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return _claimed_by(path, mine)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(mine)
    except OSError:
        path.unlink(missing_ok=True)
        raise
    return True


class ArrayDir:
    """One submitted array of a batch: its shards, script, job id and logs."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def all(cls, batch_dir: Path) -> list[ArrayDir]:
        return [cls(p) for p in sorted(batch_dir.glob("array-*"),
                                       key=lambda p: int(p.name.split("-")[1]))]

    @classmethod
    def create(cls, batch_dir: Path) -> ArrayDir:
        a = cls(batch_dir / f"array-{len(cls.all(batch_dir))}")
        (a.path / "logs").mkdir(parents=True)
        return a

    @property
    def script(self) -> Path:
        return self.path / "job.sbatch"

    @property
    def log_pattern(self) -> Path:
        return self.path / "logs" / "%a.log"

    def shard(self, index: int) -> Shard:
        return Shard(self.path, index)

    def shards(self) -> Iterator[Shard]:
        return (self.shard(i) for i in range(shard_count(self.path)))

    def save_job(self, job_id: str, tasks: int, shard_size: int) -> None:
        (self.path / "job.json").write_text(json.dumps(
            {"job_id": job_id, "tasks": tasks, "shard_size": shard_size,
             "submitted_at": time.time()}))

    def job(self) -> dict[str, Any] | None:
        try:
            data: dict[str, Any] = json.loads((self.path / "job.json").read_text())
            return data
        except (OSError, ValueError):
            return None


def batch_outcomes(batch_dir: Path) -> Iterator[Outcome]:
    """Every outcome the batch's arrays (or pilots' tickets) recorded so far."""
    for a in ArrayDir.all(batch_dir):
        for shard in a.shards():
            yield from shard.read_outcomes()[0]


def batch_samples(batch_dir: Path) -> list[ShardSample]:
    """Every counter sample the batch's tasks recorded."""
    return [s for a in ArrayDir.all(batch_dir) for shard in a.shards()
            for s in shard.samples()]
