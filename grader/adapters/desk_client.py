"""Asking the student desk (``adapters.desk_socket``) over its Unix socket: what ``gradeline
hand-in``/``mine``/``measure``/``team`` and every front end that runs as the student
(the Open OnDemand app) use, as typed calls (``hand_in``, ``mine``, ``link``, ``choose``,
``measure``, ``team``, ``ask_regrade``) that give the values of ``course.shown``. Apart
from the server so a front end needs none of it.

The wire, the desk's and nobody else's: one JSON line (at most ``MAX_HEADER`` bytes)
naming the request's ``op`` (``OPS``) and its fields, the file's bytes after it when the
line says ``"size"``; one JSON object back, ``{"ok": true, ...}`` with the answer under
the op's key (``REPLY``; a link's fields at the top), or ``{"ok": false, "error": why}``."""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Iterator, Mapping
from pathlib import Path

from grader.core.errors import GradelineError, RefusedError
from grader.course.shown import Link, Measuring, Receipt, RequestView, StudentView, TeamView

MAX_HEADER = 64 << 10  # a request's JSON line
CHUNK = 64 << 10
HAND_IN, MINE, LINK, CHOOSE, MEASURE, TEAM, ASK = OPS = (
    "hand-in", "mine", "link", "choose", "measure", "team", "ask-regrade")
#: where a reply carries its answer, per op (a link's are the reply's own fields)
REPLY = {HAND_IN: "receipt", MINE: "view", CHOOSE: "chosen", MEASURE: "measuring",
         TEAM: "team", ASK: "request"}


class DeskRefusal(RefusedError):
    """The desk answered, and refused (the reason is its own: a limit, a bad name...)."""


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


def ask(path: Path, request: Mapping[str, object], file: Path | None = None,
        timeout_s: float = 120.0) -> dict[str, object]:
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


def _answer(path: Path, op: str, fields: Mapping[str, object], file: Path | None = None
            ) -> object:
    reply = ask(path, {"op": op, **fields}, file)
    if not reply.get("ok"):
        raise DeskRefusal(str(reply.get("error") or "no reason given"))
    return reply.get(REPLY[op]) if op in REPLY else \
        {k: v for k, v in reply.items() if k != "ok"}


def hand_in(path: Path, assignment: str, file: Path, name: str | None = None) -> Receipt:
    """Hand in ``file`` (as ``name``: the file's own by default) for ``assignment``.

    :raises DeskRefusal: with the desk's reason; GradelineError: no desk answers.
    """
    return Receipt.from_json(_answer(path, HAND_IN, {"assignment": assignment,
                                                     "name": name or file.name}, file))


def mine(path: Path, assignment: str | None = None) -> StudentView:
    """The caller's own view (of one assignment, or all)."""
    only = {"assignment": assignment} if assignment else {}
    return StudentView.from_json(_answer(path, MINE, only))


def link(path: Path) -> Link:
    """A link to the caller's own page."""
    return Link.from_json(_answer(path, LINK, {}))


def choose(path: Path, assignment: str, submission: str) -> str:
    """Make ``submission`` the caller's counting one for ``assignment``."""
    return str(_answer(path, CHOOSE, {"assignment": assignment, "submission": submission}))


def measure(path: Path, assignment: str) -> Measuring:
    """Spend one of the caller's tokens on a performance measurement of their latest
    submission of ``assignment``."""
    return Measuring.from_json(_answer(path, MEASURE, {"assignment": assignment}))


def team(path: Path, assignment: str, action: str, value: str | None = None
         ) -> TeamView | None:
    """Create a team named ``value``, join the one whose code is ``value``, or leave
    one's team (``action``); the caller's team after it (None: in none)."""
    got = _answer(path, TEAM, {"assignment": assignment, "action": action, "value": value})
    return None if got is None else TeamView.from_json(got)


def ask_regrade(path: Path, assignment: str, group: str, reason: str,
                submission: str | None = None) -> RequestView:
    """Ask staff to look again at test ``group`` of ``submission`` (default: the one
    that counts), saying why; the request as kept."""
    return RequestView.from_json(_answer(path, ASK, {
        "assignment": assignment, "group": group, "reason": reason,
        "submission": submission}))
