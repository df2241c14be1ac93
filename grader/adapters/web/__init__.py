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
``/s/STUDENT`` a student, ``/sub/ID`` a submission, ``/regrades`` the regrade queue
(``?assignment=&group=&status=&older=``) and ``/regrades/N`` one request (each with a
JSON twin under ``/api``; ``POST /regrades/N/answer`` answers it, with the form's token
made for the account the kernel named), ``/api/snapshot``, ``/api/access`` (200 for
staff: the portal's cheap way to know whether to offer the staff pages), ``/me/TOKEN``
a student's own page, ``/healthz``; grading by hand under ``/a/NAME/grade``
(``grading_routes``). With grading by hand, each staff page is the one its viewer may
see (an anonymous assignment's students by pseudonym for graders).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Protocol
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from grader.adapters.peercred import Peer
from grader.adapters.web import grading_routes, pages, regrade_pages
from grader.adapters.web.design import CSP, REFRESH_QUERY, layout, link
from grader.adapters.web.grading_routes import GradingSource
from grader.adapters.web.live_page import page
from grader.adapters.web.regrade_routes import RegradeSource, regrade_routes
from grader.adapters.web.serving import peer_in
from grader.adapters.web.student import MINE_RELOAD_S, mine_page
from grader.core.errors import RefusedError
from grader.course.gradingview import Viewer
from grader.course.shown import StudentView
from grader.course.similarity_pairs import PairView, SimilarityReport
from grader.course.staffview import (
    AssignmentRow,
    HistoryView,
    RegradePreview,
    Snapshot,
    SubmissionDetail,
    UsageView,
)

#: Returns the current snapshot (``views.snapshot``).
Provider = Callable[[], Snapshot]
#: A student link's token -> that student's view; :raises RefusedError:
StudentSource = Callable[[str], StudentView]
#: whether a kernel-named account is staff of the course (``peercred.is_one_of``)
StaffCheck = Callable[[Peer], bool]


class StaffSource(RegradeSource, Protocol):
    """What the staff pages read (None: no such assignment, student or submission)."""

    def assignments(self) -> Sequence[str]: ...
    def assignment(self, name: str) -> Sequence[AssignmentRow] | None: ...
    def student(self, name: str) -> Sequence[HistoryView] | None: ...
    def submission(self, spool_id: str) -> SubmissionDetail | None: ...
    def preview(self, name: str) -> RegradePreview | None: ...
    def similarity(self, name: str) -> SimilarityReport | None: ...
    def pair(self, name: str, index: int) -> PairView | None: ...
    def usage(self) -> UsageView:
        """The course account's core-hours per QOS (``rows``), or why there are none."""
        ...


class GradingLens(GradingSource, Protocol):
    """Grading by hand (``views.grading.Grading``): its pages, and every staff page as a
    viewer may see it."""

    def viewer(self, user: str, owner: bool) -> Viewer: ...
    def graded(self) -> Sequence[str]: ...
    def staff_for(self, viewer: Viewer) -> StaffSource: ...
    def snapshot_for(self, viewer: Viewer, snap: Snapshot) -> Snapshot: ...


@dataclass(frozen=True, slots=True)
class Page:
    """A staff page found: its JSON twin (under /api), and its HTML for a navigation."""

    json: object
    html: Callable[[str], str]


def _assignment(staff: StaffSource, key: str) -> Page | None:
    rows = staff.assignment(key)
    return None if rows is None else \
        Page([r.to_json() for r in rows], partial(pages.assignment_page, key, rows))


def _student(staff: StaffSource, key: str) -> Page | None:
    history = staff.student(key)
    return None if history is None else \
        Page([h.to_json() for h in history], partial(pages.student_page, key, history))


def _submission(staff: StaffSource, key: str) -> Page | None:
    s = staff.submission(key)
    return None if s is None else Page(s.to_json(), partial(pages.submission_page, s))


def _preview(staff: StaffSource, key: str) -> Page:  # none yet: a page saying how
    p = staff.preview(key)
    return Page(p.to_json() if p else None, partial(pages.preview_page, key, p))


def _similarity(staff: StaffSource, key: str) -> Page:  # none yet: a page saying how
    r = staff.similarity(key)
    return Page(r.to_json() if r else None, partial(pages.similarity_page, key, r))


#: the staff pages with a key: their path (a JSON twin under /api) and how each is found
STAFF_PAGES: dict[str, tuple[str, Callable[[StaffSource, str], Page | None]]] = {
    "assignment": ("/a/{key}", _assignment), "student": ("/s/{key}", _student),
    "submission": ("/sub/{key}", _submission), "preview": ("/a/{key}/preview", _preview),
    "similarity": ("/a/{key}/similarity", _similarity)}


def staff_html(staff: StaffSource, path: str) -> str | None:
    """The staff page at a site path (``/a/NAME``, ``/a/NAME/similarity/3``, ``/usage``
    ...) for a front end that serves them under its own path and has its own way of
    knowing staff (an LTI launch): None if there is no such page. ``/`` is a plain
    index there (the live page belongs to the serving host)."""
    parts = path.strip("/").split("/")
    names = list(staff.assignments())
    if parts == [""]:
        items = "".join(f"<li>{link(f'/a/{quote(n)}', n)}</li>" for n in names)
        return layout("Your course", f"<ul>{items}</ul>", nav=pages.staff_nav(names))
    nav = pages.staff_nav(names, path)
    if parts == ["usage"]:
        return pages.usage_page(staff.usage(), nav)
    if parts == ["regrades"]:
        return regrade_pages.queue_page(staff.regrades(status=""), names, nav)
    if len(parts) == 2 and parts[0] == "regrades" and parts[1].isdecimal():
        request = staff.regrade(int(parts[1]))
        return regrade_pages.request_page(request, nav) if request else None
    kind = {("a", 2): "assignment", ("s", 2): "student", ("sub", 2): "submission",
            ("a", 3): parts[-1], ("a", 4): "pair"}.get((parts[0], len(parts)), "")
    if kind == "pair" and parts[2] == "similarity" and parts[3].isdecimal() and parts[3].isascii():
        pair = staff.pair(parts[1], int(parts[3]))
        return pages.pair_page(parts[1], int(parts[3]), pair, nav) if pair else None
    if kind not in STAFF_PAGES or (kind in ("preview", "similarity")) != (len(parts) == 3):
        return None
    found = STAFF_PAGES[kind][1](staff, parts[1])
    return found.html(nav) if found is not None else None


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


@dataclass(frozen=True, slots=True)
class _Lens:
    """Each request's staff pages and snapshot as its viewer may see them (with grading
    by hand: an anonymous assignment's students by pseudonym for graders)."""

    grading: GradingLens | None
    not_staff: Callable[[Request], Response | None]
    pages: StaffSource | None
    provider: Provider

    def viewer(self, request: Request) -> Viewer | Response:
        """The request's viewer (staff, on the socket), or why not."""
        peer = peer_in(request.scope.get("state"))
        refused = self.not_staff(request)
        if refused is not None or peer is None or self.grading is None:
            return refused or PlainTextResponse("no grading by hand here\n", status_code=404)
        return self.grading.viewer(peer.user, peer.uid == os.geteuid())

    def staff(self, request: Request) -> StaffSource | None:
        v = self.viewer(request) if self.grading is not None else None
        return self.grading.staff_for(v) if self.grading and isinstance(v, Viewer) \
            else self.pages

    def snapshot(self, request: Request) -> Snapshot:
        v = self.viewer(request) if self.grading is not None else None
        snap = self.provider()
        return self.grading.snapshot_for(v, snap) \
            if self.grading and isinstance(v, Viewer) else snap


def app(provider: Provider, refresh_s: int = 5, *, staff: StaffSource | None = None,
        students: StudentSource | None = None, is_staff: StaffCheck | None = None,
        staff_door: str = "the staff socket", grading: GradingLens | None = None
        ) -> Starlette:
    """The ASGI app; the sources are called for every request (database reads).

    :param is_staff: who may see the staff pages over the staff socket (None: the
        account running this server only).
    :param staff_door: how staff reach the socket, for the refusal's message.
    :param grading: grading by hand (its pages; each staff page as its viewer may see it).
    """
    allowed = is_staff or (lambda p: p.uid == os.geteuid())

    _not_staff = partial(refusal, allowed=allowed, door=staff_door)
    lens = _Lens(grading, _not_staff, staff, provider)

    def nav(request: Request) -> str:
        return pages.staff_nav(list(staff.assignments()), request.url.path,
                               graded=grading.graded() if grading else ()) if staff else ""

    def index(request: Request) -> Response:
        return _not_staff(request) or html_page(
            page(lens.snapshot(request), refresh_s, nav(request), auto=refresh_asked(request)))

    def snapshot(request: Request) -> Response:
        return _not_staff(request) or JSONResponse(lens.snapshot(request).to_json())

    def access(request: Request) -> Response:  # whether to offer the staff pages, cheaply
        return _not_staff(request) or JSONResponse({"staff": getattr(
            peer_in(request.scope.get("state")), "user", None)})

    def staff_route(kind: str, find: Callable[[StaffSource, str], Page | None]
                    ) -> Callable[[Request], Response]:
        def handle(request: Request) -> Response:
            refused = _not_staff(request)
            source = lens.staff(request) if refused is None else None
            if refused or source is None:
                return refused or PlainTextResponse("no course file: no staff pages\n",
                                                    status_code=404)
            key = request.path_params["key"]
            found = find(source, key)
            if found is None:
                return PlainTextResponse(f"no {kind} {key}\n", status_code=404)
            if request.url.path.startswith("/api/"):
                return JSONResponse(found.json)
            return html_page(found.html(nav(request)))
        return handle

    def pair(request: Request) -> Response:
        refused = _not_staff(request)
        source = lens.staff(request) if refused is None else None
        if refused or source is None:
            return refused or PlainTextResponse("no staff pages\n", status_code=404)
        name, index = request.path_params["key"], request.path_params["index"]
        data = source.pair(name, index)
        if data is None:
            return PlainTextResponse(f"no pair {index} of {name}\n", status_code=404)
        return html_page(pages.pair_page(name, index, data, nav(request)))

    def usage(request: Request) -> Response:
        refused = _not_staff(request)
        if refused or staff is None:
            return refused or PlainTextResponse("no staff pages\n", status_code=404)
        data = staff.usage()
        if request.url.path.startswith("/api/"):
            return JSONResponse(data.to_json())
        return html_page(pages.usage_page(data, nav(request)))

    routes = [Route("/", index), Route("/api/snapshot", snapshot), Route("/api/access", access),
              *regrade_routes(lens.staff, _not_staff, nav),
              Route("/a/{key}/similarity/{index:int}", pair),
              Route("/me/{token}", _mine(students)), Route("/healthz", healthz),
              Route("/usage", usage), Route("/api/usage", usage)]
    if grading is not None:
        routes += grading_routes.routes(grading, lens.viewer, nav)
    for kind, (path, find) in STAFF_PAGES.items():
        handler = staff_route(kind, find)
        routes += [Route(path, handler), Route("/api" + path, handler)]
    return Starlette(routes=routes)
