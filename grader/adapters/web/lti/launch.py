"""PyLTI1p3 on Starlette: the request, cookie, redirect and session pieces the library
asks of a web framework (it ships Flask and Django ones), for the two steps of a launch
that pass through the browser -- OIDC login initiation and the launch itself.

Between those two steps the library keeps the login's state and nonce in a session: a
server-side dict here, named by a cookie that works in an LMS's iframe (``SameSite=None;
Secure; Partitioned``: a third-party context keeps it, partitioned by the LMS's site)
and lives ten minutes. The nonce is made single-use (the library leaves it valid until
it expires, so a launch could be replayed in the same browser). After the launch the
tool's pages carry a signed token instead of any cookie (``app``).
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from pylti1p3.cookie import CookieService
from pylti1p3.message_launch import MessageLaunch
from pylti1p3.oidc_login import OIDCLogin
from pylti1p3.redirect import Redirect
from pylti1p3.request import Request
from pylti1p3.service_connector import ServiceConnector
from pylti1p3.session import SessionService
from pylti1p3.tool_config.dict import ToolConfDict
from starlette.responses import HTMLResponse, RedirectResponse, Response

from grader.course.lms_mapping import Roster, staff_account
from grader.course.load import Course

LIS_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/lis"
SESSION_COOKIE = "gradeline-lti"
SESSION_S = 600  # a login's state and nonce: the minutes between login and launch


class Sessions:
    """The login-to-launch sessions, in memory (a restart only asks for a new launch)."""

    def __init__(self) -> None:
        self._data: dict[str, tuple[float, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def get(self, sid: str | None) -> tuple[str, dict[str, Any]]:
        now = time.monotonic()
        with self._lock:
            for old in [k for k, (t, _) in self._data.items() if now - t > SESSION_S]:
                del self._data[old]
            if sid and sid in self._data:
                return sid, self._data[sid][1]
            sid = secrets.token_urlsafe(24)
            self._data[sid] = (now, {})
            return sid, self._data[sid][1]


class LtiRequest(Request):
    """One HTTP request as PyLTI1p3 reads it: parameters, cookies, its session."""

    def __init__(self, params: Mapping[str, str], cookies: Mapping[str, str],
                 sessions: Sessions, secure: bool) -> None:
        self.params, self.cookies, self.secure = dict(params), dict(cookies), secure
        self.sid, self._session = sessions.get(cookies.get(SESSION_COOKIE))

    @property
    def session(self) -> dict[str, Any]:
        return self._session

    def is_secure(self) -> bool:
        return self.secure

    def get_param(self, key: str) -> str:
        return self.params.get(key, "")

    def get_cookie(self, key: str) -> str | None:
        return self.cookies.get(key)


def set_cookie(resp: Response, name: str, value: str, max_age: int | None) -> None:
    """A cookie an LMS's iframe keeps (see the module docstring)."""
    resp.set_cookie(name, value, max_age=max_age, path="/", httponly=True, secure=True,
                    samesite="none")
    for i, (k, v) in enumerate(resp.raw_headers):  # Starlette has no Partitioned flag yet
        if k == b"set-cookie" and v.startswith(name.encode() + b"=") and b"Partitioned" not in v:
            resp.raw_headers[i] = (k, v + b"; Partitioned")


class Cookies(CookieService):
    """The cookies the library sets (its state), written on the response."""

    def __init__(self, request: LtiRequest) -> None:
        self._request = request
        self.to_set: dict[str, tuple[str, int | None]] = {}

    def _key(self, name: str) -> str:
        return f"{self._cookie_prefix}-{name}"

    def get_cookie(self, name: str) -> str | None:
        return self._request.get_cookie(self._key(name))

    def set_cookie(self, name: str, value: str | int, exp: int | None = 3600) -> None:
        self.to_set[self._key(name)] = (str(value), exp)


def finish(request: LtiRequest, resp: Response, cookies: Cookies | None = None) -> Response:
    set_cookie(resp, SESSION_COOKIE, request.sid, SESSION_S)
    for name, (value, exp) in (cookies.to_set.items() if cookies else ()):
        set_cookie(resp, name, value, exp)
    return resp


