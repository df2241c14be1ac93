"""What the LTI tests share: the platform of ``tests/lti/platform`` and the tool, each
started as its own process, and a launch as a browser makes it (the OIDC login through
both, the form post of the platform's ``id_token``), up to the tool's answer."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import jwt
import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

HERE = Path(__file__).resolve().parent
VENV_BIN = Path(sys.executable).parent


def pem(key: rsa.RSAPrivateKey) -> tuple[str, str]:
    """(private, public) PEM of a key."""
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    return private, public.decode()


def wait(url: str, proc: subprocess.Popen[Any]) -> None:
    for _ in range(200):
        assert proc.poll() is None, f"{url}: its server ended"
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"{url} never answered")


def platform_cmd(port: int, issuer: str, config: Path) -> list[str]:
    return [sys.executable, str(HERE / "platform" / "lms_platform.py"), "--host", "127.0.0.1",
            "--port", str(port), "--issuer", issuer, "--config", str(config)]


def tool_cmd(registrations: Path, spool: Path, port: int) -> list[str]:
    return [str(VENV_BIN / "gradeline"), "lti", "serve", "--registrations", str(registrations),
            "--spool", str(spool), "--port", str(port), "--sync-every", "0"]


@contextmanager
def running(cmd: list[str], url: str, env: Mapping[str, str] | None = None,
            log: Path | None = None) -> Iterator[subprocess.Popen[Any]]:
    """``cmd`` started and answering at ``url``; its output goes to ``log`` (or is kept
    to be shown with a failure when it holds a traceback)."""
    out = log.open("w") if log else subprocess.PIPE
    proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
    try:
        wait(url, proc)
        yield proc
    finally:
        proc.terminate()
        text = proc.communicate(timeout=30)[0] or (log.read_text() if log else "")
        if log:
            out.close()  # type: ignore[union-attr]
        if "Traceback" in text:  # shown with a failure (pytest prints captured output)
            print(text[-4000:])


def state(platform: str) -> dict[str, Any]:
    """What the platform holds: its tools, links, line items, scores and log."""
    with urllib.request.urlopen(f"{platform}/api/state", timeout=30) as r:
        return json.loads(r.read())  # type: ignore[no-any-return]


def admin(platform: str, what: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """An LMS admin's change on the platform (``/admin/resource_links``, ...)."""
    req = urllib.request.Request(f"{platform}/admin/{what}", method="POST",
                                 data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())  # type: ignore[no-any-return]


def post(s: requests.Session, url: str, token: str, state: str) -> requests.Response:
    """The launch's form post, with the tool's cookies as a browser sends them (the
    tool's are Secure; Chromium keeps them over http on loopback, requests does not)."""
    cookie = "; ".join(f"{c.name}={c.value}" for c in s.cookies if c.domain == "127.0.0.1")
    return s.post(url, data={"id_token": token, "state": state}, headers={"Cookie": cookie},
                  timeout=60)


def login(platform: str, rl: str, user: str) -> tuple[requests.Session, requests.Response]:
    """A user's click on a resource link, through the OIDC login: the browser's session
    and the last answer (the platform's launch form, or the tool's refusal)."""
    s = requests.Session()
    r = s.get(f"{platform}/launch", params={"resource_link_id": rl, "user_id": user},
              timeout=30)
    return s, r


def id_token(platform: str, rl: str, user: str) -> tuple[requests.Session, str, str, str]:
    """A login up to the launch: (the browser's session, the tool's launch URL, the
    id_token the platform signed, its state)."""
    s, r = login(platform, rl, user)
    form = dict(re.findall(r'name="(\w+)" value="([^"]*)"', r.text))
    action = re.search(r'action="([^"]+)"', r.text)
    assert action and "id_token" in form, r.text[:500]
    return s, action.group(1), form["id_token"], form["state"]


def launch(platform: str, rl: str, user: str) -> requests.Response:
    """A whole launch: the tool's answer (its page after the redirect, or a refusal)."""
    return post(*id_token(platform, rl, user))


def why(html: str) -> list[str]:
    """What a refusal page says."""
    return re.findall(r'role="alert".*?<p>(.*?)</p>', html, re.S)


def resigned(token: str, key: rsa.RSAPrivateKey, **changes: object) -> str:
    """``token`` with ``changes`` to its claims, signed with ``key``."""
    header = jwt.get_unverified_header(token)
    body = {**jwt.decode(token, options={"verify_signature": False}), **changes}
    return jwt.encode(body, key, algorithm="RS256", headers={"kid": header.get("kid")})
