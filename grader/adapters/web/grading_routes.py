"""The grading pages' routes on the staff socket (the only staff pages that write):
``/a/NAME/grade`` an assignment's queues and progress, ``/a/NAME/grade/Q/KEY`` one
student's question (``KEY``: their pseudonym for the assignment), its ``POST`` the
grader's save, ``POST /a/NAME/grade/reveal`` an instructor's reveal of names,
``/a/NAME/grade/evaluations.csv`` the export; the pages' JSON twins under ``/api``.

Who posts is the kernel's word (the socket's peer, ``serving``); a form carries a
token made for that account, and a post from another site's page (its ``Origin``) is
refused, so a page elsewhere cannot grade in a grader's name through their tunnel.
After a save the grader is sent on (``303``, a relative address: the pages may sit
under a prefix); a conflict (``409``) or a refused field (``400``) answers with the
page, the grader's entries kept in the form."""

from __future__ import annotations

import hmac
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol
from urllib.parse import quote, urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Route

from grader.adapters.web.design import CSP, message_page
from grader.adapters.web.grading_page import grading_index_page, grading_page
from grader.core.errors import RefusedError
from grader.course.gradingpage import GradingPage, Saved
from grader.course.gradingview import GradingIndex, Viewer

MAX_FORM_BYTES = 256 << 10  # a grading form is a few KiB
HEADERS = {"Content-Security-Policy": CSP, "Cache-Control": "no-store"}


class GradingSource(Protocol):
    """What the grading routes ask (``views.grading.Grading``)."""

    def form_token(self, viewer: Viewer) -> str: ...
    def index(self, viewer: Viewer, assignment: str) -> GradingIndex | None: ...
    def page(self, viewer: Viewer, assignment: str, question: str, key: str
             ) -> GradingPage | None: ...
    def save(self, viewer: Viewer, assignment: str, question: str, key: str,
             fields: Mapping[str, Sequence[str]]) -> Saved | None: ...
    def reveal(self, viewer: Viewer, assignment: str, *, hide: bool = False) -> None: ...
    def evaluations(self, viewer: Viewer, assignment: str) -> str | None: ...


#: the viewer of a request, or the response refusing it (not staff, not the socket)
Who = Callable[[Request], Viewer | Response]
#: the navigation of a request's page
Nav = Callable[[Request], str]


def _html(body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers=HEADERS)


def _not_found(what: str) -> Response:
    return PlainTextResponse(f"no {what}\n", status_code=404)


def foreign(request: Request) -> Response | None:
    """Why a post is refused before its body is read: from another site's page, or too
    large (None: it may be read)."""
    origin = request.headers.get("origin")
    if origin and urlsplit(origin).netloc != request.headers.get("host", ""):
        return PlainTextResponse("a grading form from another site's page is refused\n",
                                 status_code=403)
    length = request.headers.get("content-length", "")
    if not length.isdecimal() or int(length) > MAX_FORM_BYTES:
        return PlainTextResponse(f"a grading form has a length, at most {MAX_FORM_BYTES} "
                                 "bytes\n", status_code=413)
    return None


async def form_fields(request: Request) -> dict[str, list[str]]:
    form = await request.form(max_files=0, max_fields=1000)
    out: dict[str, list[str]] = {}
    for k, v in form.multi_items():
        if isinstance(v, str):
            out.setdefault(k, []).append(v)
    return out


