"""JSON-lines files that must survive a crash: a batch's journal of records, and an
array task's outcomes. The one place that writes and reads them.

A line is appended with one write(2) and fsync'd before the call returns, so a
crash loses at most the line being written; readers skip a torn last line. A batch's
journal may defer the fsync to ``Journal.sync`` (its flush syncs before it stores):
outcomes are durable in the shards' files already, and a record a machine crash took
is graded again, never lost.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from grader.core.record import SubmissionRecord

log = logging.getLogger(__name__)


def append_line(path: Path, data: Mapping[str, object], *, sync: bool = True) -> None:
    """Append one JSON line and fsync it (unless not ``sync``): once this returns, the
    line survives a crash."""
    append_lines(path, [data], sync=sync)


def append_lines(path: Path, items: Sequence[Mapping[str, object]], *, sync: bool = True
                 ) -> None:
    """Append JSON lines with one write(2) (and one fsync, unless not ``sync``)."""
    if not items:
        return
    line = "".join(json.dumps(d, separators=(",", ":")) + "\n" for d in items).encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        try:
            if os.write(fd, line) != len(line):
                raise OSError(errno.ENOSPC, "short write", str(path))
            if sync:
                os.fsync(fd)
        except OSError:
            # a partial line (the disk filled up) would glue itself to the next one
            # and hide it from readers: cut it off, so the caller's retry appends whole
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
            raise
    finally:
        os.close(fd)


def read_lines(path: Path, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """Complete lines from byte ``offset`` on; returns them and the offset after them
    (a line still being written is left for the next read)."""
    if not path.exists():
        return [], offset
    with path.open("rb") as f:
        f.seek(offset)
        data = f.read()
    end = data.rfind(b"\n") + 1
    out = []
    for line in data[:end].split(b"\n"):
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError:
                log.warning("%s: skipping a torn line (a crash while writing)", path)
    return out, offset + end


class Journal:
    """A batch's ``results.jsonl``: one SubmissionRecord per finished entry."""

    NAME = "results.jsonl"

    def __init__(self, batch_dir: Path) -> None:
        self.path = batch_dir / self.NAME

    def append(self, record: SubmissionRecord, *, sync: bool = True) -> None:
        append_line(self.path, record.to_json(), sync=sync)

    def sync(self) -> None:
        """Make every line appended without ``sync`` durable."""
        with contextlib.suppress(FileNotFoundError):
            fd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def read(self) -> dict[str, SubmissionRecord]:
        """The records by spool id (a later line for the same entry wins)."""
        return {r.spool_id: r for r in self}

    def __iter__(self) -> Iterator[SubmissionRecord]:
        lines, _ = read_lines(self.path)
        for data in lines:
            try:
                yield SubmissionRecord.from_json(data)
            except (KeyError, TypeError, ValueError) as e:
                log.warning("%s: skipping an unreadable record: %s", self.path, e)
