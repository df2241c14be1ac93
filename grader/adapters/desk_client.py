"""Asking the student desk (``adapters.desk_socket``) over its Unix socket: what ``gradeline
hand-in``/``mine`` and every front end that runs as the student (the Open OnDemand app)
use. The wire: one JSON line (at most ``MAX_HEADER`` bytes), the file's bytes after it
when the line says ``"size"``, one JSON object back. Apart from the server so a front
end needs none of it."""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from grader.core.errors import GradelineError

MAX_HEADER = 64 << 10  # a request's JSON line
CHUNK = 64 << 10


@contextlib.contextmanager
def _connected(path: Path, timeout_s: float) -> Iterator[socket.socket]:
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(timeout_s)
            s.connect(str(path))
            yield s
    except (FileNotFoundError, ConnectionRefusedError):
        raise GradelineError(f"no grading desk answers on {path}: ask your course staff "
                             "whether it runs (or set GRADELINE_DESK_SOCKET)") from None
    except OSError as e:
        raise GradelineError(f"the grading desk on {path}: {e.strerror or e}") from None


def ask(path: Path, request: Mapping[str, Any], file: Path | None = None,
        timeout_s: float = 120.0) -> dict[str, Any]:
    """Send one request (and ``file``'s bytes) to the desk at ``path``; its reply.

    :raises GradelineError: when no desk answers there, or ``file`` cannot be read.
    """
    header = dict(request)
    f = None
    if file is not None:
        try:
            f = file.open("rb")
            header["size"] = os.fstat(f.fileno()).st_size
        except OSError as e:
            raise GradelineError(f"{file}: {e.strerror}") from None
    try:
        with _connected(path, timeout_s) as s:
            # a desk that refuses at once answers before it reads: its reply is waiting
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                s.sendall(json.dumps(header).encode() + b"\n")
                if f is not None:
                    s.sendfile(f)
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_WR)
            raw = b""
            with contextlib.suppress(ConnectionResetError):  # refused before the file's end
                while chunk := s.recv(CHUNK):
                    raw += chunk
    finally:
        if f is not None:
            f.close()
    try:
        reply = json.loads(raw)
    except ValueError:
        raise GradelineError(f"the grading desk on {path} gave no answer") from None
    if not isinstance(reply, dict):
        raise GradelineError(f"the grading desk on {path} gave no answer")
    return reply
