"""Compile cache: a successful compile's outputs, reused for sources that differ only
in comments (a course is mostly per-student copies of a few solutions).

The key is the image, the language, the compile argv and every source file's name
and *normalised* text: C/C++ comments are blanked, their newlines kept (so __LINE__
is unchanged). Whatever the small lexer here cannot be sure about -- line splices
(a backslash-newline can extend a // comment), raw strings, __DATE__/__TIME__ --
falls back to the exact text. Only the judge writes the cache (root-owned, outside
every sandbox); a hit copies the outputs into the build dir instead of compiling.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

C_FAMILY = {"c", "cpp"}
_UNSAFE = (b"\\\n", b"\\\r\n", b'R"', b"__DATE__", b"__TIME__", b"__TIMESTAMP__", b"??/")


def normalise_c(src: bytes) -> bytes | None:
    """C/C++ source with comments blanked (newlines kept); None when unsure."""
    if any(u in src for u in _UNSAFE):
        return None
    out = bytearray()
    i, n = 0, len(src)
    while i < n:
        c = src[i:i + 1]
        two = src[i:i + 2]
        if two == b"//":
            j = src.find(b"\n", i)
            j = n if j < 0 else j
            out += b" "
            i = j
        elif two == b"/*":
            j = src.find(b"*/", i + 2)
            if j < 0:
                return None  # unterminated: let the compiler say so
            out += b" " + b"\n" * src.count(b"\n", i, j)
            i = j + 2
        elif c in (b'"', b"'"):
            j = i + 1
            while j < n and src[j:j + 1] != c:
                if src[j:j + 1] == b"\n":
                    return None  # unterminated literal
                j += 2 if src[j:j + 1] == b"\\" else 1
            out += src[i:j + 1]
            i = j + 1
        else:
            out += c
            i += 1
    return bytes(out)


def cache_key(image: str, language: str, argv: Sequence[str], build: Path,
              files: Sequence[str]) -> str:
    """The key of one compile (see the module docstring)."""
    h = hashlib.sha256(json.dumps([image, language, list(argv)]).encode())
    for name in sorted(files):
        data = (build / name).read_bytes()
        norm = normalise_c(data) if language in C_FAMILY else None
        h.update(name.encode("utf-8", "surrogateescape") + b"\0")
        h.update(b"N" + norm if norm is not None else b"X" + data)
        h.update(b"\0")
    return h.hexdigest()


class CompileCache:
    """Outputs of successful compiles under ``root/<key>/``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def fetch(self, key: str, build: Path) -> bool:
        """Copy a cached compile's outputs into ``build``; False on a miss."""
        entry = self.root / key
        if not (entry / ".complete").exists():
            return False
        for p in entry.iterdir():
            if p.name != ".complete":
                shutil.copy2(p, build / p.name)
        return True

    def store(self, key: str, build: Path, sources: Sequence[str]) -> None:
        """Keep what the compile added to ``build`` (top-level regular files only)."""
        outputs = [p for p in build.iterdir()
                   if p.is_file() and not p.is_symlink() and p.name not in sources]
        if not outputs or any(p.stat().st_size > 64 * 1024 * 1024 for p in outputs):
            return
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=self.root, prefix=".tmp-"))
        try:
            for p in outputs:
                shutil.copy2(p, tmp / p.name)
                if os.geteuid() == 0:  # the sandbox uid made it; the cache is the judge's
                    os.chown(tmp / p.name, 0, 0)
            (tmp / ".complete").touch()
            tmp.rename(self.root / key)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)  # another worker stored it first
