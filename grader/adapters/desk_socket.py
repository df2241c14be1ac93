"""The student desk's transport: a Unix socket whose peer the kernel names, bounded so
that no account can exhaust the login node it runs on.

Why a Unix socket on the login node rather than a web form: every student already
has an account there, and ``SO_PEERCRED`` gives the uid of the process at the other
end, which no request can forge -- no passwords, no tokens to steal, no sign-on to
integrate. The service runs as the grading account; the socket is world-connectable,
and the handler is told who connected, never who the request says it is.

One request per connection: a JSON object on one line (at most ``MAX_HEADER`` bytes);
when it says ``"size": N``, N bytes of a file follow (at most ``MAX_BODY``). One JSON
object comes back (the wire: ``desk_client``; ``answering`` maps its ops to the desk's
calls and their values to the reply). What every account shares is bounded
(``Bounds``): connections in all and per account (over them a request is refused at
once, with the reason), the whole request's time (a deadline, not a time-out per read:
a trickle is dropped), and memory (a file is streamed to a temporary file of the
desk's, never held).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import selectors
import socket
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from grader.adapters.desk_client import (
    ASK,
    CHOOSE,
    CHUNK,
    HAND_IN,
    LINK,
    MAX_HEADER,
    MEASURE,
    MINE,
    OPS,
    REPLY,
    TEAM,
)
from grader.adapters.peercred import Peer, bind_for_everyone, peer_of
from grader.core.errors import GradelineError, RefusedError
from grader.core.upload import MAX_UPLOAD_BYTES, Upload
from grader.course.shown import Link, Measuring, Receipt, RequestView, StudentView, TeamView

log = logging.getLogger(__name__)
MAX_BODY = MAX_UPLOAD_BYTES


@dataclass(frozen=True, slots=True)
class Bounds:
    """What the desk lets any one account, and everyone together, hold at once.

    :param connections: requests being read or answered at once, in all (each a thread).
    :param per_account: of those, from one account.
    :param deadline_s: a request must have arrived whole this long after it connected.
    """

    connections: int = 64
    per_account: int = 4
    deadline_s: float = 30.0


#: a request's file, as received: a temporary file of the desk's, gone after the request
Body = Upload


#: (who asked, the request, its file or None) -> the reply's fields
Handler = Callable[[Peer, Mapping[str, object], Body | None], Mapping[str, object]]


class Desk(Protocol):
    """What the desk does for a student (``views.student_desk.Desk``), typed; the
    socket's requests name it by ``op`` (``desk_client.OPS``)."""

    def on_roster(self, student: str) -> None: ...
    def hand_in(self, student: str, assignment: object, name: object,
                body: Upload | None) -> Receipt: ...
    def view(self, student: str, assignment: object = None) -> StudentView: ...
    def link(self, student: str) -> Link: ...
    def choose(self, student: str, assignment: object, submission: object) -> str: ...
    def measure(self, student: str, assignment: object) -> Measuring: ...
    def team(self, student: str, assignment: object, action: object,
             value: object = None) -> TeamView | None: ...
    def ask(self, student: str, assignment: object, group: object, reason: object,
            submission: object = None) -> RequestView: ...


def answering(desk: Desk) -> Handler:
    """The handler that answers each request with ``desk``, as the peer the kernel named
    (a request that claims another student is refused)."""
    def handle(peer: Peer, req: Mapping[str, object], body: Body | None
               ) -> Mapping[str, object]:
        claimed = req.get("student")
        if claimed is not None and claimed != peer.user:
            raise RefusedError(f"you are {peer.user} to this desk (the kernel says so); "
                               f"it answers no request for {claimed}")
        desk.on_roster(peer.user)
        op = req.get("op")
        if op == HAND_IN:
            receipt = desk.hand_in(peer.user, req.get("assignment"), req.get("name"), body)
            return {REPLY[HAND_IN]: receipt.to_json()}
        if op == MINE:
            return {REPLY[MINE]: desk.view(peer.user, req.get("assignment")).to_json()}
        if op == LINK:
            return desk.link(peer.user).to_json()
        if op == CHOOSE:
            return {REPLY[CHOOSE]: desk.choose(peer.user, req.get("assignment"),
                                               req.get("submission"))}
        if op == MEASURE:
            return {REPLY[MEASURE]: desk.measure(peer.user, req.get("assignment")).to_json()}
        if op == TEAM:
            team = desk.team(peer.user, req.get("assignment"), req.get("action"),
                             req.get("value"))
            return {REPLY[TEAM]: team.to_json() if team else None}
        if op == ASK:
            return {REPLY[ASK]: desk.ask(peer.user, req.get("assignment"), req.get("group"),
                                         req.get("reason"), req.get("submission")).to_json()}
        raise RefusedError(f"no such request {op!r}: {', '.join(OPS)}")
    return handle


class Refused(Exception):
    """A request the transport will not read (malformed, too large, too slow)."""


def _recv(sock: socket.socket, n: int, until: float) -> bytes:
    left = until - time.monotonic()
    if left <= 0:
        raise Refused("the request did not arrive in time")
    sock.settimeout(left)
    try:
        return sock.recv(n)
    except TimeoutError:
        raise Refused("the request did not arrive in time") from None


