"""gradeline's Open OnDemand app: a WSGI app that Passenger runs as the portal's
logged-in user, so every request it makes is that user's own -- to the course's desk
(the student's view and hand-in: the desk names the user by the kernel's word) and to
the course's staff socket (the staff pages, for the course's staff only). The portal's
campus login becomes gradeline's identity with nothing to configure, and the app holds
no secret and no grade of its own.

Routes, under the app's base URI (``SCRIPT_NAME``, e.g. ``/pun/sys/gradeline``):
``/`` the user's courses; ``/c/COURSE/`` their page with the hand-in form (and, where the
course has them, the team and regrade-request forms); ``POST /c/COURSE/hand-in``,
``POST /c/COURSE/team``, ``POST /c/COURSE/ask``; ``/c/COURSE/staff/PATH`` the staff
pages, and ``POST`` there a staff page's form (grading by hand, a regrade's answer),
passed on to the staff socket as this user. A form carries a token made for this user
(and course: the student's forms; the staff server's: a staff page's), so another
site's page cannot submit one, and a request from another origin is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote, unquote_plus
from wsgiref.types import WSGIEnvironment

import yaml
from python_multipart import parse_form
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import Field, File

from grader.adapters import desk_client
from grader.adapters.desk_client import DeskRefusal
from grader.adapters.web.design import CSP, esc, layout, message_page, rebase
from grader.adapters.web.ondemand.staff_socket import staff_get, staff_request
from grader.adapters.web.student import (
    Actions,
    handin_page,
    measuring_said,
    request_said,
    team_said,
)
from grader.core.errors import ConfigError, GradelineError, RefusedError
from grader.core.upload import MAX_UPLOAD_BYTES, form_length_refusal
from grader.course.shown import Receipt

StartResponse = Callable[[str, list[tuple[str, str]]], object]
#: same-origin: the browser names this page's origin on its own form's post (with
#: no-referrer it would say "null"), and tells no other site where the reader was
HEADERS = [("Cache-Control", "no-store"), ("Referrer-Policy", "same-origin"),
           ("X-Frame-Options", "SAMEORIGIN"), ("Content-Security-Policy", CSP)]


@dataclass(frozen=True, slots=True)
class CourseDoors:
    """Where one course answers: its desk, and its staff pages (if the site has them)."""

    name: str
    desk: Path
    staff: Path | None = None


def load_site(path: Path) -> tuple[str, dict[str, CourseDoors]]:
    """The site's one file (``gradeline-ondemand.yaml``): a title and the courses.

    :raises ConfigError: naming what is missing.
    """
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise ConfigError(f"{path}: cannot read the app's configuration: {e}") from None
    courses = {}
    for i, c in enumerate(data.get("courses") or []):
        if not isinstance(c, dict) or not c.get("name") or not c.get("desk"):
            raise ConfigError(f"{path}: courses[{i}] needs a name and a desk (its socket)")
        courses[str(c["name"])] = CourseDoors(str(c["name"]), Path(c["desk"]),
                                              Path(c["staff"]) if c.get("staff") else None)
    if not courses:
        raise ConfigError(f"{path}: lists no course")
    return str(data.get("title") or "Grading"), courses


HTML = "text/html; charset=utf-8"


class Reply(NamedTuple):
    """A response: its status, body and type (and where a redirect goes)."""

    status: int
    body: str
    ctype: str = HTML
    location: str = ""


class App:
    """The WSGI app (``__call__``) over the site's courses."""

    def __init__(self, title: str, courses: Mapping[str, CourseDoors],
                 key: bytes | None = None) -> None:
        self.title, self.courses = title, dict(courses)
        self.key = key or form_key()

    def _csrf(self, course: str) -> str:
        return hmac.new(self.key, f"{os.getuid()}:{course}".encode(), hashlib.sha256).hexdigest()

    def __call__(self, environ: WSGIEnvironment, start: StartResponse) -> Iterable[bytes]:
        base, path = app_paths(environ)
        try:
            status, body, ctype, location = self._route(environ, base, path)
        except GradelineError as e:
            status, body, ctype, location = 502, message_page("Not available", str(e)), \
                HTML, ""
        data = body.encode()
        where = [("Location", location)] if location else []
        start(f"{status} {HTTPStatus(status).phrase}",
              [("Content-Type", ctype), ("Content-Length", str(len(data))), *where, *HEADERS])
        return [data]

    def _route(self, environ: WSGIEnvironment, base: str, path: str) -> Reply:
        parts = path.strip("/").split("/")
        if path in ("", "/"):
            return Reply(200, self._home(base))
        if parts[0] != "c" or len(parts) < 2 or parts[1] not in self.courses:
            return Reply(404, message_page("Not here", "No such page.", kind="info"))
        course = self.courses[parts[1]]
        here = f"{base}/c/{quote(course.name)}"
        # PATH_INFO comes decoded: quoted again, "/" inside a name stays a name
        staff = "/" + "/".join(quote(p, safe="") for p in parts[3:])
        if len(parts) >= 3 and environ["REQUEST_METHOD"] == "POST":
            what = "A hand-in" if parts[2] == "hand-in" else "A form"
            if (refused := _foreign(environ, what)) is not None:
                return refused
            if parts[2] == "hand-in":
                return self._hand_in(environ, course, here)
            if parts[2] in ("team", "ask", "measure"):
                return self._change(environ, course, here, parts[2])
            if parts[2] == "staff":
                return self._staff_post(environ, course, staff)
        if len(parts) >= 3 and parts[2] == "staff":
            query = environ.get("QUERY_STRING", "")
            return self._staff(course, staff + (f"?{query}" if query else ""), here)
        return Reply(200, self._student(course, here))

    def _home(self, base: str) -> str:
        items = []
        for c in self.courses.values():
            staff = c.staff is not None and staff_get(c.staff, "/api/access")[0] == 200
            link = f"<a href='{esc(base)}/c/{quote(c.name)}/'>{esc(c.name)}</a>"
            extra = f" (<a href='{esc(base)}/c/{quote(c.name)}/staff/'>staff pages</a>)" \
                if staff else ""
            items.append(f"<li>{link}{extra}</li>")
        return layout(self.title, f"<ul>{''.join(items)}</ul>", site_href=f"{base}/")

    def _student(self, course: CourseDoors, here: str, receipt: Receipt | None = None,
                 error: str | None = None, done: str = "", refused: str = "") -> str:
        try:
            view = desk_client.mine(course.desk)
        except DeskRefusal as e:
            return message_page(course.name, str(e))
        token = self._csrf(course.name)
        return handin_page(view, [a.name for a in view.assignments],
                           action=f"{here}/hand-in", csrf_token=token,
                           max_mib=MAX_UPLOAD_BYTES >> 20, receipt=receipt, error=error,
                           results=True, done=done, refused=refused,
                           actions=Actions(f"{here}/team", f"{here}/ask", token,
                                           f"{here}/measure"))

    def _form(self, environ: WSGIEnvironment, course: CourseDoors, here: str
              ) -> dict[str, str] | Reply:
        """A posted form's fields, or the page that refuses it (its token is not this
        user's for this course, or it is no form)."""
        with tempfile.TemporaryDirectory(prefix="gradeline-ood-") as tmp:
            try:
                fields, _ = read_form(environ, Path(tmp))
            except RefusedError as e:
                return Reply(400, self._student(course, here, refused=str(e)))
        if not hmac.compare_digest(fields.get("csrf", ""), self._csrf(course.name)):
            return Reply(403, self._student(course, here, refused="the form expired: send it "
                                                                  "again from this page"))
        return fields

    def _change(self, environ: WSGIEnvironment, course: CourseDoors, here: str, what: str
                ) -> Reply:
        """A team's change, a regrade request or a measurement on demand, through the
        desk (as this user)."""
        fields = self._form(environ, course, here)
        if isinstance(fields, Reply):
            return fields
        a = fields.get("assignment", "")
        try:
            if what == "team":
                team = desk_client.team(course.desk, a, fields.get("action", ""),
                                        fields.get("value"))
                done = team_said(team, a)
            elif what == "measure":
                done = measuring_said(desk_client.measure(course.desk, a))
            else:
                r = desk_client.ask_regrade(course.desk, a, fields.get("group", ""),
                                            fields.get("reason", ""),
                                            fields.get("submission") or None)
                done = request_said(r)
        except DeskRefusal as e:
            return Reply(400, self._student(course, here, refused=str(e)))
        return Reply(200, self._student(course, here, done=done))

    def _hand_in(self, environ: WSGIEnvironment, course: CourseDoors, here: str) -> Reply:
        with tempfile.TemporaryDirectory(prefix="gradeline-ood-") as tmp:
            try:
                fields, file = read_form(environ, Path(tmp))
            except RefusedError as e:
                return Reply(400, self._student(course, here, error=str(e)))
            if not hmac.compare_digest(fields.get("csrf", ""), self._csrf(course.name)):
                return Reply(403, self._student(course, here, error="the form expired: hand "
                                                "in again from this page"))
            if file is None:
                return Reply(400, self._student(course, here, error="choose a file to hand in"))
            try:
                receipt = desk_client.hand_in(course.desk, fields.get("assignment", ""),
                                              file[0], name=file[1])
            except DeskRefusal as e:
                return Reply(400, self._student(course, here, error=str(e)))
        return Reply(200, self._student(course, here, receipt=receipt))

    def _staff_post(self, environ: WSGIEnvironment, course: CourseDoors, path: str) -> Reply:
        """A grading form, passed on to the staff socket as this user (the staff server
        checks its token, made for this user); its answer passed back, a redirect as it
        is (relative: it stays under the app)."""
        if (refused := _foreign(environ)) is not None or course.staff is None:
            return refused or Reply(404, message_page("Not here", "No staff pages here.",
                                                      kind="info"))
        length = str(environ.get("CONTENT_LENGTH") or "")
        if not length.isdecimal() or int(length) > MAX_STAFF_FORM:
            return Reply(413, message_page("Refused", "A grading form says its size, at "
                                                      f"most {MAX_STAFF_FORM} bytes."))
        body = environ["wsgi.input"].read(int(length))
        status, ctype, text, location = staff_request(
            course.staff, "POST", path, body, str(environ.get("CONTENT_TYPE", "")))
        if status not in (200, 303, 400, 409):  # the server's reason, in plain text
            return Reply(status, message_page("Not saved", text))
        here = f"{app_paths(environ)[0]}/c/{quote(course.name)}/staff"
        return Reply(status, rebase(text, here) if ctype.startswith("text/html") else text,
                     ctype or HTML, location)

    def _staff(self, course: CourseDoors, path: str, here: str) -> Reply:
        if course.staff is None:
            return Reply(404, message_page("Not here", "This course has no staff pages here.",
                                           kind="info"))
        status, ctype, body = staff_get(course.staff, path)
        if status != 200:  # the server's reason, in plain text
            return Reply(status, message_page("Not for you", body))
        return Reply(200, rebase(body, f"{here}/staff") if ctype.startswith("text/html")
                     else body, ctype)


