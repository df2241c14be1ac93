"""The student desk's transport: a Unix socket whose peer the kernel names.

Why a Unix socket on the login node rather than a web form: every student already
has an account there, and ``SO_PEERCRED`` gives the uid of the process at the other
end, which no request can forge -- no passwords, no tokens to steal, no sign-on to
integrate. The service runs as the grading account; the socket is world-connectable,
and the handler is told who connected, never who the request says it is.

One request per connection: a JSON object on one line (at most ``MAX_REQUEST``
bytes), one JSON object back.
"""

from __future__ import annotations

import json
import logging
import os
import pwd
import socket
import socketserver
import stat
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.core.errors import ConfigError, GradelineError

log = logging.getLogger(__name__)
MAX_REQUEST = 24 << 20  # a 16 MiB hand-in, base64-encoded, and its fields
TIMEOUT_S = 30.0  # a client that stops sending mid-request is dropped


@dataclass(frozen=True, slots=True)
class Peer:
    """Who is at the other end, as the kernel says."""

    pid: int
    uid: int
    gid: int
    user: str  # the uid's name (``uid<N>`` when it has none)


Handler = Callable[[Peer, Mapping[str, Any]], Mapping[str, Any]]


def peer_of(sock: socket.socket) -> Peer:
    """The credentials of the process that connected (``SO_PEERCRED``)."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, gid = struct.unpack("3i", raw)
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = f"uid{uid}"
    return Peer(pid, uid, gid, user)


def _read_line(sock: socket.socket) -> bytes:
    chunks, size = [], 0
    while True:
        chunk = sock.recv(1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n"):
            break
        if size > MAX_REQUEST:
            raise ValueError(f"a request over {MAX_REQUEST >> 20} MiB")
    return b"".join(chunks)


class _Conn(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(TIMEOUT_S)
        try:
            peer = peer_of(sock)
            try:
                request = json.loads(_read_line(sock))
                if not isinstance(request, dict):
                    raise ValueError("not a JSON object")
            except (ValueError, UnicodeDecodeError) as e:
                reply: Mapping[str, Any] = {"ok": False, "error": f"malformed request: {e}"}
            else:
                try:
                    reply = {"ok": True, **self.server.handler(peer, request)}
                except GradelineError as e:
                    reply = {"ok": False, "error": str(e)}
                except Exception:  # a bug or an outside system's failure: logged for
                    log.exception("desk: request from %s failed", peer.user)  # staff
                    reply = {"ok": False, "error": "the desk failed on its side; your "
                                                   "course staff can see why in its log"}
            sock.sendall(json.dumps(reply).encode() + b"\n")
        except OSError:
            pass  # the client went away or stalled: nothing to answer


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str, handler: Handler) -> None:
        self.handler = handler
        super().__init__(path, _Conn)


def listen(path: Path, handler: Handler) -> socketserver.BaseServer:
    """Bind ``path`` (world-connectable; its directory world-searchable) and return the
    server; ``serve_forever()`` it, ``shutdown()`` it from another thread.

    :raises ConfigError: when another desk already answers there.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    path.parent.chmod(path.parent.stat().st_mode | 0o111)
    if path.exists() or path.is_symlink():
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise ConfigError(f"{path} exists and is not a socket")
        try:
            with socket.socket(socket.AF_UNIX) as probe:
                probe.connect(str(path))
            raise ConfigError(f"another desk already answers on {path}")
        except ConnectionRefusedError:
            path.unlink()  # left by a desk that died
    old = os.umask(0o111)
    try:
        server = _Server(str(path), handler)
    finally:
        os.umask(old)
    path.chmod(0o666)
    return server


def ask(path: Path, request: Mapping[str, Any], timeout_s: float = 120.0) -> dict[str, Any]:
    """Send one request to the desk at ``path``; its reply.

    :raises GradelineError: when no desk answers there.
    """
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(timeout_s)
            s.connect(str(path))
            s.sendall(json.dumps(request).encode() + b"\n")
            s.shutdown(socket.SHUT_WR)
            raw = _read_line(s)
    except (FileNotFoundError, ConnectionRefusedError):
        raise GradelineError(f"no grading desk answers on {path}: ask your course staff "
                             "whether it runs (or set GRADELINE_DESK_SOCKET)") from None
    except OSError as e:
        raise GradelineError(f"the grading desk on {path}: {e.strerror or e}") from None
    try:
        reply = json.loads(raw)
    except ValueError:
        raise GradelineError(f"the grading desk on {path} gave no answer") from None
    if not isinstance(reply, dict):
        raise GradelineError(f"the grading desk on {path} gave no answer")
    return reply
