"""A drop directory: how students on a shared machine hand in work without being
able to read, list or replace anyone else's (SECURITY.md, "students -> spool").

The grading account owns the directory; mode 1733 (sticky, others may create and
enter but not list), or 3713 with ``--group``: setgid to a staff group the
students are not in, so every dropped file belongs to that group and, at 0640, is
readable by staff but by no other student even with its name. A dropped file is
``<assignment>--<random>--<name>``: the random part makes names unguessable.

Collecting takes the student from the file's owner (a student cannot create a file
owned by someone else), the time from its ctime (which, unlike mtime, no user can
set back), and refuses anything but a private regular file with one link.
"""

from __future__ import annotations

import os
import pwd
import re
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from grader.core.errors import ConfigError, SubmissionError
from grader.core.upload import MAX_UPLOAD_BYTES

MAX_BYTES = MAX_UPLOAD_BYTES  # larger drops are refused
NAME = re.compile(r"^(?P<assignment>[A-Za-z0-9_.-]+?)--[0-9a-f]{32}--(?P<name>[^/]{1,200})$")


def create(path: Path, group: str | None = None) -> int:
    """Make ``path`` a drop directory; return its mode."""
    path.mkdir(parents=True, exist_ok=True)
    mode = 0o1733
    if group is not None:
        shutil.chown(path, group=group)
        mode = 0o3713
    path.chmod(mode)
    return mode


def drop(box: Path, assignment: str, source: Path) -> Path:
    """As a student: put ``source`` into ``box`` under an unguessable name."""
    st = box.stat()
    mode = 0o640 if st.st_mode & stat.S_ISGID else 0o644
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", assignment):
        raise SubmissionError(f"assignment {assignment!r}: use letters, digits, . _ -")
    if source.stat().st_size > MAX_BYTES:  # before reading it all into memory
        raise SubmissionError(f"{source} is larger than {MAX_BYTES >> 20} MiB")
    data = source.read_bytes()
    target = box / f"{assignment}--{secrets.token_hex(16)}--{source.name}"
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as f:
        os.fchmod(f.fileno(), mode)  # whatever the umask
        f.write(data)
    return target


@dataclass(frozen=True, slots=True)
class Dropped:
    """One collected drop, copied out of the box into ``path``."""

    student: str
    assignment: str
    path: Path
    submitted_at: str
    drop: Path  # remove it once submitted (a crash before that submits it again)


@dataclass(frozen=True, slots=True)
class Refused:
    """A drop that is no hand-in, and why. Its content is copied to ``path`` (None: it
    has none to keep: a link, a device, a pipe) for staff to see in quarantine; the
    caller keeps that copy, then removes ``drop`` (None: left in the box, as a
    directory only its owner can empty)."""

    name: str
    reason: str
    drop: Path | None
    path: Path | None = None
    student: str = ""  # the drop's owner, where one is known
    assignment: str = ""  # as its name says, where it says one
    submitted_at: str = ""


def collect(box: Path, staging: Path) -> Iterator[Dropped | Refused]:
    """Take every drop out of ``box`` (the grading account's): each regular, private
    file becomes a Dropped copy in ``staging``, anything else a Refused one with the
    reason. The caller spools either, then removes its ``drop``: nothing is lost in a
    crash, and nothing a student dropped is deleted unkept."""
    st = box.stat()
    if st.st_uid != os.geteuid():
        raise ConfigError(f"{box} is not this account's drop directory (owner uid "
                          f"{st.st_uid}): create it with 'gradeline dropbox init'")
    for entry in sorted(os.scandir(box), key=lambda e: e.name):
        yield _take(box / entry.name, staging)


def _owner(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid{uid}"


def _take(path: Path, staging: Path) -> Dropped | Refused:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as e:  # a symbolic link (ELOOP), or gone
        return Refused(path.name, f"not a regular file ({e.strerror})",
                       path if path.is_symlink() else None)
    try:
        st = os.fstat(fd)
        m = NAME.match(path.name)
        when = datetime.fromtimestamp(st.st_ctime, UTC).isoformat(timespec="seconds")
        student = _owner(st.st_uid) if st.st_uid != os.geteuid() else ""
        assignment = m.group("assignment") if m else ""
        why = _refusal(path.name, st)
        if why and not stat.S_ISREG(st.st_mode):
            return Refused(path.name, why, None if stat.S_ISDIR(st.st_mode) else path,
                           None, student, assignment, when)
        out = Path(tempfile.mkdtemp(dir=staging)) / (m.group("name") if m else "drop")
        with os.fdopen(os.dup(fd), "rb") as src, out.open("xb") as dst:
            shutil.copyfileobj(src, dst)
        if why:
            return Refused(path.name, why, path, out, student, assignment, when)
        assert m is not None  # _refusal checked the name
        return Dropped(student, assignment, out, when, path)
    finally:
        os.close(fd)


def _refusal(name: str, st: os.stat_result) -> str:
    if stat.S_ISDIR(st.st_mode):
        return "a directory (left in the drop directory: only its owner can empty it)"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_nlink != 1:
        return "a hard link (another name of the same file)"
    if st.st_mode & 0o002:
        return "writable by every account"
    if st.st_size > MAX_BYTES:
        return f"larger than {MAX_BYTES >> 20} MiB"
    if st.st_uid == os.geteuid():
        return "owned by the grading account itself (no student to credit)"
    if not NAME.match(name):
        return "not named ASSIGNMENT--<32 hex>--NAME (use 'gradeline drop')"
    return ""
