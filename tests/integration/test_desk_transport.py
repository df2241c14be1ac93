"""The desk's socket (``adapters.desk_socket``): the kernel names the peer, a file arrives
streamed and checked, and bad or greedy clients get an answer or are dropped within
the desk's bounds, never a hung or crashed desk."""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import socket
import threading
import time
from pathlib import Path

import pytest

from grader.adapters import desk_client, desk_socket
from grader.adapters.peercred import Peer
from grader.core.errors import ConfigError, GradelineError, RefusedError
from grader.core.upload import Upload
from grader.course.shown import (
    AssignmentView,
    Link,
    Measuring,
    Receipt,
    StudentView,
    SubmissionView,
)

BOUNDS = desk_socket.Bounds(connections=6, per_account=3, deadline_s=1.0)


@pytest.fixture
def served(tmp_path: Path):
    seen: list[Peer] = []
    release = threading.Event()

    def handler(peer: Peer, req: dict[str, object], body: desk_socket.Body | None
                ) -> dict[str, object]:
        seen.append(peer)
        if req.get("op") == "refuse":
            raise RefusedError("no")
        if req.get("op") == "bug":
            raise KeyError("a bug")
        if req.get("op") == "hold":
            release.wait(10)
        if body is not None:
            return {"echo": req, "sha256": hashlib.sha256(body.path.read_bytes()).hexdigest(),
                    "size": body.size}
        return {"echo": req}

    path = tmp_path / "d" / "desk.sock"
    server = desk_socket.listen(path, handler, BOUNDS)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield path, seen, release, server
    release.set()
    server.shutdown()
    server.server_close()
    t.join(5)  # the acceptor's end belongs to this test, not to whichever runs next


def _raw(path: Path, data: bytes) -> dict[str, object]:
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(str(path))
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        return json.loads(s.makefile().readline())  # type: ignore[no-any-return]


def test_the_handler_is_told_who_connected_by_the_kernel(served) -> None:
    path, seen, _, _ = served
    assert desk_client.ask(path, {"op": "x", "student": "someone-else"}) == \
        {"ok": True, "echo": {"op": "x", "student": "someone-else"}}
    assert (seen[0].uid, seen[0].pid) == (os.geteuid(), os.getpid())
    assert oct(path.stat().st_mode & 0o777) == oct(0o666)


def test_a_file_arrives_whole_and_leaves_nothing_behind(served, tmp_path: Path) -> None:
    path, _, _, _ = served
    f = tmp_path / "sub.py"
    f.write_bytes(os.urandom(300_000))
    r = desk_client.ask(path, {"op": "x"}, f)
    assert (r["size"], r["sha256"]) == (300_000, hashlib.sha256(f.read_bytes()).hexdigest())
    assert list((path.parent / "incoming").iterdir()) == []  # the desk's copy is gone
    assert oct((path.parent / "incoming").stat().st_mode & 0o777) == oct(0o700)


def test_malformed_refused_oversized_and_short_requests_get_a_reason(served) -> None:
    path, _, _, _ = served
    assert _raw(path, b"not json\n")["error"].startswith("malformed request")
    assert "not a JSON object" in _raw(path, b"[1, 2]\n")["error"]
    assert _raw(path, json.dumps({"op": "refuse"}).encode() + b"\n") == \
        {"ok": False, "error": "no"}
    assert "KiB" in _raw(path, b"x" * (desk_client.MAX_HEADER + desk_client.CHUNK))["error"]
    too_big = json.dumps({"op": "x", "size": desk_socket.MAX_BODY + 1}).encode() + b"\n"
    assert "at most 16 MiB" in _raw(path, too_big)["error"]
    short = json.dumps({"op": "x", "size": 10}).encode() + b"\nabc"
    assert "ended after 3 of 10 bytes" in _raw(path, short)["error"]
    assert "failed on its side" in _raw(path, b'{"op": "bug"}\n')["error"]  # no traceback
    assert desk_client.ask(path, {"op": "x"})["ok"] is True  # and it answers the next one


def test_a_trickle_is_cut_at_the_requests_deadline_not_per_read(served) -> None:
    path, _, _, _ = served
    with socket.socket(socket.AF_UNIX) as slow:
        slow.connect(str(path))
        t0 = time.monotonic()
        slow.settimeout(10)
        reply = b""
        try:
            for _ in range(40):  # a byte every 0.1 s: each read is quick, the whole is not
                slow.sendall(b" ")
                time.sleep(0.1)
        except OSError:
            pass
        reply = slow.recv(1000)
        assert b"did not arrive in time" in reply
        assert time.monotonic() - t0 < BOUNDS.deadline_s + 2.5


