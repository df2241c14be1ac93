"""The desk's socket (``adapters.desk``): the kernel names the peer, and bad clients get
an answer or are dropped, never a hung or crashed desk."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from grader.adapters import desk
from grader.core.errors import ConfigError, GradelineError, RefusedError


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(desk, "MAX_REQUEST", 1 << 16)
    monkeypatch.setattr(desk, "TIMEOUT_S", 1.0)
    seen: list[desk.Peer] = []

    def handler(peer: desk.Peer, req: dict[str, object]) -> dict[str, object]:
        seen.append(peer)
        if req.get("op") == "refuse":
            raise RefusedError("no")
        if req.get("op") == "bug":
            raise KeyError("a bug")
        return {"echo": req}

    path = tmp_path / "d" / "desk.sock"
    server = desk.listen(path, handler)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield path, seen
    server.shutdown()
    server.server_close()


def _raw(path: Path, data: bytes) -> dict[str, object]:
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(str(path))
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        return json.loads(s.makefile().readline())  # type: ignore[no-any-return]


def test_the_handler_is_told_who_connected_by_the_kernel(served) -> None:
    path, seen = served
    assert desk.ask(path, {"op": "x", "student": "someone-else"}) == \
        {"ok": True, "echo": {"op": "x", "student": "someone-else"}}
    assert (seen[0].uid, seen[0].pid) == (os.geteuid(), os.getpid())
    assert oct(path.stat().st_mode & 0o777) == oct(0o666)


def test_malformed_refused_and_oversized_requests_get_a_reason(served) -> None:
    path, _ = served
    assert _raw(path, b"not json\n")["error"].startswith("malformed request")
    assert "not a JSON object" in _raw(path, b"[1, 2]\n")["error"]
    assert _raw(path, json.dumps({"op": "refuse"}).encode() + b"\n") == \
        {"ok": False, "error": "no"}
    assert "over" in _raw(path, b"x" * (1 << 17))["error"]
    assert "failed on its side" in _raw(path, b'{"op": "bug"}\n')["error"]  # no traceback
    assert desk.ask(path, {"op": "x"})["ok"] is True  # and it answers the next one


def test_a_stalled_client_is_dropped_and_the_desk_keeps_answering(served) -> None:
    path, _ = served
    with socket.socket(socket.AF_UNIX) as stalled:
        stalled.connect(str(path))
        stalled.sendall(b'{"op": ')  # and never more
        t0 = time.monotonic()
        assert desk.ask(path, {"op": "x"})["ok"] is True  # others are served meanwhile
        stalled.settimeout(10)
        assert stalled.recv(100) == b""  # dropped after TIMEOUT_S, no answer
        assert time.monotonic() - t0 < 8


def test_a_second_desk_on_the_same_socket_is_refused_and_a_dead_ones_socket_reused(
        served, tmp_path: Path) -> None:
    path, _ = served
    with pytest.raises(ConfigError, match="already answers"):
        desk.listen(path, lambda p, r: {})
    dead = tmp_path / "dead.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(dead))
    s.close()  # the file stays, nobody listens
    desk.listen(dead, lambda p, r: {}).server_close()
    with pytest.raises(GradelineError, match="no grading desk answers"):
        desk.ask(tmp_path / "none.sock", {})
