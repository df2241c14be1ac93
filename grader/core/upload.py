"""A file a front end received for a student (the desk's socket, a browser's upload):
where it lies, in a place of the receiver's own, and how large it is."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MAX_UPLOAD_BYTES = 16 << 20  # a hand-in: a source file or a small archive
FORM_SLACK = 64 << 10  # a browser's hand-in form: the multipart envelope, other fields


def form_length_refusal(content_length: str | None) -> str | None:
    """Why a browser's hand-in form is refused by the size it announces, before a byte
    of it is read (None: it may be read). A form that says no size is refused too."""
    length = content_length or ""
    if length.isdecimal() and int(length) <= MAX_UPLOAD_BYTES + FORM_SLACK:
        return None
    return f"a hand-in is at most {MAX_UPLOAD_BYTES >> 20} MiB (and says its size)"


@dataclass(frozen=True, slots=True)
class Upload:
    """A received file (gone once its request is answered) and its size in bytes."""

    path: Path
    size: int