class _Routes:
    """The handlers, over one grading source."""

    def __init__(self, g: GradingSource, who: Who, nav: Nav) -> None:
        self.g, self.who, self.nav = g, who, nav

    def index(self, request: Request) -> Response:
        v = self.who(request)
        if isinstance(v, Response):
            return v
        name = request.path_params["name"]
        idx = self.g.index(v, name)
        if idx is None:
            return _not_found(f"assignment graded by hand called {name}")
        if request.url.path.startswith("/api/"):
            return JSONResponse(idx.to_json())
        return _html(grading_index_page(idx, self.nav(request), self.g.form_token(v)))

    def page(self, request: Request) -> Response:
        v = self.who(request)
        if isinstance(v, Response):
            return v
        p = request.path_params
        found = self.g.page(v, p["name"], p["question"], p["key"])
        if found is None:
            return _not_found(f"question {p['question']} of {p['key']} in {p['name']}")
        if request.url.path.startswith("/api/"):
            return JSONResponse(found.to_json())
        said = "Saved." if request.query_params.get("saved") else ""
        return _html(grading_page(found, self.nav(request), self.g.form_token(v), said=said))

    async def _posted(self, request: Request) -> tuple[Viewer, dict[str, list[str]]] | Response:
        """The poster and their form's fields, or why the post is refused."""
        v = self.who(request)
        if isinstance(v, Response):
            return v
        if (refused := foreign(request)) is not None:
            return refused
        return v, await form_fields(request)

    async def post(self, request: Request) -> Response:
        """A grading form (a save, a reveal): ``grading_post``'s answer."""
        posted = await self._posted(request)
        if isinstance(posted, Response):
            return posted
        status, body, where = await run_in_threadpool(
            grading_post, self.g, posted[0], request.url.path, posted[1], self.nav(request))
        if where:
            return RedirectResponse(where, status)
        return _html(body, status)

    def evaluations(self, request: Request) -> Response:
        v = self.who(request)
        if isinstance(v, Response):
            return v
        name = request.path_params["name"]
        text = self.g.evaluations(v, name)
        if text is None:
            return _not_found(f"assignment graded by hand called {name}")
        return PlainTextResponse(text, media_type="text/csv; charset=utf-8", headers={
            "Content-Disposition": f'attachment; filename="{quote(name)}-evaluations.csv"',
            "Cache-Control": "no-store"})


def _parts(path: str) -> list[str] | None:
    """``/a/NAME/grade/...``'s parts, or None for another path."""
    parts = path.partition("?")[0].strip("/").split("/")
    return parts if len(parts) >= 3 and parts[0] == "a" and parts[2] == "grade" else None


def grading_html(g: GradingSource, viewer: Viewer, path: str, nav: str) -> str | None:
    """The grading page at a site path (``/a/NAME/grade``, ``/a/NAME/grade/Q/KEY``,
    ``?saved=1`` after a save) for a front end with routes of its own (an LTI launch):
    None where there is none."""
    parts = _parts(path)
    if parts is None or len(parts) not in (3, 5):
        return None
    if len(parts) == 3:
        idx = g.index(viewer, parts[1])
        return grading_index_page(idx, nav, g.form_token(viewer)) if idx else None
    found = g.page(viewer, parts[1], parts[3], parts[4])
    said = "Saved." if "saved=1" in path.partition("?")[2] else ""
    return grading_page(found, nav, g.form_token(viewer), said=said) if found else None


def grading_post(g: GradingSource, viewer: Viewer, path: str,
                 fields: Mapping[str, Sequence[str]], nav: str) -> tuple[int, str, str]:
    """(status, HTML, where to go next) of a grading form posted at a site path: a save
    (``/a/NAME/grade/Q/KEY``) or a reveal (``/a/NAME/grade/reveal``). The form's token
    must be the viewer's; where to go is relative to the path (a prefix stays)."""
    parts = _parts(path)
    if not hmac.compare_digest((fields.get("csrf") or [""])[-1], g.form_token(viewer)):
        return 403, message_page("Not saved", "This form was not made for you (or by this "
                                              "server): open the page again."), ""
    if parts is not None and parts[3:] == ["reveal"]:
        try:
            g.reveal(viewer, parts[1])
        except RefusedError as e:
            return 403, message_page("Not revealed", str(e)), ""
        return 303, "", "../grade"
    s = g.save(viewer, parts[1], parts[3], parts[4], fields) \
        if parts is not None and len(parts) == 5 else None
    if parts is None or s is None:
        return 404, message_page("Not here", "No such question to grade.", kind="info"), ""
    if s.outcome == "saved":
        return 303, "", f"{quote(s.next_key or parts[4])}?saved=1"
    return (409 if s.outcome == "conflict" else 400,
            grading_page(s.page, nav, g.form_token(viewer), draft=fields,
                         conflict=s.outcome == "conflict", problem=s.problem), "")


def routes(g: GradingSource, who: Who, nav: Nav) -> list[Route]:
    """The grading routes (see the module docstring)."""
    h, base = _Routes(g, who, nav), "/a/{name}/grade"
    return [Route(base, h.index), Route("/api" + base, h.index),
            Route(base + "/evaluations.csv", h.evaluations),
            Route(base + "/reveal", h.post, methods=["POST"]),
            Route(base + "/{question}/{key}", h.page),
            Route("/api" + base + "/{question}/{key}", h.page),
            Route(base + "/{question}/{key}", h.post, methods=["POST"])]
