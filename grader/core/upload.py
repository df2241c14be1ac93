"""A file a front end received for a student (the desk's socket, a browser's upload):
where it lies, in a place of the receiver's own, and how large it is."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MAX_UPLOAD_BYTES = 16 << 20  # a hand-in: a source file or a small archive


@dataclass(frozen=True, slots=True)
class Upload:
    """A received file (gone once its request is answered) and its size in bytes."""

    path: Path
    size: int