def read_request(sock: socket.socket, until: float, spill: Path
                 ) -> tuple[dict[str, object], Body | None]:
    """The request's JSON line and its file (streamed into ``spill``, a directory only
    the desk can read), within the deadline ``until`` (monotonic seconds).

    :raises Refused: naming what was wrong.
    """
    buf = b""
    while b"\n" not in buf:
        chunk = _recv(sock, CHUNK, until)
        if not chunk:
            break
        buf += chunk
        if len(buf) > MAX_HEADER and b"\n" not in buf[:MAX_HEADER]:
            raise Refused(f"a request line over {MAX_HEADER >> 10} KiB")
    line, _, rest = buf.partition(b"\n")
    try:
        request = json.loads(line)
    except (ValueError, UnicodeDecodeError) as e:
        raise Refused(f"malformed request: {e}") from None
    if not isinstance(request, dict):
        raise Refused("malformed request: not a JSON object")
    size = request.get("size")
    if size is None:
        return request, None
    if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= MAX_BODY:
        raise Refused(f"a file of {size!r} bytes: at most {MAX_BODY >> 20} MiB")
    fd, name = tempfile.mkstemp(prefix="in-", dir=spill)
    try:
        with os.fdopen(fd, "wb") as f:
            got = _stream(sock, f, rest[:size], size, until)
        if got != size:
            raise Refused(f"the file ended after {got} of {size} bytes")
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return request, Body(Path(name), size)


def _stream(sock: socket.socket, f: IO[bytes], first: bytes, size: int, until: float) -> int:
    f.write(first)
    got = len(first)
    while got < size:
        chunk = _recv(sock, min(CHUNK, size - got), until)
        if not chunk:
            break
        f.write(chunk)
        got += len(chunk)
    return got


class DeskServer:
    """The socket, its acceptor and the bounded handling of each connection."""

    def __init__(self, sock: socket.socket, handler: Handler, spill: Path,
                 bounds: Bounds = Bounds()) -> None:
        self.sock, self.handler, self.spill, self.bounds = sock, handler, spill, bounds
        self._lock = threading.Lock()
        self._open: Counter[int] = Counter()  # uid -> connections being handled
        self._stop = threading.Event()

    @property
    def in_flight(self) -> int:
        with self._lock:
            return sum(self._open.values())

    def serve_forever(self) -> None:
        """Accept until ``shutdown``; each admitted connection gets a thread of its own."""
        with selectors.DefaultSelector() as sel:
            try:
                sel.register(self.sock, selectors.EVENT_READ)
            except (OSError, ValueError):  # closed before this thread got to it: a stop
                return
            while not self._stop.is_set():
                try:
                    if not sel.select(timeout=0.5):
                        continue
                    conn, _ = self.sock.accept()
                except (OSError, ValueError):  # closed under us (a stop), or a lost race
                    continue
                self._admit(conn)

    def shutdown(self) -> None:
        self._stop.set()

    def server_close(self) -> None:
        self._stop.set()
        self.sock.close()

    def _admit(self, conn: socket.socket) -> None:
        until = time.monotonic() + self.bounds.deadline_s
        try:
            peer = peer_of(conn)
        except OSError:
            conn.close()
            return
        with self._lock:
            total = sum(self._open.values())
            why = None
            if self._open[peer.uid] >= self.bounds.per_account:
                why = (f"{peer.user} has {self._open[peer.uid]} requests in progress "
                       "already: wait for them to finish")
            elif total >= self.bounds.connections:
                why = "the desk is busy: try again in a few seconds"
            else:
                self._open[peer.uid] += 1
        if why is not None:
            _answer(conn, {"ok": False, "error": why, "busy": True})
            return
        threading.Thread(target=self._handle, args=(conn, peer, until), daemon=True,
                         name=f"desk-{peer.user}").start()

    def _handle(self, conn: socket.socket, peer: Peer, until: float) -> None:
        try:
            try:
                request, body = read_request(conn, until, self.spill)
            except Refused as e:
                _answer(conn, {"ok": False, "error": str(e)})
                return
            try:
                reply = self._reply(peer, request, body)
            finally:
                if body is not None:
                    body.path.unlink(missing_ok=True)
            _answer(conn, reply)
        except OSError:
            pass  # the client went away: nothing to answer
        finally:
            conn.close()  # answered or not (closing twice is harmless)
            with self._lock:
                self._open[peer.uid] -= 1
                if not self._open[peer.uid]:
                    del self._open[peer.uid]

    def _reply(self, peer: Peer, request: Mapping[str, object], body: Body | None
               ) -> Mapping[str, object]:
        try:
            return {"ok": True, **self.handler(peer, request, body)}
        except GradelineError as e:
            return {"ok": False, "error": str(e)}
        except Exception:  # a bug or an outside system's failure: logged for staff
            log.exception("desk: request from %s failed", peer.user)
            return {"ok": False, "error": "the desk failed on its side; your course staff "
                                          "can see why in its log"}


def _answer(conn: socket.socket, reply: Mapping[str, object]) -> None:
    with contextlib.suppress(OSError):
        conn.settimeout(5.0)
        conn.sendall(json.dumps(reply).encode() + b"\n")
    conn.close()


def listen(path: Path, handler: Handler, bounds: Bounds = Bounds()) -> DeskServer:
    """Bind ``path`` (world-connectable; its directory world-searchable) and return the
    server; ``serve_forever()`` it, ``shutdown()`` it from another thread. Files in
    transit go to ``incoming/`` beside the socket, readable by the desk alone.

    :raises ConfigError: when another desk already answers there.
    """
    sock = bind_for_everyone(path, "desk")
    spill = path.parent / "incoming"
    spill.mkdir(mode=0o700, exist_ok=True)
    spill.chmod(0o700)
    for left in spill.iterdir():  # a desk that died mid-request
        left.unlink(missing_ok=True)
    sock.listen(128)
    return DeskServer(sock, handler, spill, bounds)
