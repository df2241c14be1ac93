"""Intake checks: turn a spool entry into a gradable source directory, or a reason
to quarantine it. Archives are unpacked by our own code after every member was
checked (never tarfile.extractall), with limits on total size, ratio and count.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import shutil
import stat
import tarfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Any

from grader.adapters.spool import Entry
from grader.core.errors import GradelineError
from grader.core.jobs import GradingJob
from grader.core.languages import Language, detect_language
from grader.core.spoolmeta import MetaError, SpoolMeta
from grader.core.submission import Submission, load_submission
from grader.formats.problem import Problem
from grader.pipeline.dedupe import Candidate

MAX_PAYLOAD_BYTES = 16 * 1024 * 1024  # what arrives (archive or files)
MAX_UNPACKED_BYTES = 8 * 1024 * 1024  # what it unpacks to
MAX_FILES = 64
MAX_RATIO = 100  # unpacked / packed
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")


class Reason(StrEnum):
    """Why an entry was quarantined (stable codes; messages say the details)."""

    MALFORMED_METADATA = "malformed-metadata"
    UNKNOWN_ASSIGNMENT = "unknown-assignment"
    EMPTY = "empty"
    TOO_LARGE = "too-large"
    ABSOLUTE_PATH = "absolute-path"
    PARENT_PATH = "parent-path"
    SYMLINK = "symlink"
    HARDLINK = "hardlink"
    DEVICE = "device"
    DECOMPRESSION_BOMB = "decompression-bomb"
    BAD_FILE_NAME = "bad-file-name"
    UNSUPPORTED_LANGUAGE = "unsupported-language"
    CORRUPT_ARCHIVE = "corrupt-archive"
    #: an LMS download's hand-in that maps to no roster student (``gradeline import``)
    UNMAPPED_STUDENT = "unmapped-student"
    #: an LMS download's member named as no hand-in of that LMS is
    UNRECOGNISED_ENTRY = "unrecognised-entry"
    #: a hand-in a door refused (``course.handin``: the roster, a hand-in limit, the late
    #: cutoff), or a drop that is no hand-in: kept, with the reason, for staff
    REFUSED = "refused"


class Rejected(GradelineError):
    """An entry that cannot be graded; it goes to quarantine with this reason."""

    def __init__(self, code: Reason, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class Prepared:
    """An entry ready to grade."""

    entry: Entry
    meta: SpoolMeta
    problem: Problem
    submission: Submission
    language: Language | None  # None: an autograder that takes any files got none it knows

    @property
    def language_id(self) -> str | None:
        return self.language.id if self.language is not None else None

    @property
    def candidate(self) -> Candidate:
        """This entry as something to grade (its key is the spool id); a problem
        restricted to some groups (a course's visible phase) grades only those, one of
        its performance tests only (an on-demand measurement) only them."""
        groups = tuple(g.name for g in self.problem.groups) \
            if self.problem.phase == "part" else None
        return Candidate(self.entry.id, GradingJob(
            self.problem.path, self.entry.src, self.language_id, groups=groups,
            student=self.meta.student, submitted_at=self.meta.submitted_at,
            performance_only=self.problem.phase == "performance", team=self.meta.team),
            self.problem, self.submission.content_hash)


def parse_meta(entry: Entry) -> SpoolMeta:
    """The entry's meta.json; :raises Rejected: MALFORMED_METADATA with the reason."""
    try:
        return entry.meta()
    except MetaError as e:
        raise Rejected(Reason.MALFORMED_METADATA, str(e)) from e


def _check_name(name: str) -> None:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError as e:
        raise Rejected(Reason.BAD_FILE_NAME, f"file name is not valid UTF-8: "
                                             f"{name.encode('utf-8', 'surrogateescape')!r}") from e
    p = PurePosixPath(name)
    if p.is_absolute() or name.startswith("\\") or (len(name) > 1 and name[1] == ":"):
        raise Rejected(Reason.ABSOLUTE_PATH, f"absolute path in archive: {name!r}")
    if ".." in p.parts or ".." in name.split("\\"):
        raise Rejected(Reason.PARENT_PATH, f"'..' in path: {name!r}")


def _check_tree(root: Path) -> tuple[int, int]:
    """Walk a plain payload (lstat only): names, links, devices, size, count."""
    total = files = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            _check_name(str(full.relative_to(root)))
            st = full.lstat()
            if stat.S_ISLNK(st.st_mode):
                raise Rejected(Reason.SYMLINK, f"symlink: {full.relative_to(root)}")
            if stat.S_ISDIR(st.st_mode):
                continue
            if not stat.S_ISREG(st.st_mode):
                raise Rejected(Reason.DEVICE, f"special file: {full.relative_to(root)}")
            if st.st_nlink > 1:
                raise Rejected(Reason.HARDLINK, f"hard link: {full.relative_to(root)}")
            total += st.st_size
            files += 1
    return total, files


def _limits(total: int, count: int, packed: int) -> None:
    if count > MAX_FILES:
        raise Rejected(Reason.DECOMPRESSION_BOMB, f"{count} files (at most {MAX_FILES})")
    if total > MAX_UNPACKED_BYTES:
        raise Rejected(Reason.DECOMPRESSION_BOMB, f"unpacks to {total} bytes "
                                                  f"(at most {MAX_UNPACKED_BYTES})")
    if packed > 0 and total > 4096 and total / packed > MAX_RATIO:
        raise Rejected(Reason.DECOMPRESSION_BOMB, f"compression ratio {total / packed:.0f} "
                                                  f"(at most {MAX_RATIO})")


def _write(dest: Path, name: str, data: bytes) -> None:
    target = dest / name
    if dest.resolve() not in target.resolve().parents:
        raise Rejected(Reason.PARENT_PATH, f"{name!r} escapes the destination")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def _unzip(archive: Path, dest: Path) -> None:
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as e:
        raise Rejected(Reason.CORRUPT_ARCHIVE, f"not a readable zip: {e}") from e
    with zf:
        infos = zf.infolist()
        for i in infos:
            raw = i.filename.encode("utf-8") if i.flag_bits & 0x800 \
                else i.filename.encode("cp437")
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise Rejected(Reason.BAD_FILE_NAME, f"zip member name is not valid UTF-8: "
                                                     f"{raw!r}") from e
            _check_name(i.filename)
            mode = (i.external_attr >> 16) & 0o170000
            if mode == stat.S_IFLNK:
                raise Rejected(Reason.SYMLINK, f"symlink in zip: {i.filename}")
            if mode and mode not in (stat.S_IFREG, stat.S_IFDIR):
                raise Rejected(Reason.DEVICE, f"special file in zip: {i.filename}")
        members = [i for i in infos if not i.is_dir()]
        _limits(sum(i.file_size for i in members), len(members), archive.stat().st_size)
        budget = MAX_UNPACKED_BYTES
        for i in members:
            try:
                with zf.open(i) as f:
                    data = f.read(min(i.file_size, budget) + 1)  # headers can lie
            except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as e:
                raise Rejected(Reason.CORRUPT_ARCHIVE, f"{i.filename}: {e}") from e
            if len(data) > i.file_size or len(data) > budget:
                raise Rejected(Reason.DECOMPRESSION_BOMB, f"{i.filename} is larger than its "
                                                          "header says")
            budget -= len(data)
            _write(dest, i.filename, data)


def _decompressed(archive: Path) -> bytes:
    """The tar stream, decompressed with a cap (a bomb stops at the cap, not at OOM)."""
    name = archive.name.lower()
    opener: Any
    if name.endswith((".gz", ".tgz")):
        opener = gzip.open
    elif name.endswith((".bz2", ".tbz2")):
        opener = bz2.open
    elif name.endswith((".xz", ".txz")):
        opener = lzma.open
    else:
        opener = open
    cap = MAX_UNPACKED_BYTES + 1024 * 1024  # tar headers and padding on top of the data
    try:
        with opener(archive, "rb") as f:
            data: bytes = f.read(cap + 1)
    except (OSError, EOFError, lzma.LZMAError) as e:
        raise Rejected(Reason.CORRUPT_ARCHIVE, f"cannot decompress: {e}") from e
    if len(data) > cap:
        raise Rejected(Reason.DECOMPRESSION_BOMB, f"decompresses to more than {cap} bytes")
    return data


def _untar(archive: Path, dest: Path) -> None:
    data = _decompressed(archive)
    try:
        tf = tarfile.open(fileobj=io.BytesIO(data), mode="r:")  # noqa: SIM115 -- closed below
    except (tarfile.TarError, OSError) as e:
        raise Rejected(Reason.CORRUPT_ARCHIVE, f"not a readable tar: {e}") from e
    with tf:
        try:
            members = tf.getmembers()
        except (tarfile.TarError, OSError) as e:
            raise Rejected(Reason.CORRUPT_ARCHIVE, f"not a readable tar: {e}") from e
        for m in members:
            _check_name(m.name)
            if m.issym():
                raise Rejected(Reason.SYMLINK, f"symlink in tar: {m.name} -> {m.linkname}")
            if m.islnk():
                raise Rejected(Reason.HARDLINK, f"hard link in tar: {m.name} -> {m.linkname}")
            if m.isdev() or m.isfifo() or not (m.isreg() or m.isdir()):
                raise Rejected(Reason.DEVICE, f"special file in tar: {m.name}")
        files = [m for m in members if m.isreg()]
        _limits(sum(m.size for m in files), len(files), archive.stat().st_size)
        for m in files:
            f = tf.extractfile(m)
            if f is None:
                raise Rejected(Reason.CORRUPT_ARCHIVE, f"cannot read {m.name}")
            _write(dest, m.name, f.read())


def unpack(entry: Entry, dest: Path) -> None:
    """Check the payload and lay its source files out in ``dest``."""
    if not entry.payload.is_dir():
        raise Rejected(Reason.EMPTY, "entry has no payload/")
    items = list(entry.payload.iterdir())
    if not items:
        raise Rejected(Reason.EMPTY, "payload is empty")
    total, count = _check_tree(entry.payload)
    if total > MAX_PAYLOAD_BYTES:
        raise Rejected(Reason.TOO_LARGE, f"{total} bytes (at most {MAX_PAYLOAD_BYTES})")
    if count == 0 or total == 0:
        raise Rejected(Reason.EMPTY, "no file with content")
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    if len(items) == 1 and items[0].is_file() and items[0].name.lower().endswith(
            ARCHIVE_SUFFIXES):
        if items[0].name.lower().endswith(".zip"):
            _unzip(items[0], dest)
        else:
            _untar(items[0], dest)
        t, n = _check_tree(dest)
        if n == 0 or t == 0:
            raise Rejected(Reason.EMPTY, "archive holds no file with content")
        return
    _limits(total, count, 0)
    src = items[0] if len(items) == 1 and items[0].is_dir() else entry.payload
    for p in src.rglob("*"):
        if p.is_file():
            _write(dest, str(p.relative_to(src)), p.read_bytes())


def prepare(entry: Entry, problems: Mapping[str, Problem]) -> Prepared:
    """Validate and unpack one entry.

    :raises Rejected: with the reason to quarantine it.
    """
    meta = parse_meta(entry)
    problem = problems.get(meta.assignment)
    if problem is None:
        raise Rejected(Reason.UNKNOWN_ASSIGNMENT, f"no assignment {meta.assignment!r} "
                                                  f"(known: {', '.join(sorted(problems))})")
    if not entry.unpacked:  # unpack once: see Entry.unpacked
        unpack(entry, entry.src)
        entry.mark_unpacked()
    try:
        sub = load_submission(entry.src)
    except GradelineError as e:
        raise Rejected(Reason.EMPTY, str(e)) from e
    lang: Language | None = None
    try:
        lang = detect_language(sub.files, problem.languages)
    except GradelineError as e:  # an autograder may take any files (a notebook, data)
        if not problem.graded_by_autograder or problem.languages is not None:
            raise Rejected(Reason.UNSUPPORTED_LANGUAGE, str(e)) from e
    return Prepared(entry, meta, problem, sub, lang)
