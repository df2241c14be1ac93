"""The course's staff pages, asked for over their Unix socket as this process's user
(and a grading form passed on to them):
``gradeline web`` answers the course's staff and refuses anyone else (it asks the
kernel who connected), so the app passes on what it is given, nothing more."""

from __future__ import annotations

import http.client
import socket
from pathlib import Path


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: Path, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(self.timeout)
        s.connect(str(self.unix_path))
        self.sock = s


def staff_get(sock: Path, path: str, timeout: float = 30.0) -> tuple[int, str, str]:
    """(status, content type, body) of GET ``path`` on the staff socket; 503 with the
    reason when nothing answers there."""
    status, ctype, body, _ = staff_request(sock, "GET", path, timeout=timeout)
    return status, ctype, body


def staff_request(sock: Path, method: str, path: str, body: bytes | None = None,
                  ctype: str = "", timeout: float = 30.0) -> tuple[int, str, str, str]:
    """(status, content type, body, Location) of a request on the staff socket (a
    grading form's POST: ``body`` of type ``ctype``); 503 with the reason when nothing
    answers there."""
    conn = _UnixConnection(sock, timeout)
    try:
        conn.request(method, path or "/", body=body,
                     headers={"Content-Type": ctype} if body is not None else {})
        r = conn.getresponse()
        return (r.status, r.getheader("Content-Type", ""), r.read().decode(errors="replace"),
                r.getheader("Location", ""))
    except OSError as e:
        return 503, "text/plain", f"the staff pages do not answer ({e.strerror or e})", ""
    finally:
        conn.close()
