"""Tiny stdlib-only WSGI helpers of the test platform.

No framework: a request object built from the environ, a response object,
a regex router and a *threaded* wsgiref server (threading is required: the
platform calls the tool's JWKS URL while the tool is blocked waiting on the
platform's token endpoint, so single-threaded servers deadlock).
"""

from __future__ import annotations

import html
import json
import re
import socketserver
import sys
import typing as t
from http.cookies import SimpleCookie
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

STATUS_TEXT = {
    200: "OK",
    201: "Created",
    202: "Accepted",
    204: "No Content",
    302: "Found",
    303: "See Other",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    500: "Internal Server Error",
}


class Req:
    def __init__(self, environ: dict):
        self.environ = environ
        self.method = environ.get("REQUEST_METHOD", "GET").upper()
        self.path = environ.get("PATH_INFO", "/") or "/"
        self.query = {
            k: v[-1]
            for k, v in parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True).items()
        }
        self.content_type = environ.get("CONTENT_TYPE", "") or ""
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        self.body = environ["wsgi.input"].read(length) if length > 0 else b""
        self.form: dict[str, str] = {}
        self.json: t.Any = None
        if self.body and "application/x-www-form-urlencoded" in self.content_type:
            self.form = {
                k: v[-1]
                for k, v in parse_qs(self.body.decode("utf-8"), keep_blank_values=True).items()
            }
        elif self.body and "json" in self.content_type:
            self.json = json.loads(self.body.decode("utf-8"))
        cookie = SimpleCookie()
        cookie.load(environ.get("HTTP_COOKIE", ""))
        self.cookies = {k: m.value for k, m in cookie.items()}
        self.headers = {
            k[5:].replace("_", "-").title(): v for k, v in environ.items() if k.startswith("HTTP_")
        }
        if self.content_type:
            self.headers["Content-Type"] = self.content_type
        self.scheme = environ.get("wsgi.url_scheme", "http")

    def param(self, key: str) -> str | None:
        return (
            self.query.get(key) if self.method == "GET" else self.form.get(key, self.query.get(key))
        )


class Resp:
    def __init__(
        self,
        body: str | bytes = b"",
        status: int = 200,
        content_type: str = "text/html; charset=utf-8",
        headers: list | None = None,
    ):
        self.body = body.encode("utf-8") if isinstance(body, str) else body
        self.status = status
        self.headers = [("Content-Type", content_type), *list(headers or [])]

    @classmethod
    def json(
        cls, data: t.Any, status: int = 200, content_type: str = "application/json", headers=None
    ) -> Resp:
        return cls(json.dumps(data, indent=1, default=str), status, content_type, headers)

    @classmethod
    def redirect(cls, url: str, status: int = 302) -> Resp:
        return cls(b"", status, "text/plain", [("Location", url)])

    def set_cookie(
        self,
        name: str,
        value: str,
        *,
        max_age: int | None = None,
        path: str = "/",
        httponly: bool = True,
        secure: bool = False,
        samesite: str | None = None,
        partitioned: bool = False,
    ) -> None:
        parts = [f"{name}={value}", f"Path={path}"]
        if max_age is not None:
            parts.append(f"Max-Age={int(max_age)}")
        if httponly:
            parts.append("HttpOnly")
        if secure:
            parts.append("Secure")
        if samesite:
            parts.append(f"SameSite={samesite}")
        if partitioned:
            parts.append("Partitioned")
        self.headers.append(("Set-Cookie", "; ".join(parts)))

    def __call__(self, start_response):
        start_response(
            f"{self.status} {STATUS_TEXT.get(self.status, 'Status')}",
            [*self.headers, ("Content-Length", str(len(self.body)))],
        )
        return [self.body]


class Router:
    def __init__(self):
        self.routes: list[tuple[re.Pattern, set[str], t.Callable]] = []

    def route(self, pattern: str, methods: t.Iterable[str] = ("GET",)):
        def deco(fn):
            self.routes.append((re.compile("^" + pattern + "$"), set(methods), fn))
            return fn

        return deco

    def wsgi(self, environ, start_response):
        req = Req(environ)
        for rx, methods, fn in self.routes:
            m = rx.match(req.path)
            if m:
                if req.method not in methods:
                    return Resp.json({"error": "method not allowed"}, 405)(start_response)
                try:
                    resp = fn(req, **m.groupdict())
                except Exception as exc:  # noqa: BLE001 -- surfaced to the test driver
                    import traceback

                    traceback.print_exc()
                    resp = Resp.json({"error": type(exc).__name__, "detail": str(exc)}, 500)
                return resp(start_response)
        return Resp.json({"error": "not found", "path": req.path}, 404)(start_response)


def esc(v: t.Any) -> str:
    return html.escape(str(v), quote=True)


def autosubmit_form(action: str, fields: dict[str, str], form_id: str = "autosubmit") -> str:
    inputs = "".join(
        f'<input type="hidden" name="{esc(k)}" value="{esc(v)}"/>' for k, v in fields.items()
    )
    return (
        f'<!doctype html><html><body><form id="{form_id}" method="POST" '
        f'action="{esc(action)}">{inputs}'
        f'<noscript><button type="submit">Continue</button></noscript></form>'
        f'<script>document.getElementById("{form_id}").submit();</script></body></html>'
    )


class ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class QuietHandler(WSGIRequestHandler):
    def log_message(self, fmt, *args):
        if "-v" in sys.argv:
            super().log_message(fmt, *args)


def load_config(path: str) -> dict:
    """JSON config with ${PLATFORM_URL} / ${TOOL_URL} placeholders (env vars, defaults below)."""
    import os
    from string import Template

    env = {
        "PLATFORM_URL": "http://127.0.0.1:9001",
        "TOOL_URL": "http://127.0.0.1:9002",
        **os.environ,
    }
    return json.loads(Template(open(path).read()).safe_substitute(env))


def serve(app, host: str, port: int):
    httpd = make_server(
        host, port, app, server_class=ThreadingWSGIServer, handler_class=QuietHandler
    )
    print(f"listening on http://{host}:{port}", flush=True)
    httpd.serve_forever()
