"""Who the web pages answer (``adapters.web``), called as ASGI with a chosen client
address and, for the staff socket, a chosen kernel-named peer: staff pages only to
the course's staff over the socket (never to an address, 127.0.0.1 included), a
student's page only with a good link. (The same with real accounts and sockets:
tests/site/test_login_node.py.)"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from grader.adapters import web
from grader.adapters.peercred import Peer
from grader.adapters.web.design import CSP
from grader.adapters.web.live_page import span
from grader.adapters.web.serving import PEER
from grader.core.errors import RefusedError
from grader.course.shown import StudentView
from grader.course.similarity_pairs import PairView, SimilarityReport
from grader.course.staffview import (
    AssignmentRow,
    HistoryView,
    RegradePreview,
    Snapshot,
    SubmissionDetail,
    UsageRow,
    UsageView,
)

SNAPSHOT = Snapshot("c", 0.0, 100_000.0, 0, 0, 0, 0.0, None, None)


class Staff:
    def assignments(self) -> Sequence[str]:
        return ["hw1"]

    def assignment(self, name: str) -> Sequence[AssignmentRow] | None:
        return [AssignmentRow("alice", "Alice <b>", 1, "s1", "WA", "pending", "s1")] \
            if name == "hw1" else None

    def student(self, name: str) -> Sequence[HistoryView] | None:
        return None

    def submission(self, spool_id: str) -> SubmissionDetail | None:
        return None

    def preview(self, name: str) -> RegradePreview | None:
        return None

    def similarity(self, name: str) -> SimilarityReport | None:
        return None

    def pair(self, name: str, index: int) -> PairView | None:
        return None

    def usage(self) -> UsageView:
        return UsageView("cs101", "now-30days", "the last 30 days", (
            UsageRow("cs101", "live", 3, 0.25), UsageRow("cs101", "bulk", 9, 1.5)))


def student(token: str) -> StudentView:
    if token != "good":
        raise RefusedError("not a link this service made")
    return StudentView("alice", "c", "", ())


TA, ALICE = Peer(1, 5001, 5001, "ta1"), Peer(2, 5002, 5002, "alice")


def get(path: str, host: str, peer: Peer | None = None, query: bytes = b"",
        headers: dict[str, str] | None = None) -> tuple[int, str]:
    """Status and body of ``path``; the response's headers go into ``headers``."""
    app = web.app(lambda: SNAPSHOT, staff=Staff(), students=student,
                  is_staff=lambda p: p.user == "ta1")
    out: dict[str, Any] = {"body": b""}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(msg: dict[str, Any]) -> None:
        if msg["type"] == "http.response.start":
            out["status"] = msg["status"]
            if headers is not None:
                headers.update((k.decode(), v.decode()) for k, v in msg["headers"])
        else:
            out["body"] += msg.get("body", b"")

    scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(),
             "query_string": query, "headers": [], "client": (host, 40000),
             "server": ("127.0.0.1", 8470), "scheme": "http", "root_path": "",
             "http_version": "1.1", "app": app, "state": {PEER: peer}}
    asyncio.run(app(scope, receive, send))
    return out["status"], out["body"].decode()


STAFF_ROUTES = ("/", "/a/hw1", "/api/a/hw1", "/api/snapshot", "/api/access", "/s/alice",
                "/sub/s1",
                "/a/hw1/preview", "/a/hw1/similarity", "/a/hw1/similarity/0", "/usage",
                "/api/usage")


def test_staff_pages_answer_the_courses_staff_on_the_socket_only() -> None:
    for path in STAFF_ROUTES:
        for host in ("192.0.2.7", "127.0.0.1", "::1"):  # any address: TCP is no staff door
            status, body = get(path, host)
            assert status == 403 and "staff socket" in body, (path, host)
        status, body = get(path, "", ALICE)  # on the socket, but not staff
        assert status == 403 and "alice is not staff" in body, path
    status, body = get("/a/hw1", "", TA)
    assert status == 200 and "Alice &lt;b&gt;" in body and "<td>Alice <b>" not in body
    assert get("/api/access", "", TA) == (200, '{"staff":"ta1"}')
    assert get("/a/nope", "", TA)[0] == 404
    assert get("/s/alice", "", TA)[0] == 404
    assert "stored (last 28 h)" in get("/", "", TA)[1]
    status, body = get("/usage", "", TA)
    assert status == 200 and "<b>cs101</b>" in body and "1.500" in body
    assert "total: 1.750 core-hours" in body and "/usage" in get("/a/hw1", "", TA)[1]


def test_a_students_page_needs_a_good_link_from_anywhere() -> None:
    status, body = get("/me/good", "192.0.2.7")
    assert status == 200 and "alice in c" in body
    assert get("/me/good", "", ALICE)[0] == 200  # over the socket too
    status, body = get("/me/forged", "127.0.0.1")
    assert status == 403 and "not a link" in body


def test_a_window_reads_in_minutes_hours_or_days() -> None:
    assert [span(s) for s in (600, 100_000, 3 * 86400)] == ["10 min", "28 h", "3 d"]


def test_pages_load_only_their_own_style_and_reload_only_when_asked() -> None:
    seen: dict[str, str] = {}
    status, body = get("/", "", TA, headers=seen)
    assert status == 200 and seen["content-security-policy"] == CSP
    assert "http-equiv" not in body and 'href="?refresh=on"' in body
    assert 'http-equiv="refresh" content="5"' in get("/", "", TA, b"refresh=on")[1]
    status, body = get("/me/good", "192.0.2.7", headers=seen)
    assert seen["content-security-policy"] == CSP and seen["cache-control"] == "no-store"
    assert "http-equiv" not in body
    assert 'content="30"' in get("/me/good", "192.0.2.7", query=b"refresh=on")[1]
    assert 'aria-current="page"' in get("/a/hw1", "", TA)[1].split('href="/a/hw1"')[1][:30]


def test_staff_html_renders_the_pages_a_front_end_serves_under_its_own_path() -> None:
    """LTI's staff pages: the same renderers by path, None where the web app says 404."""
    staff = Staff()
    assert "Alice &lt;b&gt;" in (web.staff_html(staff, "/a/hw1") or "")
    assert "core" in (web.staff_html(staff, "/usage") or "").lower()
    assert 'href="/a/hw1"' in (web.staff_html(staff, "/") or "")
    assert web.staff_html(staff, "/a/hw1/preview") is not None  # none yet is a page too
    for missing in ("/a/nope", "/s/alice", "/sub/s1", "/a/hw1/similarity/0",
                    "/a/hw1/assignment", "/a/hw1/similarity/x", "/a/hw1/similarity/\u00b2",
                    "/etc/passwd", "/a"):
        assert web.staff_html(staff, missing) is None, missing
