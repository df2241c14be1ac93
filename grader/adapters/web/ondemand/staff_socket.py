"""The course's staff pages, asked for over their Unix socket as this process's user:
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


def staff_get(sock: Path, path: str, timeout: float = 30.0, *, form: bytes | None = None
              ) -> tuple[int, str, str]:
    """(status, content type, body) of GET ``path`` on the staff socket (or a POST of an
    urlencoded ``form``: staff's answer on a page); 503 with the reason when nothing
    answers there."""
    conn = _UnixConnection(sock, timeout)
    try:
        if form is None:
            conn.request("GET", path or "/")
        else:
            conn.request("POST", path, body=form,
                         headers={"Content-Type": "application/x-www-form-urlencoded"})
        r = conn.getresponse()
        return r.status, r.getheader("Content-Type", ""), r.read().decode(errors="replace")
    except OSError as e:
        return 503, "text/plain", f"the staff pages do not answer ({e.strerror or e})"
    finally:
        conn.close()