MAX_STAFF_FORM = 256 << 10  # a grading form is a few KiB


def _foreign(environ: WSGIEnvironment, what: str = "A form") -> Reply | None:
    """A refusal for a post from another site's page (its Origin is not this host)."""
    origin = environ.get("HTTP_ORIGIN")
    host = environ.get("HTTP_X_FORWARDED_HOST") or environ.get("HTTP_HOST", "")
    if origin and origin.split("://", 1)[-1] != host:
        return Reply(403, message_page("Refused", f"{what} from another site's page is "
                                                  "refused."))
    return None


#: where OnDemand serves an app: a system app, a developer's sandbox, a shared one
_OOD_BASE = re.compile(r"^/pun/(?:sys/[^/]+|dev/[^/]+|usr/[^/]+/[^/]+)")


def app_paths(environ: WSGIEnvironment) -> tuple[str, str]:
    """(the app's base URI, the path under it). OnDemand's nginx sets SCRIPT_NAME (its
    passenger_base_uri); Passenger standalone has no base URI, so the app finds its
    own in the path, by OnDemand's URL layout."""
    base = str(environ.get("SCRIPT_NAME", "")).rstrip("/")
    path = str(environ.get("PATH_INFO", "/")) or "/"
    if not base and (m := _OOD_BASE.match(path)):
        base, path = m.group(0), path[m.end():] or "/"
    return base, path