class LtiRedirect(Redirect[Response]):
    def __init__(self, location: str, request: LtiRequest, cookies: Cookies) -> None:
        self._location, self._request, self._cookies = location, request, cookies

    def do_redirect(self) -> Response:
        return finish(self._request, RedirectResponse(self._location, 302), self._cookies)

    def do_js_redirect(self) -> Response:
        return self.do_redirect()  # no script: a plain redirect works in every frame

    def set_redirect_url(self, location: str) -> None:
        self._location = location

    def get_redirect_url(self) -> str:
        return self._location


class Login(OIDCLogin[LtiRequest, ToolConfDict, SessionService, Cookies, Response]):
    """OIDC third-party login initiation: to the LMS's auth endpoint and back."""

    def __init__(self, request: LtiRequest, conf: ToolConfDict) -> None:
        self.cookies = Cookies(request)
        super().__init__(request, conf, session_service=SessionService(request),
                         cookie_service=self.cookies)

    def get_redirect(self, url: str) -> LtiRedirect:
        return LtiRedirect(url, self._request, self.cookies)

    def get_response(self, html: str) -> Response:
        return finish(self._request, HTMLResponse(html), self.cookies)


class CachingConnector(ServiceConnector):
    """Service tokens (client credentials) kept until they expire, per registration and
    scope set: several registrations share an issuer (a client id per course or per
    component, as Open edX and Moodle sites make them), and a token one of them was
    given is never sent with another's requests (the library keys by issuer and
    scopes alone)."""

    _tokens: ClassVar[dict[str, tuple[str, float]]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def _scope_key(self, scopes: Iterable[str]) -> str:
        r = self._registration
        return json.dumps([r.get_issuer(), r.get_client_id(), r.get_auth_token_url(),
                           r.get_auth_audience(), sorted(scopes)])

    def _get_cached_access_token(self, scope_key: str) -> str | None:
        with self._lock:
            found = self._tokens.get(scope_key)
        return found[0] if found and found[1] > time.time() + 10 else None

    def _cache_access_token(self, scope_key: str, access_token: str, expires_in: float) -> None:
        with self._lock:
            self._tokens[scope_key] = (access_token, time.time() + float(expires_in or 0))


class Launch(MessageLaunch[LtiRequest, ToolConfDict, SessionService, Cookies]):
    """A message launch checked by the library: the id_token's signature against the
    LMS's JWKS, issuer, audience (client id), deployment, expiry, nonce and state."""

    def __init__(self, request: LtiRequest, conf: ToolConfDict) -> None:
        self.cookies = Cookies(request)
        super().__init__(request, conf, session_service=SessionService(request),
                         cookie_service=self.cookies, service_connector_cls=CachingConnector)

    def _get_request_param(self, key: str) -> str:
        return self._request.get_param(key)

    def claimed(self) -> Mapping[str, Any]:
        """The id_token's claims as sent, not checked: only to name in a refusal whom the
        LMS claims to be (empty when the token could not be read)."""
        body = self._jwt.get("body")
        return body if isinstance(body, dict) else {}

    def validate_nonce(self) -> Launch:
        """As the library does, then the nonce is spent: an id_token launches once."""
        super().validate_nonce()
        nonce = self._get_jwt_body().get("nonce")
        self._request.session.pop(self._session_service._get_key("nonce", nonce), None)
        return self


def _ids(claims: Mapping[str, Any]) -> tuple[str, str, str]:
    """(LMS user id, email, SIS id) of a launch's claims."""
    return (str(claims.get("sub", "")), str(claims.get("email") or ""),
            str((claims.get(LIS_CLAIM) or {}).get("person_sourcedid") or ""))


def match_student(course: Course, claims: Mapping[str, Any]) -> tuple[str | None, str]:
    """(the roster's student a launch names, or None; why not): by LMS user id, then
    email, then SIS id (``course.lms_mapping.Roster.member``)."""
    return Roster(course.students).member(*_ids(claims))


def staff_of(course: Course, claims: Mapping[str, Any]) -> str:
    """Who a staff launch is: the account ``staff: lms`` names for it (their grading
    queue, their name on the grades they save), else their LMS user id."""
    return staff_account(course.staff.lms, *_ids(claims)) or str(claims.get("sub", ""))
