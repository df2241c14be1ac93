"""A submission as files on disk: collection, safety checks and content hash."""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from grader.core.errors import SubmissionError

MAX_FILES = 64
MAX_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Submission:
    """Source files of one submission (relative names, no hidden files)."""

    path: Path
    files: tuple[str, ...]
    content_hash: str

    def size_bytes(self) -> int:
        """The source's size (the spec's code limit counts it)."""
        base = self.path if self.path.is_dir() else self.path.parent
        total = 0
        for rel in self.files:
            with contextlib.suppress(OSError):
                total += (base / rel).stat().st_size
        return total

    def copy_to(self, dest: Path) -> None:
        base = self.path if self.path.is_dir() else self.path.parent
        for rel in self.files:
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(base / rel, target)
            target.chmod(0o644)


def load_submission(path: str | Path) -> Submission:
    """Collect a submission (a file, or a directory of files).

    :raises SubmissionError: on symlinks, special files, too many or too large
        files, or no files at all.
    """
    p = Path(path)
    if p.is_symlink():
        raise SubmissionError(f"{p}: submission is a symlink")
    names: list[str] = []
    if p.is_file():
        base = p.parent
        names.append(p.name)
    elif p.is_dir():
        base = p
        for f in sorted(p.rglob("*")):
            rel = f.relative_to(p)
            if any(part.startswith(".") for part in rel.parts):
                continue
            mode = f.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise SubmissionError(f"{f}: symlinks are not allowed in submissions")
            if stat.S_ISDIR(mode):
                continue
            if not stat.S_ISREG(mode):
                raise SubmissionError(f"{f}: not a regular file")
            names.append(str(rel))
    else:
        raise SubmissionError(f"{p}: no such file or directory")
    if not names:
        raise SubmissionError(f"{p}: submission has no files")
    if len(names) > MAX_FILES:
        raise SubmissionError(f"{p}: {len(names)} files (at most {MAX_FILES})")
    h = hashlib.sha256()
    total = 0
    for name in names:
        data = (base / name).read_bytes()
        total += len(data)
        if total > MAX_BYTES:
            raise SubmissionError(f"{p}: larger than {MAX_BYTES} bytes")
        h.update(name.encode("utf-8", "surrogateescape") + b"\0")
        h.update(hashlib.sha256(data).digest())
    return Submission(p, tuple(names), h.hexdigest())
