"""The web pages: the live page and the staff pages (read-only, for browsers on the
serving host itself), and each student's own page (reached by a signed link).

Starlette (a small, typed, well-kept ASGI toolkit; served by uvicorn) rather than a
full framework: read-only routes need routing and responses, not an ORM, forms or
sessions. Pages are rendered on the server, so they need no JavaScript library and
no network beyond this server (clusters' login nodes are often offline).

Who may see what: staff pages (and the live page, which names submissions) answer only
over the staff socket, and there only the accounts the course names as staff (the
kernel says who connected: ``serving``); over TCP they answer 403 with the way in,
whatever address the request came from. A student's page answers anyone holding an
unexpired link the desk signed for them, and shows only what ``course.studentview``
allows.

Every page is in one design (``design``: accessible, readable on a phone and in an
LMS iframe, its stylesheet inlined) and is sent with a Content-Security-Policy that
allows that stylesheet and nothing else: no script, nothing from another host. A page
reloads itself only when its reader asks (``?refresh=on``).

Routes: ``/`` live, ``/a/NAME`` an assignment, ``/a/NAME/preview`` its regrade
preview, ``/a/NAME/similarity`` its similarity report (``/N``: pair N side by side),
``/s/STUDENT`` a student, ``/sub/ID`` a submission (each with a JSON twin
under ``/api``), ``/api/snapshot``, ``/api/access`` (200 for staff: the portal's cheap
way to know whether to offer the staff pages), ``/me/TOKEN`` a student's own page,
``/healthz``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from grader.adapters.peercred import Peer
from grader.adapters.web import pages
from grader.adapters.web.design import CSP, REFRESH_QUERY, layout, link
from grader.adapters.web.live_page import page
from grader.adapters.web.serving import peer_in
from grader.adapters.web.student import MINE_RELOAD_S, mine_page
from grader.core.errors import RefusedError
from grader.course.shown import StudentView

#: Returns the current snapshot (``views.snapshot.Snapshot.to_dict()``).
Provider = Callable[[], Mapping[str, Any]]
#: A student link's token -> that student's view; :raises RefusedError:
StudentSource = Callable[[str], StudentView]
#: whether a kernel-named account is staff of the course (``peercred.is_one_of``)
StaffCheck = Callable[[Peer], bool]


class StaffSource(Protocol):
    """What the staff pages read (None: no such assignment, student or submission)."""

    def assignments(self) -> Sequence[str]: ...
    def assignment(self, name: str) -> Sequence[Mapping[str, Any]] | None: ...
    def student(self, name: str) -> Sequence[Mapping[str, Any]] | None: ...
    def submission(self, spool_id: str) -> Mapping[str, Any] | None: ...
    def preview(self, name: str) -> Mapping[str, Any] | None: ...
    def similarity(self, name: str) -> Mapping[str, Any] | None: ...
    def pair(self, name: str, index: int) -> Mapping[str, Any] | None: ...
    def usage(self) -> Mapping[str, Any]:
        """The course account's core-hours per QOS (``rows``), or why there are none."""
        ...


#: the staff pages with a key: how each is rendered, and its path (a JSON twin under /api)
VIEWS: dict[str, Callable[[str, Any, str], str]] = {
    "assignment": pages.assignment_page,
    "student": lambda k, d, n: pages.student_page(k, d, n),
    "submission": lambda _k, d, n: pages.submission_page(d, n),
    "preview": pages.preview_page, "similarity": pages.similarity_page}
PATHS = {"assignment": "/a/{key}", "student": "/s/{key}", "submission": "/sub/{key}",
         "preview": "/a/{key}/preview", "similarity": "/a/{key}/similarity"}


def staff_html(staff: StaffSource, path: str) -> str | None:
    """The staff page at a site path (``/a/NAME``, ``/a/NAME/similarity/3``, ``/usage``
    ...) for a front end that serves them under its own path and has its own way of
    knowing staff (an LTI launch): None if there is no such page. ``/`` is a plain
    index there (the live page belongs to the serving host)."""
    parts = path.strip("/").split("/")
    names = list(staff.assignments())
    data: Any = None
    if parts == [""]:
        items = "".join(f"<li>{link(f'/a/{quote(n)}', n)}</li>" for n in names)
        return layout("Your course", f"<ul>{items}</ul>", nav=pages.staff_nav(names))
    nav = pages.staff_nav(names, path)
    if parts == ["usage"]:
        return pages.usage_page(staff.usage(), nav)
    kind = {("a", 2): "assignment", ("s", 2): "student", ("sub", 2): "submission",
            ("a", 3): parts[-1], ("a", 4): "pair"}.get((parts[0], len(parts)), "")
    if kind == "pair" and parts[2] == "similarity" and parts[3].isdecimal() and parts[3].isascii():
        data = staff.pair(parts[1], int(parts[3]))
        return pages.pair_page(parts[1], int(parts[3]), data, nav) if data else None
    if kind not in VIEWS or (kind in ("preview", "similarity")) != (len(parts) == 3):
        return None
    data = getattr(staff, kind)(parts[1])
    if data is None and kind not in ("preview", "similarity"):
        return None
    return VIEWS[kind](parts[1], data, nav)


