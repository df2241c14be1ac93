"""The routes of the regrade queue on the staff server: ``/regrades`` (filtered by
``?assignment=&group=&status=&older=``), ``/regrades/N`` one request (each with a JSON
twin under ``/api``), and ``POST /regrades/N/answer`` -- staff's answer, taken only with
the token its page carried, made for the account the kernel named at the socket (a
restart of the server makes new ones), and only from a page of the same site; the
answer is that account's, never a name in the form."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Sequence
from typing import Protocol

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from grader.adapters.peercred import Peer
from grader.adapters.web import regrade_pages
from grader.adapters.web.design import CSP
from grader.adapters.web.serving import peer_in
from grader.core.errors import RefusedError
from grader.course.regrades import Answer, Queue, RegradeDetail


class RegradeSource(Protocol):
    """What the regrade pages read and do (``views.staff_pages.StaffPages``)."""

    def assignments(self) -> Sequence[str]: ...
    def regrades(self, *, assignment: str = "", target: str = "", status: str = "open",
                 older_h: float | None = None) -> Queue: ...
    def regrade(self, request: int) -> RegradeDetail | None: ...
    def answer(self, request: int, outcome: str, reason: str, by: str,
               points: float | None = None) -> Answer:
        """Staff's answer to a request. :raises RefusedError: with the reason."""
        ...


def _html(body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers={"Content-Security-Policy": CSP})


def regrade_routes(source: Callable[[Request], RegradeSource | None],
                   refusal: Callable[[Request], Response | None],
                   nav: Callable[[Request], str]) -> list[Route]:
    """The routes; ``source`` the pages as a request's viewer may see them (None: no
    course file; a grader of an anonymous assignment sees its students by pseudonym),
    ``refusal`` why a request may not see staff pages (None: it may), ``nav`` the staff
    pages' navigation for a request."""
    form_key = secrets.token_bytes(32)

    def token(peer: Peer, request_id: int) -> str:
        return hmac.new(form_key, f"{peer.uid}:{request_id}".encode(),
                        hashlib.sha256).hexdigest()

    def allowed(request: Request) -> RegradeSource | Response:
        """The pages as the request's viewer may see them, or why none."""
        refused = refusal(request)
        staff = source(request) if refused is None else None
        return refused or staff or PlainTextResponse("no course file: no staff pages\n",
                                                     status_code=404)

    def queue(request: Request) -> Response:
        if isinstance(staff := allowed(request), Response):
            return staff
        q = request.query_params
        try:
            older = float(q["older"]) if q.get("older") else None
        except ValueError:
            return PlainTextResponse("older: a number of hours\n", status_code=400)
        data = staff.regrades(assignment=q.get("assignment", ""), target=q.get("group", ""),
                              status=q.get("status", "open"), older_h=older)
        if request.url.path.startswith("/api/"):
            return JSONResponse(data.to_json())
        return _html(regrade_pages.queue_page(data, list(staff.assignments()), nav(request)))

    def one(request: Request, done: str = "", why: str = "") -> Response:
        if isinstance(staff := allowed(request), Response):
            return staff
        rid = request.path_params["id"]
        found = staff.regrade(rid)
        if found is None:
            return PlainTextResponse(f"no regrade request {rid}\n", status_code=404)
        if request.url.path.startswith("/api/"):
            return JSONResponse(found.to_json())
        peer = peer_in(request.scope.get("state"))
        form = (f"/regrades/{rid}/answer", token(peer, rid)) if peer else None
        return _html(regrade_pages.request_page(found, nav(request), form=form, done=done,
                                                refused=why), 400 if why else 200)

    async def answer(request: Request) -> Response:
        peer = peer_in(request.scope.get("state"))
        if isinstance(staff := allowed(request), Response) or peer is None:
            return staff if isinstance(staff, Response) else \
                PlainTextResponse("", status_code=404)
        rid, host = request.path_params["id"], request.headers.get("host", "")
        origin = request.headers.get("origin")
        if origin and origin.split("://", 1)[-1] != host:
            return PlainTextResponse("an answer from another site's page is refused\n",
                                     status_code=403)
        form = await request.form()
        if not hmac.compare_digest(str(form.get("csrf", "")), token(peer, rid)):
            return PlainTextResponse("the form expired: answer again from its page\n",
                                     status_code=403)
        try:
            points = float(str(form["points"])) if form.get("points") else None
            a = staff.answer(rid, str(form.get("outcome", "")), str(form.get("reason", "")),
                             peer.user, points)
        except ValueError:
            return one(request, why="the points are a number")
        except RefusedError as e:
            return one(request, why=str(e))
        return one(request, done=f"Answered: {a.outcome}, {a.before:g} → {a.after:g} points.")

    return [Route("/regrades", queue), Route("/api/regrades", queue),
            Route("/regrades/{id:int}", one), Route("/api/regrades/{id:int}", one),
            Route("/regrades/{id:int}/answer", answer, methods=["POST"])]
