"""The grades sync against a second, independent LTI 1.3 platform: Open edX's own code
(``tests/lti/openedx/openedx_platform.py``, PyPI's lti-consumer-xblock in a venv of its own under
build/tools). Two registrations under the LMS's one issuer, each with its own keys and
token URL, in programmatic grading (the launch's AGS claim names no line item): one sync
gets a token from each, makes the tool's line item in each and posts there; a token of
one would be refused by the other ("Invalid token signature")."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography.hazmat.primitives import serialization

from grader.adapters.web.lti.registrations import key_files, load_registrations
from grader.adapters.web.lti.services import post_grades
from grader.adapters.web.lti.state import LtiState
from grader.course.lms_grades import Posting

from ..support import ROOT, free_port
from .world import running

pytestmark = pytest.mark.slow  # a platform of its own, and its venv made once
PLATFORM = Path(__file__).resolve().parent / "openedx" / "openedx_platform.py"
#: Open edX's LTI consumer (11.4.4: 2026) and what its token signing needs
PACKAGES = ("lti-consumer-xblock==11.4.4", "cryptography>=41")
CLIENTS = ("course-one", "course-two")


@pytest.fixture(scope="module")
def openedx_python() -> Path:
    """The Python of a venv holding Open edX's LTI consumer, under build/ (made once from
    PyPI; a test tool, never the project's)."""
    venv = ROOT / "build" / "tools" / "openedx"
    python, made = venv / "bin" / "python", venv / ".installed"
    if not made.exists() or made.read_text() != " ".join(PACKAGES):
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--clear", str(venv)], check=True)
        r = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *PACKAGES],
                           capture_output=True, text=True, timeout=1200)
        if r.returncode != 0:
            reason = f"pip install {' '.join(PACKAGES)} failed: {r.stderr[-500:]}"
            if os.environ.get("GRADELINE_REQUIRE_SANDBOX") == "1":  # make test
                pytest.fail(reason)
            pytest.skip(reason)
        made.write_text(" ".join(PACKAGES))
    return python


@pytest.fixture
def openedx(tmp_path: Path, openedx_python: Path) -> Iterator[tuple[str, Path]]:
    """(the platform's base URL, lti.yaml with both registrations) while it runs."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    passports = {c: str(uuid.uuid4()) for c in CLIENTS}
    lti = tmp_path / "lti.yaml"
    lti.write_text(yaml.safe_dump({
        "tool": {"base_url": "https://grading.example.edu/lti", "keys": "lti-keys"},
        "platforms": [{"issuer": base, "client_id": c, "deployment_ids": ["1"],
                       "auth_login_url": f"{base}/api/lti_consumer/v1/launch/",
                       "auth_token_url": f"{base}/api/lti_consumer/v1/token/{passports[c]}",
                       "key_set_url": f"{base}/api/lti_consumer/v1/public_keysets/{passports[c]}",
                       "course_file": "course.yaml"} for c in CLIENTS]}))
    regs = load_registrations(lti)  # makes the tool's key, which the platform is given
    key = serialization.load_pem_private_key(key_files(regs.key_dir)[-1].read_bytes(), None)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    (tmp_path / "openedx.json").write_text(json.dumps({"passports": [
        {"client_id": c, "passport_id": passports[c], "tool_public_key": public}
        for c in CLIENTS]}))
    with running([str(openedx_python), str(PLATFORM), "--port", str(port), "--dir",
                  str(tmp_path), "--config", str(tmp_path / "openedx.json")], f"{base}/state",
                 log=tmp_path / "openedx.log"):
        yield base, lti


def _held(base: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{base}/state", timeout=30) as r:
        return json.loads(r.read())["lineitems"]  # type: ignore[no-any-return]


def test_two_registrations_of_one_issuer_each_post_with_their_own_token(
        openedx: tuple[str, Path], tmp_path: Path) -> None:
    base, lti = openedx
    endpoints = json.loads((tmp_path / "endpoints.json").read_text())
    state = LtiState(tmp_path / "state" / "lti")
    for c in CLIENTS:  # what a launch of each component records (launches need edX itself)
        key = f"{base}|{c}|1|course-v1:edX+DemoX+2026"
        state.remember_context(key, {"issuer": base, "client_id": c, "deployment_id": "1",
                                     "context_id": "course-v1:edX+DemoX+2026",
                                     "ags": endpoints[c]["ags"]})
        state.remember_link(key, "bigsum", endpoints[c]["resource_link"])
    assert all("lineitem" not in endpoints[c]["ags"] for c in CLIENTS)  # programmatic mode
    keys = {c["client_id"]: k for k, c in state.contexts().items()}
    report = post_grades(load_registrations(lti), state, [
        Posting(keys[c], "bigsum", "u-alice", given, 10.0, "FullyGraded", "Completed", None)
        for c, given in zip(CLIENTS, (7.0, 9.0), strict=True)])
    assert not report.failed and len(report.posted) == 2 and len(report.columns) == 2, report
    held = sorted(_held(base), key=lambda li: li["config"])
    assert [(li["config"], li["resourceId"], li["tag"], li["resourceLinkId"], li["scores"])
            for li in held] == [(c, "bigsum", "gradeline", endpoints[c]["resource_link"],
                                 {"u-alice": given})
                                for c, given in zip(CLIENTS, (7.0, 9.0), strict=True)]
