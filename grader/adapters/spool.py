"""The spool directory, with maildir semantics: nothing is ever half-visible or lost.

    spool/tmp/<id>/          a writer builds an entry here...
    spool/new/<id>/          ...and renames it here when complete (atomic)
    spool/cur/<batch>/<id>/  intake claims entries by renaming them into a batch
    spool/done/<id>/         after the result is stored in the database
    spool/quarantine/<id>/   bad input, with reason.json; never deleted silently
    spool/batches/<batch>/   a finished batch's bookkeeping (journal, array dirs)
    spool/regrades/          a regrade's batches, and each assignment's latest preview
    spool/similarity/<a>/    an assignment's similarity report and what it compared
    spool/pilots/            the pilot pool's tickets and sick reports

An entry is ``meta.json`` (course, assignment, student, submitted_at) plus
``payload/`` (the submitted file, directory or archive, as given) and, once
intake checked it, ``src/`` (the unpacked sources; ``.src-ok`` marks it
complete). Every move is a rename within one file system, so a crash leaves
each entry in exactly one place; a re-run continues from there. This module is the one
place the layout is spelled: the rest asks ``Spool`` where a thing is.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
import socket
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.core.errors import ConfigError, SubmissionError
from grader.core.fairness import Waiting
from grader.core.jobs import now_iso
from grader.core.spoolmeta import MetaError, SpoolMeta

STATES = ("tmp", "new", "cur", "done", "quarantine")
CLAIMED_AT = ".claimed_at"  # in cur/<batch>/: when the batch was claimed


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def unique_name() -> str:
    """maildir-style: time, pid, random, host -- unique without coordination."""
    return f"{time.time_ns()}.P{os.getpid()}R{secrets.token_hex(4)}.{socket.gethostname()}"


@dataclass(frozen=True, slots=True)
class Entry:
    """One spooled submission in some state directory."""

    id: str
    path: Path

    @property
    def meta_path(self) -> Path:
        return self.path / "meta.json"

    @property
    def payload(self) -> Path:
        return self.path / "payload"

    @property
    def src(self) -> Path:
        """The unpacked sources (made by intake; what the judge grades)."""
        return self.path / "src"

    @property
    def unpacked(self) -> bool:
        """Intake finished unpacking (a resumed run must not rebuild src/ under array
        tasks of the interrupted run that may still read it)."""
        return (self.path / ".src-ok").exists() and self.src.is_dir()

    def mark_unpacked(self) -> None:
        (self.path / ".src-ok").touch()

    def drop_src(self) -> None:
        """Remove the unpacked sources (payload/ stays: regrades unpack it again)."""
        shutil.rmtree(self.src, ignore_errors=True)
        (self.path / ".src-ok").unlink(missing_ok=True)

    def meta(self) -> SpoolMeta:
        """Its meta.json, checked.

        :raises MetaError: when it is missing, unreadable or malformed (the reason).
        """
        return SpoolMeta.read(self.meta_path)

    def meta_or_none(self) -> SpoolMeta | None:
        """Its meta.json, or None when that is missing or malformed (intake quarantines
        such an entry with the reason; other readers only count it)."""
        try:
            return self.meta()
        except MetaError:
            return None


def _reason(entry: Path, code: str, message: str) -> None:
    """Why an entry is in quarantine/: ``reason.json`` beside it."""
    (entry / "reason.json").write_text(json.dumps(
        {"code": code, "message": message, "quarantined_at": now_iso()}, indent=1))


PRIVATE = 0o700  # a new spool: the grading account only (a staff group: chmod g+rX)


def refuse_shared(root: Path) -> None:
    """Refuse a spool that other accounts can write: they could plant or swap
    submissions, results and journals (SECURITY.md)."""
    for d in (root, *(root / s for s in STATES)):
        mode = d.stat().st_mode
        if mode & 0o002:
            raise ConfigError(f"{d} is writable by every account (mode {mode & 0o7777:o}): "
                              f"run 'chmod o-w {d}'; submissions reach a spool through "
                              "'gradeline submit' or a drop directory, never by others "
                              "writing into it")


class Spool:
    """A spool root and its state directories.

    :param create: make the spool where there is none (the commands that hand
        submissions in, and the services that take them); else a path that holds no
        spool is refused, naming it, and nothing is made there (a mistyped ``--spool``
        must not become a second, empty spool that a report then reads).
    :raises ConfigError: no spool at ``root`` and ``create`` is false.
    """

    def __init__(self, root: Path, *, create: bool = False) -> None:
        self.root = root
        #: new/ entry id -> (student, deferred) (meta.json is written once)
        self._waiting: dict[str, Waiting] = {}
        if not create:
            missing = "no such directory" if not root.exists() else \
                "not a directory" if not root.is_dir() else \
                "not a spool (it has no new/)" if not (root / "new").is_dir() else None
            if missing:
                raise ConfigError(f"spool {root}: {missing}; check --spool or "
                                  "$GRADELINE_SPOOL (a spool is made by what hands "
                                  "submissions in, 'gradeline submit', or by 'gradeline "
                                  "serve'); nothing was created")
        elif not root.exists():  # submissions are private to the grading account
            root.mkdir(parents=True, mode=PRIVATE, exist_ok=True)
            root.chmod(PRIVATE)  # whatever the umask
        for s in STATES:
            (root / s).mkdir(exist_ok=True, mode=PRIVATE)
        refuse_shared(root)

    def dir(self, state: str) -> Path:
        return self.root / state

    # -- where things are ------------------------------------------------------
    def batch(self, name: str) -> Path:
        """A claimed batch (``cur/<batch>``)."""
        return self.dir("cur") / name

    def done(self, spool_id: str) -> Entry:
        """A stored submission (``done/<id>``: its payload is kept for regrades)."""
        return Entry(spool_id, self.dir("done") / spool_id)

    def settled(self, spool_id: str) -> bool:
        """Whether ``spool_id`` was stored or quarantined (its result is known)."""
        return any((self.dir(s) / spool_id).exists() for s in ("done", "quarantine"))

    def regrade_batch(self, name: str) -> Path:
        return self.root / "regrades" / name

    def regrade_preview(self, assignment: str) -> Path:
        """Where the latest regrade preview of an assignment is kept."""
        return self.root / "regrades" / f"preview-{assignment}.json"

    @property
    def pilots(self) -> Path:
        return self.root / "pilots"

    def similarity(self, assignment: str) -> Path:
        """An assignment's similarity work (``report.json``, ``work/<language>/...``)."""
        return self.root / "similarity" / assignment

    def compared(self, assignment: str, language: str, student: str) -> Path:
        """The files of a student that a similarity report compared."""
        return self.similarity(assignment) / "work" / language / "subs" / student

    # -- writers ---------------------------------------------------------------
    def submit(self, *, course: str, assignment: str, student: str, path: Path,
               submitted_at: str | None = None, deferred: bool = False,
               quarantine: tuple[str, str] | None = None, override: str = "",
               team: tuple[str, ...] = ()) -> Entry:
        """Copy ``path`` (file or directory) into the spool atomically; return the entry.

        :param deferred: taken past a hand-in limit: claimed after every other waiting
            submission (``core.fairness``).
        :param quarantine: (code, message): kept straight in quarantine/ with that
            reason, never in new/ where intake would claim it (an LMS download's entry
            that maps to no student).
        :param override: staff took it past a door's refusal: who, why and what
            (kept in its meta.json).
        :param team: of team work, the team's members when it was handed in.
        """
        if not path.exists() and not path.is_symlink():
            raise SubmissionError(f"{path}: no such file or directory")
        sid = unique_name()
        tmp = self.dir("tmp") / sid
        tmp.mkdir()
        try:
            return self._fill(tmp, sid, course=course, assignment=assignment,
                              student=student, path=path, submitted_at=submitted_at,
                              deferred=deferred, quarantine=quarantine,
                              override=override, team=team)
        except OSError:  # e.g. the file system is full: leave no half entry in tmp/
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def _fill(self, tmp: Path, sid: str, *, course: str, assignment: str, student: str,
              path: Path, submitted_at: str | None, deferred: bool,
              quarantine: tuple[str, str] | None, override: str = "",
              team: tuple[str, ...] = ()) -> Entry:
        payload = tmp / "payload"
        payload.mkdir()
        if path.is_dir() and not path.is_symlink():
            shutil.copytree(path, payload / path.name, symlinks=True)
        else:
            shutil.copy2(path, payload / path.name, follow_symlinks=False)
        meta = SpoolMeta(course, assignment, student, submitted_at or now_iso(), now_iso(),
                         path.name, deferred, override or None, team)
        with (tmp / "meta.json").open("w", encoding="utf-8") as f:
            json.dump(meta.to_json(), f)
            f.flush()
            os.fsync(f.fileno())
        state = "new"
        if quarantine is not None:
            _reason(tmp, *quarantine)
            state = "quarantine"
        _fsync_dir(tmp)
        final = self.dir(state) / sid
        tmp.rename(final)
        _fsync_dir(self.dir(state))
        return Entry(sid, final)

    # -- intake ----------------------------------------------------------------
    def new_entries(self) -> list[Entry]:
        return [Entry(p.name, p) for p in sorted(self.dir("new").iterdir())]

    def waiting(self) -> list[Waiting]:
        """The new entries with their students, in arrival order (an unreadable
        meta.json counts as student "": intake quarantines it with the reason)."""
        out = []
        entries = self.new_entries()
        for e in entries:
            w = self._waiting.get(e.id)
            if w is None:
                meta = e.meta_or_none()
                w = self._waiting[e.id] = Waiting(
                    e.id, meta.student if meta is not None else "",
                    meta.deferred if meta is not None else False)
            out.append(w)
        if len(self._waiting) > 2 * len(entries) + 1000:  # forget claimed ones
            ids = {e.id for e in entries}
            self._waiting = {k: v for k, v in self._waiting.items() if k in ids}
        return out

    def claim(self, batch: str, limit: int | None = None,
              ids: list[str] | None = None) -> list[Entry]:
        """Move new entries (those of ``ids`` only, when given) into ``cur/<batch>/``;
        each rename is atomic, so two concurrent intakes never claim the same entry."""
        bdir = self.dir("cur") / batch
        bdir.mkdir(parents=True, exist_ok=True)
        if not (bdir / CLAIMED_AT).exists():
            (bdir / CLAIMED_AT).write_text(now_iso() + "\n")
        claimed: list[Entry] = []
        todo = self.new_entries() if ids is None else \
            [Entry(i, self.dir("new") / i) for i in ids]
        for e in todo:
            if limit is not None and len(claimed) >= limit:
                break
            target = bdir / e.id
            try:
                e.path.rename(target)
            except FileNotFoundError:
                continue  # another intake won it
            claimed.append(Entry(e.id, target))
        _fsync_dir(bdir)
        return claimed

    @staticmethod
    def claimed_at(batch: Path) -> str:
        """When ``batch`` was claimed (now, for a batch from before this was recorded)."""
        try:
            return (batch / CLAIMED_AT).read_text().strip() or now_iso()
        except OSError:
            return now_iso()

    @staticmethod
    @contextlib.contextmanager
    def working_on(batch: Path) -> Iterator[bool]:
        """Hold ``batch`` for this process while the block runs: yields False when
        another gradeline (a second server, a run beside a server) already works on
        it, and then the caller must leave it alone. An flock: it ends with the
        holder's process, so a crashed holder leaves nothing to clean up."""
        fd = os.open(batch / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            yield True
        finally:
            os.close(fd)

    @staticmethod
    def busy(batch: Path) -> bool:
        """Whether some process works on ``batch`` now (see ``working_on``)."""
        try:
            with Spool.working_on(batch) as mine:
                return not mine
        except FileNotFoundError:
            return True  # it moved on: finished by someone

    def batches(self) -> list[Path]:
        """Claimed batches not yet finished (to resume after a crash)."""
        return sorted(p for p in self.dir("cur").iterdir() if p.is_dir())

    def batch_entries(self, batch: Path) -> list[Entry]:
        """Entries still in a batch (array-*/ and other bookkeeping are not entries)."""
        return [Entry(p.name, p) for p in sorted(batch.iterdir())
                if p.is_dir() and (p / "meta.json").exists()]

    def entries_of(self, batch: Path, ids: Iterable[str]) -> list[Entry]:
        """Those of ``ids`` still in ``batch`` (without listing it: a flush of a few
        results in a batch of hundreds)."""
        return [Entry(i, batch / i) for i in ids if (batch / i / "meta.json").exists()]

    def finish(self, entry: Entry) -> Entry:
        """Stored: drop the unpacked sources and move the entry to done/."""
        entry.drop_src()
        target = self.dir("done") / entry.id
        entry.path.rename(target)
        return Entry(entry.id, target)

    def quarantine(self, entry: Entry, code: str, message: str) -> Entry:
        """Keep the entry byte for byte, with the reason beside it."""
        _reason(entry.path, code, message)
        target = self.dir("quarantine") / entry.id
        entry.path.rename(target)
        return Entry(entry.id, target)

    def close_batch(self, batch: Path) -> None:
        """Remove a finished batch directory (only its bookkeeping files remain)."""
        if not self.batch_entries(batch):
            keep = self.root / "batches"
            keep.mkdir(exist_ok=True)
            batch.rename(keep / batch.name)

    def find(self, spool_id: str) -> Entry | None:
        """The entry ``spool_id`` wherever it is now (new, a batch, done, quarantine)."""
        if "/" in spool_id or spool_id.startswith("."):
            return None
        for where in (self.dir("done"), self.dir("new"), self.dir("quarantine"),
                      *self.batches()):
            if (where / spool_id / "meta.json").exists():
                return Entry(spool_id, where / spool_id)
        return None

    def payload_files(self, spool_id: str, limit: int = 64 << 10, most: int = 20
                      ) -> list[tuple[str, str]]:
        """(path in the submission, its first ``limit`` bytes as text) of at most
        ``most`` files handed in as ``spool_id`` (for staff; symbolic links not followed)."""
        entry = self.find(spool_id)
        if entry is None or not entry.payload.is_dir():
            return []
        out = []
        for p in sorted(entry.payload.rglob("*"))[:most]:
            if p.is_file() and not p.is_symlink():
                with p.open("rb") as f:
                    text = f.read(limit).decode("utf-8", "replace")
                out.append((str(p.relative_to(entry.payload)), text))
        return out

    def quarantined(self) -> Iterator[tuple[Entry, dict[str, Any]]]:
        for p in sorted(self.dir("quarantine").iterdir()):
            try:
                reason = json.loads((p / "reason.json").read_text())
            except (OSError, ValueError):
                reason = {"code": "unknown", "message": "reason.json missing"}
            yield Entry(p.name, p), reason
