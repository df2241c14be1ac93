"""The regrade queue and a request's page (``adapters.web``), called as ASGI with a
chosen kernel-named peer: only staff on the staff socket see them and answer; an
answer needs the form's token made for that account and a post from the page's own
site, and is made as the account the kernel named (never a field of the form)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from grader.adapters import web
from grader.adapters.peercred import Peer
from grader.adapters.web.serving import PEER
from grader.core.errors import RefusedError
from grader.course.regrades import Answer, Queue, QueueRow, RegradeDetail
from grader.course.shown import RequestView

from ..support import course_at

TA, ALICE = Peer(1, 5001, 5001, "ta1"), Peer(2, 5002, 5002, "alice")
REQ = RequestView(7, "x1", "group", "secret", "my output is right", "2026-12-03T10:00",
                  "alice", "open", before=0.0, most=30.0)


EARLIER = RequestView(3, "x0", "group", "secret", "the output is the same as yours",
                      "2026-12-02T09:00", "alice", "declined",
                      answer="your output has a trailing space", answered_at="2026-12-02T12:00",
                      answered_by="ta2", before=10.0, after=10.0, most=30.0)


class Staff:
    def __init__(self) -> None:
        self.asked: dict[str, object] = {}
        self.answers: list[tuple[object, ...]] = []

    def assignments(self) -> Sequence[str]:
        return ["pair"]

    def regrades(self, *, assignment: str = "", target: str = "", status: str = "open",
                 older_h: float | None = None) -> Queue:
        self.asked = {"assignment": assignment, "target": target, "status": status,
                      "older_h": older_h}
        return Queue((QueueRow(REQ, "pair", "alice", 3.0),), assignment, target, status,
                     older_h, {"open": 1})

    def regrade(self, request: int) -> RegradeDetail | None:
        return RegradeDetail(QueueRow(REQ, "pair", "alice", 3.0), None, (), (), ("x",),
                             (EARLIER,)) if request == 7 else None

    def answer(self, request: int, outcome: str, reason: str, by: str,
               points: float | None = None) -> Answer:
        if outcome == "adjusted" and points is None:
            raise RefusedError("adjusted: give the points of test group secret, from 0 to 30")
        self.answers.append((request, outcome, reason, by, points))
        return Answer("adjusted", reason, by, course_at(4, 9), 0.0, points or 0.0)


def call(app: Any, method: str, path: str, peer: Peer | None, body: bytes = b"",
         query: bytes = b"", headers: dict[str, str] | None = None) -> tuple[int, str]:
    out: dict[str, Any] = {"body": b""}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(msg: dict[str, Any]) -> None:
        if msg["type"] == "http.response.start":
            out["status"] = msg["status"]
        else:
            out["body"] += msg.get("body", b"")

    hdrs = [(k.lower().encode(), v.encode()) for k, v in {
        "host": "127.0.0.1:8470", "content-type": "application/x-www-form-urlencoded",
        **(headers or {})}.items()]
    scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(),
             "query_string": query, "headers": hdrs, "client": ("", 0),
             "server": ("127.0.0.1", 8470), "scheme": "http", "root_path": "",
             "http_version": "1.1", "app": app, "state": {PEER: peer}}
    asyncio.run(app(scope, receive, send))
    return out["status"], out["body"].decode()


def test_the_queue_and_a_request_answer_staff_on_the_socket_only() -> None:
    staff = Staff()
    app = web.app(lambda: None, staff=staff, is_staff=lambda p: p.user == "ta1")
    for path in ("/regrades", "/regrades/7", "/api/regrades"):
        assert call(app, "GET", path, None)[0] == 403
        assert call(app, "GET", path, ALICE)[0] == 403
    status, body = call(app, "GET", "/regrades", TA, query=b"group=secret&status=&older=2")
    assert status == 200 and "my output is right" in body
    assert staff.asked == {"assignment": "", "target": "secret", "status": "",
                           "older_h": 2.0}
    assert call(app, "GET", "/regrades/8", TA)[0] == 404
    status, body = call(app, "GET", "/regrades/7", TA)  # the thread it answers back to
    assert status == 200 and "Earlier about secret" in body
    assert "the output is the same as yours" in body and "Declined by ta2" in body
    assert "your output has a trailing space" in body
    assert body.index("Earlier about secret") < body.index("my output is right")


def test_an_answer_needs_the_pages_token_and_is_the_kernels_account() -> None:
    staff = Staff()
    app = web.app(lambda: None, staff=staff, is_staff=lambda p: p.user in ("ta1", "alice"))
    page = call(app, "GET", "/regrades/7", TA)[1]
    token = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert token and 'action="/regrades/7/answer"' in page

    def post(peer: Peer, csrf: str, **extra: str) -> tuple[int, str]:
        form = {"csrf": csrf, "outcome": "adjusted", "points": "30", "reason": "right",
                "by": "mallory", **extra}
        return call(app, "POST", "/regrades/7/answer", peer, urlencode(form).encode())

    assert post(TA, "forged")[0] == 403
    assert post(ALICE, token.group(1))[0] == 403  # staff too, but the token is ta1's
    body = urlencode({"csrf": token.group(1), "outcome": "declined", "reason": "x"}).encode()
    status, text = call(app, "POST", "/regrades/7/answer", TA, body,
                        headers={"origin": "http://evil.example"})
    assert status == 403 and "another site" in text
    status, text = post(TA, token.group(1), points="")
    assert status == 400 and "give the points" in text
    status, text = post(TA, token.group(1))
    assert status == 200 and "Answered: adjusted" in text
    assert staff.answers == [(7, "adjusted", "right", "ta1", 30.0)]