def healthz(_: Request) -> Response:
    return PlainTextResponse("ok")


def html_page(body: str, status_code: int = 200,
              headers: Mapping[str, str] | None = None) -> HTMLResponse:
    """A page with the policy that lets it load its own stylesheet and nothing else."""
    return HTMLResponse(body, status_code=status_code,
                        headers={"Content-Security-Policy": CSP, **(headers or {})})


def refresh_asked(request: Request) -> bool:
    """Whether the reader turned reloading on (the page's own link)."""
    key, value = REFRESH_QUERY
    return request.query_params.get(key) == value


def refusal(request: Request, allowed: StaffCheck, door: str) -> Response | None:
    """Why a request may not see a staff page (None: it may): it came over TCP, or the
    kernel-named account at the socket is not the course's staff."""
    peer = peer_in(request.scope.get("state"))
    if peer is None:
        return PlainTextResponse(f"staff pages answer only on {door}, to the course's "
                                 "staff\n", status_code=403)
    if not allowed(peer):
        return PlainTextResponse(f"{peer.user} is not staff of this course\n",
                                 status_code=403)
    return None


def _mine(students: StudentSource | None) -> Callable[[Request], Response]:
    """A student's own page, from the link the desk signed for them (any address)."""
    def mine(request: Request) -> Response:
        if students is None:
            return PlainTextResponse("no student pages here\n", status_code=404)
        try:
            view = students(request.path_params["token"])
        except RefusedError as e:
            return html_page(pages.refused_page(str(e)), 403)
        every = MINE_RELOAD_S if refresh_asked(request) else None
        return html_page(mine_page(view, auto_refresh_s=every),
                         headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})
    return mine


def app(provider: Provider, refresh_s: int = 5, *, staff: StaffSource | None = None,
        students: StudentSource | None = None, is_staff: StaffCheck | None = None,
        staff_door: str = "the staff socket") -> Starlette:
    """The ASGI app; the sources are called for every request (database reads).

    :param is_staff: who may see the staff pages over the staff socket (None: the
        account running this server only).
    :param staff_door: how staff reach the socket, for the refusal's message.
    """
    allowed = is_staff or (lambda p: p.uid == os.geteuid())

    def _not_staff(request: Request) -> Response | None:
        return refusal(request, allowed, staff_door)

    def nav(request: Request) -> str:
        return pages.staff_nav(list(staff.assignments()), request.url.path) if staff else ""

    def index(request: Request) -> Response:
        return _not_staff(request) or html_page(
            page(provider(), refresh_s, nav(request), auto=refresh_asked(request)))

    def snapshot(request: Request) -> Response:
        return _not_staff(request) or JSONResponse(dict(provider()))

    def access(request: Request) -> Response:  # whether to offer the staff pages, cheaply
        return _not_staff(request) or JSONResponse(
            {"staff": getattr(peer_in(request.scope.get("state")), "user", None)})

    def staff_route(kind: str, render: Callable[[str, Any, str], str]
                    ) -> Callable[[Request], Response]:
        def handle(request: Request) -> Response:
            refused = _not_staff(request)
            if refused or staff is None:
                return refused or PlainTextResponse("no course file: no staff pages\n",
                                                    status_code=404)
            key = request.path_params["key"]
            data = getattr(staff, kind)(key)
            if data is None and kind not in ("preview", "similarity"):
                return PlainTextResponse(f"no {kind} {key}\n", status_code=404)
            if request.url.path.startswith("/api/"):
                return JSONResponse(data)
            return html_page(render(key, data, nav(request)))
        return handle

    def pair(request: Request) -> Response:
        refused = _not_staff(request)
        if refused or staff is None:
            return refused or PlainTextResponse("no staff pages\n", status_code=404)
        name, index = request.path_params["key"], request.path_params["index"]
        data = staff.pair(name, index)
        if data is None:
            return PlainTextResponse(f"no pair {index} of {name}\n", status_code=404)
        return html_page(pages.pair_page(name, index, data, nav(request)))

    def usage(request: Request) -> Response:
        refused = _not_staff(request)
        if refused or staff is None:
            return refused or PlainTextResponse("no staff pages\n", status_code=404)
        data = staff.usage()
        if request.url.path.startswith("/api/"):
            return JSONResponse(dict(data))
        return html_page(pages.usage_page(data, nav(request)))

    routes = [Route("/", index), Route("/api/snapshot", snapshot), Route("/api/access", access),
              Route("/a/{key}/similarity/{index:int}", pair),
              Route("/me/{token}", _mine(students)), Route("/healthz", healthz),
              Route("/usage", usage), Route("/api/usage", usage)]
    for kind, path in PATHS.items():
        handler = staff_route(kind, VIEWS[kind])
        routes += [Route(path, handler), Route("/api" + path, handler)]
    return Starlette(routes=routes)