def test_one_account_gets_at_most_its_share_and_the_rest_a_reason(served) -> None:
    path, _, release, server = served
    held = []
    for _ in range(BOUNDS.per_account):  # requests that stay in the handler
        s = socket.socket(socket.AF_UNIX)
        s.connect(str(path))
        s.sendall(b'{"op": "hold"}\n')
        held.append(s)
    until = time.monotonic() + 5
    while server.in_flight < BOUNDS.per_account and time.monotonic() < until:
        time.sleep(0.01)
    over = desk_client.ask(path, {"op": "x"})
    assert over["ok"] is False and over["busy"] is True and "in progress" in over["error"]
    release.set()
    for s in held:
        s.settimeout(10)
        assert json.loads(s.makefile().readline())["ok"] is True
        s.close()
    until = time.monotonic() + 5
    while server.in_flight and time.monotonic() < until:
        time.sleep(0.01)
    assert desk_client.ask(path, {"op": "x"})["ok"] is True  # its share is free again


def test_a_second_desk_on_the_same_socket_is_refused_and_a_dead_ones_socket_reused(
        served, tmp_path: Path) -> None:
    path, _, _, _ = served
    with pytest.raises(ConfigError, match="already answers"):
        desk_socket.listen(path, lambda p, r, b: {})
    dead = tmp_path / "dead.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(dead))
    s.close()  # the file stays, nobody listens
    desk_socket.listen(dead, lambda p, r, b: {}).server_close()
    with pytest.raises(GradelineError, match="no grading desk answers"):
        desk_client.ask(tmp_path / "none.sock", {})


def test_a_desk_closed_before_its_thread_starts_stops_quietly(tmp_path: Path) -> None:
    """A stop can win the race with the acceptor thread; the thread must end, not raise."""
    server = desk_socket.listen(tmp_path / "early.sock", lambda p, r, b: {})
    server.server_close()
    server.serve_forever()  # returns at once; raised "Invalid file descriptor: -1" before


class Desk:
    """A desk that answers with fixed values and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[object, ...]] = []

    def on_roster(self, student: str) -> None:
        if student == "nobody":
            raise RefusedError("nobody is not on the roster")

    def hand_in(self, student: str, assignment: object, name: object,
                body: Upload | None) -> Receipt:
        assert body is not None
        self.asked.append(("hand-in", student, assignment, name, body.path.read_bytes()))
        return Receipt("s1", "c", str(assignment), student, str(name), "t", body.size,
                       "ab", "d", False, left=2, signature="f" * 64)

    def view(self, student: str, assignment: object = None) -> StudentView:
        self.asked.append(("mine", student, assignment))
        return StudentView(student, "c", "now", (AssignmentView(
            "hw1", "d", None, (SubmissionView("s1", "t", 1.5, True, "graded",
                                              verdict="WA", score=1.0),)),))

    def link(self, student: str) -> Link:
        return Link(f"https://x/me/{student}", "soon")

    def choose(self, student: str, assignment: object, submission: object) -> str:
        if submission == "bad":
            raise RefusedError("bad is no submission of yours")
        return str(submission)

    def measure(self, student: str, assignment: object) -> Measuring:
        if assignment == "hw2":
            raise RefusedError("hw2: you have used 1 of the 1 performance measurements")
        return Measuring("c", str(assignment), student, "s1", "t", 1, 3)


def test_the_desks_requests_and_values_go_through_the_socket_whole(tmp_path: Path) -> None:
    """Each op of the wire (``desk_client``) reaches its call of the desk as the peer the
    kernel names and comes back as the value it gave; a refusal comes back as one."""
    desk, me = Desk(), pwd.getpwuid(os.geteuid()).pw_name
    path = tmp_path / "d" / "desk.sock"
    server = desk_socket.listen(path, desk_socket.answering(desk), BOUNDS)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        f = tmp_path / "sum.py"
        f.write_bytes(b"print(1)\n")
        receipt = desk_client.hand_in(path, "hw1", f)
        assert receipt == desk.hand_in(me, "hw1", "sum.py", Upload(f, 9))
        assert desk.asked[0] == ("hand-in", me, "hw1", "sum.py", b"print(1)\n")
        view = desk_client.mine(path, "hw1")
        assert view == desk.view(me, "hw1") and view.assignments[0].submissions[0].counts
        assert desk_client.link(path) == Link(f"https://x/me/{me}", "soon")
        assert desk_client.choose(path, "hw1", "s7") == "s7"
        assert desk_client.measure(path, "hw1") == desk.measure(me, "hw1")
        with pytest.raises(desk_client.DeskRefusal, match="used 1 of the 1"):
            desk_client.measure(path, "hw2")
        with pytest.raises(desk_client.DeskRefusal, match="no submission of yours"):
            desk_client.choose(path, "hw1", "bad")
        for req, why in (({"op": "mine", "student": "someone-else"}, "answers no request"),
                         ({"op": "steal"}, "no such request 'steal'")):
            reply = desk_client.ask(path, req)
            assert reply["ok"] is False and why in str(reply["error"]), reply
    finally:
        server.shutdown()
        server.server_close()
        t.join(5)