def read_form(environ: WSGIEnvironment, into: Path
              ) -> tuple[dict[str, str], tuple[Path, str] | None]:
    """A form's fields (multipart, or urlencoded: the team and regrade forms) and its
    file: (where it was written under ``into``, the name the browser gave, which the desk
    judges), within the hand-in's size.

    :raises RefusedError: for a body over the limit, of unknown size or not a form.
    """
    length = str(environ.get("CONTENT_LENGTH") or "")
    if (why := form_length_refusal(length)) is not None:
        raise RefusedError(why)
    fields: dict[str, str] = {}
    saved: list[tuple[Path, str]] = []
    # an urlencoded form's names and values come as sent: %-escaped, "+" for a space
    plain = str(environ.get("CONTENT_TYPE", "")).startswith("application/x-www-form-urlencoded")

    def on_field(f: Field) -> None:
        name, value = (f.field_name or b"").decode(errors="replace"), \
            (f.value or b"").decode(errors="replace")
        fields[unquote_plus(name) if plain else name] = unquote_plus(value) if plain else value

    def on_file(f: File) -> None:
        name = Path((f.file_name or b"").decode(errors="replace")).name
        if not name:
            return
        f.file_object.seek(0)
        target = into / f"upload-{len(saved)}"  # never the browser's name: ".." is one
        target.write_bytes(f.file_object.read())
        saved.append((target, name))

    headers = {"Content-Type": str(environ.get("CONTENT_TYPE", "")).encode(),
               "Content-Length": str(length).encode()}
    try:
        parse_form(headers, environ["wsgi.input"], on_field, on_file)
    except FormParserError as e:
        raise RefusedError(f"not a hand-in form ({e})") from None
    return fields, saved[0] if saved else None


def form_key() -> bytes:
    """The user's key for form tokens, kept in their own ``~/.config`` (0600) so every
    process Passenger starts for them agrees; a fresh one per process if the home
    directory cannot hold it (a form then lives as long as its process)."""
    path = Path.home() / ".config" / "gradeline" / "ondemand-form.key"
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    except OSError:
        return secrets.token_bytes(32)
    key = secrets.token_bytes(32)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".key-") as tmp:
            tmp.write(key)  # created 0600
            tmp.flush()
            os.link(tmp.name, path)  # whole or not at all; the first process's wins
        return key
    except FileExistsError:
        return path.read_bytes()
    except OSError:
        return key


def application_from(config: Path) -> App:
    """The app for a site's configuration file (what ``passenger_wsgi.py`` calls)."""
    return App(*load_site(config))
