"""The LTI tool's web routes: OIDC login, the launch, deep linking, and the pages a
launch opens -- a student's own results and hand-in form, or, for instructors and TAs
(roles from the launch), the course's staff pages.

After a launch, who the user is and for which course lives in a token signed by the
tool (``core.signing``), carried in every link and form of the pages, an hour long:
it needs no cookie, so it works in an LMS's iframe where third-party cookies are
blocked, and a request from another site cannot carry it (nothing to forge a form
with). A launch's user is matched to the course's roster by the LMS's user id
(``lms_id``), the email or the SIS id; one who matches nobody is refused with the
reason. What a student sees and hands in goes through the same views as the desk's.
"""

from __future__ import annotations

import logging
import re
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote, unquote

from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.exception import LtiException, OIDCException, ToolConfException
from pylti1p3.lineitem import LineItem
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from grader.adapters.web.design import CSP
from grader.adapters.web.lti import pages
from grader.adapters.web.lti.launch import (
    Launch,
    Login,
    LtiRequest,
    Sessions,
    finish,
    match_student,
    staff_of,
)
from grader.adapters.web.lti.registrations import Registrations
from grader.adapters.web.lti.services import is_staff_role
from grader.adapters.web.lti.state import LtiState
from grader.core.errors import GradelineError, RefusedError
from grader.core.signing import open_token, token
from grader.core.upload import MAX_UPLOAD_BYTES as MAX_BODY
from grader.core.upload import Upload, form_length_refusal
from grader.course.load import Course
from grader.course.shown import Receipt, StudentView

C = "https://purl.imsglobal.org/spec/lti/claim/"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
SESSION = timedelta(hours=1)
NO_STORE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
#: the pages in the shared design: its stylesheet and nothing else (not the deep link's
#: reply, whose form the platform's own script posts on)
PAGE = {**NO_STORE, "Content-Security-Policy": CSP}
EVALUATIONS = re.compile(r"a/([^/]+)/grade/evaluations\.csv")


def _csv(filename: str, text: str) -> Response:
    """A download: the CSV as its file, never cached."""
    return Response(text, media_type="text/csv; charset=utf-8", headers={
        **NO_STORE, "Content-Disposition": f'attachment; filename="{quote(filename)}"'})
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Who:
    """The user a page token names: for which course, as whom, in which role."""

    course_file: str
    user: str  # the roster's student id, or the LMS's user id of staff
    staff: bool
    context: str  # the state's key of the LMS course
    assignment: str  # the launch's assignment ("" for none)
    instructor: bool = False  # an instructor of the course, not a TA (reveals names)


class CourseSide(Protocol):
    """What the tool asks of a course (the composition wires the desk and staff views)."""

    def course(self, course_file: str) -> Course: ...
    def view(self, course_file: str, student: str) -> StudentView: ...
    def hand_in(self, course_file: str, student: str, assignment: str, name: str,
                body: Upload) -> Receipt: ...
    def staff_page(self, course_file: str, path: str, base: str, user: str = "",
                   instructor: bool = False) -> str | None: ...
    def staff_post(self, course_file: str, path: str, fields: Mapping[str, list[str]],
                   base: str, user: str, instructor: bool) -> tuple[int, str, str]: ...
    def max_points(self, course_file: str, assignment: str) -> float: ...
    def evaluations(self, course_file: str, assignment: str, user: str, instructor: bool
                    ) -> str | None:
        """The assignment's evaluations CSV as ``user`` may see it (None: not graded
        by hand)."""
        ...
    def change(self, course_file: str, student: str, what: str, fields: Mapping[str, str]
               ) -> str:
        """A team's change (``what``: team), a regrade request (ask) or a measurement
        (measure), through the course's desk; what it did, in words.
        :raises RefusedError: with the reason."""
        ...


