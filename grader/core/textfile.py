"""A file's first or last bytes as text, for feedback and logs cut to a size: what
students and staff are shown of inputs, outputs and logs, never a whole file."""

from __future__ import annotations

import os
from pathlib import Path


def head(path: Path, limit: int) -> str:
    """The first ``limit`` bytes of a file as text ("" when it is missing)."""
    try:
        with path.open("rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


def tail(path: Path, limit: int) -> str:
    """The last ``limit`` bytes of a file as text ("" when it is missing)."""
    try:
        with path.open("rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - limit))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""