class Tool:
    """The routes (``app()``), with the tool's registrations, state and course side."""

    def __init__(self, regs: Registrations, state: LtiState, courses: CourseSide,
                 key: bytes, clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.regs, self.state, self.courses, self.key, self.clock = regs, state, courses, key, clock
        self.sessions = Sessions()
        self._launches: dict[str, tuple[float, Launch]] = {}  # deep linking, briefly
        self._lock = threading.Lock()

    # -- the two steps through the browser ----------------------------------------------
    async def _params(self, request: Request) -> dict[str, str]:
        out = dict(request.query_params)
        if request.method == "POST":
            form = await request.form()
            out.update({k: str(v) for k, v in form.items()})
        return out

    async def login(self, request: Request) -> Response:
        params = await self._params(request)
        target = params.get("target_link_uri", "")
        if not target.startswith(self.regs.base_url + "/"):
            return _refuse(f"target_link_uri {target!r} is not this tool's", 400)
        req = LtiRequest(params, request.cookies, self.sessions, secure=True)
        try:
            out: Response = await run_in_threadpool(
                lambda: Login(req, self.regs.conf).redirect(target))
        except (LtiException, OIDCException) as e:
            return _refuse(f"login refused: {e}")
        except ToolConfException:  # an issuer or client id lti.yaml does not list
            return _refuse(self.regs.unknown(params.get("iss", ""), params.get("client_id", ""),
                                             params.get("lti_deployment_id", "")))
        return out

    async def launch(self, request: Request) -> Response:
        req = LtiRequest(await self._params(request), request.cookies, self.sessions, True)
        launch = Launch(req, self.regs.conf)
        try:
            data = await run_in_threadpool(launch.get_launch_data)
        except LtiException as e:  # a forged, replayed, expired or unknown launch
            return finish(req, _refuse(f"launch refused: {e}"))
        except ToolConfException:  # an issuer or audience (client id) lti.yaml lacks
            said = launch.claimed()
            return finish(req, _refuse(self.regs.unknown(
                str(said.get("iss", "")), _aud(said), str(said.get(C + "deployment_id", "")))))
        try:  # in a thread: it reads the course file and writes the tool's state
            return finish(req, await run_in_threadpool(self._opened, launch, data))
        except RefusedError as e:
            return finish(req, _refuse(str(e)))
        except GradelineError as e:  # the course file does not load, say
            return finish(req, _refuse(f"gradeline cannot open this course: {e} (staff: "
                                       "gradeline course check --course-file FILE says more)"))

    def _opened(self, launch: Launch, data: Mapping[str, Any]) -> Response:
        platform = self.regs.platform(data["iss"], _aud(data))
        ctx_id = (data.get(C + "context") or {}).get("id", "")
        course_file = platform.course_for(ctx_id)
        if course_file is None:
            raise RefusedError(f"this LMS course ({ctx_id}) is not set up in gradeline: staff "
                               "name its course file in lti.yaml")
        course = self.courses.course(str(course_file))
        key = "|".join((data["iss"], _aud(data), data.get(C + "deployment_id", ""), ctx_id))
        self.state.remember_context(key, {
            "issuer": data["iss"], "client_id": _aud(data), "context_id": ctx_id,
            "deployment_id": data.get(C + "deployment_id", ""), "course_file": str(course_file),
            **({"ags": data[AGS_CLAIM]} if AGS_CLAIM in data else {}),
            **({"nrps": data[NRPS_CLAIM]} if NRPS_CLAIM in data else {})})
        staff = is_staff_role(data.get(C + "roles") or [], course.lms.staff_roles)
        assignment = str((data.get(C + "custom") or {}).get("assignment", ""))
        if assignment and (data.get(AGS_CLAIM) or {}).get("lineitem"):
            self.state.remember_lineitem(key, assignment, data[AGS_CLAIM]["lineitem"])
        elif assignment in course.assignments and AGS_CLAIM in data:  # no column given:
            self.state.remember_link(  # the grades sync finds or makes the tool's own
                key, assignment, str((data.get(C + "resource_link") or {}).get("id", "")))
        if launch.is_deep_link_launch():
            if not staff:
                raise RefusedError("only an instructor adds gradeline assignments to a course")
            lid, now = launch.get_launch_id(), time.monotonic()
            with self._lock:  # a picker left open past the session is forgotten
                for old in [k for k, (t, _) in self._launches.items()
                            if now - t > SESSION.total_seconds()]:
                    del self._launches[old]
                self._launches[lid] = (now, launch)
            t = self._token(Who(str(course_file), data["sub"], True, key, lid))
            return HTMLResponse(pages.picker(course, f"{self.regs.base_url}/deeplink/{t}"),
                                headers=NO_STORE)
        user, why = (staff_of(course, data), "") if staff else match_student(course, data)
        if user is None:
            raise RefusedError(
                f"{data.get('name') or data['sub']} ({data.get('email') or 'no email'}) is not "
                f"on the roster of course {course.name}: {why} (staff: gradeline lti roster, "
                "or add lms_id to the roster)")
        if not staff:
            self.state.remember_user(key, user, data["sub"])
        roles = data.get(C + "roles") or []
        t = self._token(Who(str(course_file), user, staff, key, assignment,
                            staff and is_staff_role(roles, ("Instructor", "Administrator"))))
        return RedirectResponse(f"{self.regs.base_url}/s/{t}/", 303)

    # -- deep linking -----------------------------------------------------------------------
    async def deeplink(self, request: Request) -> Response:
        try:
            who = self._who(request.path_params["t"])
        except RefusedError as e:
            return _refuse(f"{e}: add the assignment again from the LMS")
        if not who.staff:
            return _refuse("only an instructor adds gradeline assignments to a course")
        form = await request.form()
        name = str(form.get("assignment", ""))
        with self._lock:
            found = self._launches.pop(who.assignment, None)
        course = self.courses.course(who.course_file)
        if found is None or name not in course.assignments:
            return _refuse("this deep-linking choice expired or names no assignment: start "
                           "again from the LMS")
        launch = found[1]
        resource = (DeepLinkResource().set_url(f"{self.regs.base_url}/launch")
                    .set_title(name).set_custom_params({"assignment": name})
                    .set_lineitem(LineItem().set_score_maximum(
                        self.courses.max_points(who.course_file, name))
                                  .set_label(name).set_resource_id(name)
                                  .set_tag("gradeline")))
        html = await run_in_threadpool(lambda: launch.get_deep_link()
                                       .output_response_form([resource]))
        return HTMLResponse(html, headers=NO_STORE)

    # -- the pages a launch opens -----------------------------------------------------------
    def _token(self, who: Who) -> str:
        expires = (self.clock() + SESSION).replace(microsecond=0).isoformat()
        return token(self.key, {"c": who.course_file, "u": who.user, "s": who.staff,
                                "x": who.context, "a": who.assignment, "i": who.instructor,
                                "expires": expires})

    def _who(self, text: str) -> Who:
        f = open_token(self.key, text, self.clock())
        return Who(str(f["c"]), str(f["u"]), bool(f["s"]), str(f["x"]), str(f["a"]),
                   bool(f.get("i", False)))

    async def home(self, request: Request) -> Response:
        t = request.path_params["t"]
        try:
            who = self._who(t)
        except RefusedError as e:
            return _refuse(f"{e}: launch again from the LMS")
        base = f"{self.regs.base_url}/s/{quote(t)}"
        if who.staff:
            path = request.path_params.get("rest", "") or \
                (f"a/{quote(who.assignment)}" if who.assignment else "")  # the launch's
            if m := EVALUATIONS.fullmatch(path):  # the grading page's export
                name = unquote(m[1])
                text = await run_in_threadpool(self.courses.evaluations, who.course_file,
                                               name, who.user, who.instructor)
                return _refuse(f"no assignment graded by hand called {name}", 404) \
                    if text is None else _csv(f"{name}-evaluations.csv", text)
            query = "?saved=1" if request.query_params.get("saved") else ""
            html = await run_in_threadpool(self.courses.staff_page, who.course_file,
                                           "/" + path + query, base, who.user,
                                           who.instructor)
            return HTMLResponse(html, headers=PAGE) if html is not None else \
                _refuse(f"no page {path}", 404)
        view = await run_in_threadpool(self.courses.view, who.course_file, who.user)
        course = await run_in_threadpool(self.courses.course, who.course_file)
        return HTMLResponse(pages.student(view, course, base, who.assignment, token=t),
                            headers=PAGE)

    async def change(self, request: Request) -> Response:
        """A student's team change, regrade request or measurement on demand, from their
        page's form."""
        t = request.path_params["t"]
        try:
            who = self._who(t)
        except RefusedError as e:
            return _refuse(f"{e}: launch again from the LMS")
        if who.staff:
            return _refuse("staff change teams, ask for regrades and measurements from a "
                           "student's account")
        form = await request.form()
        fields = {k: str(v) for k, v in form.items() if isinstance(v, str)}
        what = request.url.path.rstrip("/").rsplit("/", 1)[-1]
        try:
            done, refused = await run_in_threadpool(
                self.courses.change, who.course_file, who.user, what, fields), ""
        except (RefusedError, GradelineError) as e:
            done, refused = "", str(e)
        view = await run_in_threadpool(self.courses.view, who.course_file, who.user)
        course = await run_in_threadpool(self.courses.course, who.course_file)
        return HTMLResponse(pages.student(view, course, f"{self.regs.base_url}/s/{quote(t)}",
                                          fields.get("assignment") or who.assignment,
                                          token=t, done=done, refused=refused),
                            status_code=400 if refused else 200, headers=PAGE)

    async def staff_post(self, request: Request) -> Response:
        """A grading form (grading by hand) posted in an instructor's or TA's launch."""
        t = request.path_params["t"]
        try:
            who = self._who(t)
        except RefusedError as e:
            return _refuse(f"{e}: launch again from the LMS")
        origin = request.headers.get("origin")
        if not who.staff or (origin and origin != _origin(self.regs.base_url)):
            return _refuse("only the course's staff grade, from the tool's own pages")
        if (why := form_length_refusal(request.headers.get("content-length"))) is not None:
            return _refuse(why, 413)
        form = await request.form(max_files=0, max_fields=1000)
        fields: dict[str, list[str]] = {}
        for k, v in form.multi_items():
            if isinstance(v, str):
                fields.setdefault(k, []).append(v)
        base = f"{self.regs.base_url}/s/{quote(t)}"
        status, html, where = await run_in_threadpool(
            self.courses.staff_post, who.course_file, "/" + request.path_params["rest"],
            fields, base, who.user, who.instructor)
        if where:
            return RedirectResponse(where, status, headers=NO_STORE)
        return HTMLResponse(html, status_code=status, headers=PAGE)

    async def hand_in(self, request: Request) -> Response:
        try:
            who = self._who(request.path_params["t"])
        except RefusedError as e:
            return _refuse(f"{e}: launch again from the LMS")
        if who.staff:
            return _refuse("staff hand in as students do, from a student's account")
        if (why := form_length_refusal(request.headers.get("content-length"))) is not None:
            return _refuse(why, 413)  # before a byte of it is read or stored
        form = await request.form()
        upload, assignment = form.get("file"), str(form.get("assignment", ""))
        course = await run_in_threadpool(self.courses.course, who.course_file)
        try:
            if upload is None or isinstance(upload, str) or not upload.filename:
                raise RefusedError("choose a file to hand in")
            with tempfile.NamedTemporaryFile(prefix="lti-") as tmp:
                size = 0
                while chunk := await upload.read(1 << 16):
                    size += len(chunk)
                    if size > MAX_BODY:
                        raise RefusedError(f"{upload.filename} is larger than "
                                           f"{MAX_BODY >> 20} MiB")
                    tmp.write(chunk)
                tmp.flush()
                receipt = await run_in_threadpool(
                    self.courses.hand_in, who.course_file, who.user, assignment,
                    Path(upload.filename).name, Upload(Path(tmp.name), size))
            error = None
        except (RefusedError, GradelineError) as e:
            receipt, error = None, str(e)
        view = await run_in_threadpool(self.courses.view, who.course_file, who.user)
        t = request.path_params["t"]
        return HTMLResponse(pages.student(view, course, f"{self.regs.base_url}/s/{quote(t)}",
                                          assignment or who.assignment, token=t,
                                          receipt=receipt, error=error),
                            status_code=200 if error is None else 400, headers=PAGE)

    def jwks(self, _: Request) -> Response:
        return JSONResponse(self.regs.jwks())

    def app(self) -> Starlette:
        """The routes, under the tool's base URL's path."""
        return Starlette(routes=[
            Route("/jwks", self.jwks), Route("/login", self.login, methods=["GET", "POST"]),
            Route("/launch", self.launch, methods=["POST"]),
            Route("/deeplink/{t}", self.deeplink, methods=["POST"]),
            Route("/s/{t}/hand-in", self.hand_in, methods=["POST"]),
            Route("/s/{t}/team", self.change, methods=["POST"]),
            Route("/s/{t}/ask", self.change, methods=["POST"]),
            Route("/s/{t}/measure", self.change, methods=["POST"]),
            Route("/s/{t}/", self.home), Route("/s/{t}/{rest:path}", self.home),
            Route("/s/{t}/{rest:path}", self.staff_post, methods=["POST"])])


def _origin(url: str) -> str:
    """The origin (scheme://host[:port]) of a URL: what a browser sends as Origin."""
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


def _aud(data: Mapping[str, Any]) -> str:
    aud = data.get("aud")
    return str((aud or [""])[0] if isinstance(aud, list) else aud or "")


def _refuse(why: str, status: int = 403) -> Response:
    """The shared refusal page, and one line in the log saying why (no traceback)."""
    log.warning("LTI: refused (%d): %s", status, " ".join(why.split()))
    return HTMLResponse(pages.refusal(why), status_code=status, headers=NO_STORE)
