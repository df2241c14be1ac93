"""Several registrations of gradeline under one issuer, as Open edX and Moodle sites
make them (a client id per course or per component), against the LTI 1.3 platform of
``tests/lti/platform`` (its line items are each one tool's, as where every registration
has its own keys): each registration gets its own service token and both gradebooks
their scores in one sync; a link launched without a line item gets the tool's own,
found or made, asking only the scopes the launch offered; a login from a client id
lti.yaml lacks, a launch with a wrong audience or issuer get the refusal page saying
what to add (one log line, never a 500); and a course's staff roles decide whether an
Open edX "Community TA" sees every student's work or only their own page."""

from __future__ import annotations

import json
import os
import shutil
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography.hazmat.primitives.asymmetric import rsa

from grader.adapters.web.lti.registrations import load_registrations
from grader.adapters.web.lti.services import SyncReport, post_grades
from grader.adapters.web.lti.state import LtiState
from grader.course.lms_grades import Posting

from ..support import EXAMPLES, free_port
from . import world
from .world import admin, id_token, launch, login, pem, post, resigned, running, why

pytestmark = pytest.mark.slow  # a platform and the tool, each its own process
CTX = "course-101"
AGS = "https://purl.imsglobal.org/spec/lti-ags/scope/"
#: client id -> (deployment id, course file, how the platform lets it at line items)
TOOLS = {"gl-a": ("dep-a", "course.yaml", "full"), "gl-b": ("dep-b", "course-b.yaml", "full"),
         "gl-ro": ("dep-ro", "course.yaml", "readonly")}
NEW = "gl-new"  # registered in the LMS, not (yet) in lti.yaml


@dataclass
class Site:
    tmp: Path
    platform: str
    tool: str
    key: rsa.RSAPrivateKey
    log: Path

    def sync(self, *given: tuple[str, float], now: float | None = None) -> SyncReport:
        """One grades sync (``services.post_grades``), alice's score ``given`` out of 10
        in the LMS course of each client id named."""
        regs = load_registrations(self.tmp / "lti.yaml")
        st = LtiState(self.tmp / "state" / "lti")
        keys = {c["client_id"]: k for k, c in st.contexts().items()}
        return post_grades(regs, st, [Posting(keys[c], "bigsum", "u-alice", g, 10.0,
                                              "FullyGraded", "Completed", None)
                                      for c, g in given], now)

    def state(self) -> dict[str, Any]:
        return world.state(self.platform)

    def tokens(self) -> list[dict[str, Any]]:
        return [e for e in self.state()["log"] if e["event"] == "token_issued"]


def _course(tmp: Path) -> None:
    shutil.copytree(EXAMPLES / "bigsum", tmp / "bigsum")
    (tmp / "roster.csv").write_text("student,name,email,lms_id\n"
                                    "alice,Alice Learner,alice@example.edu,u-alice\n"
                                    "tom,Tom Moderator,tom@example.edu,u-tom\n")
    due = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%d %H:%M")
    course = {"course": "lticourse", "roster": "roster.csv", "assignments": [
        {"name": "bigsum", "package": "bigsum", "deadline": due}]}
    (tmp / "course.yaml").write_text(yaml.safe_dump(course))
    (tmp / "course-b.yaml").write_text(yaml.safe_dump(  # a course whose TAs are students
        {**course, "lms": {"staff_roles": ["Instructor", "Administrator"]}}))


@pytest.fixture
def site(tmp_path: Path, db: str) -> Iterator[Site]:
    pport, tport = free_port(), free_port()
    platform, tool = f"http://localhost:{pport}", f"http://127.0.0.1:{tport}/lti"
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private, public = pem(key)
    (tmp_path / "platform.pem").write_text(private)
    (tmp_path / "platform.pub").write_text(public)
    _course(tmp_path)
    (tmp_path / "lti.yaml").write_text(yaml.safe_dump({
        "tool": {"base_url": tool, "keys": "lti-keys"},
        "platforms": [{"issuer": platform, "client_id": c, "deployment_ids": [d],
                       "auth_login_url": f"{platform}/auth",
                       "auth_token_url": f"{platform}/token",
                       "key_set_url": f"{platform}/jwks", "course_file": str(tmp_path / f)}
                      for c, (d, f, _) in TOOLS.items()]}))
    tools = {**TOOLS, NEW: ("dep-new", "", "full")}
    (tmp_path / "platform.json").write_text(json.dumps({
        "platform_private_key_file": str(tmp_path / "platform.pem"),
        "platform_public_key_file": str(tmp_path / "platform.pub"),
        "tools": [{"client_id": c, "deployment_id": d, "lineitems": li,
                   "oidc_login_url": f"{tool}/login", "launch_url": f"{tool}/launch",
                   "key_set_url": f"{tool}/jwks"} for c, (d, _, li) in tools.items()],
        "course": {"context_id": CTX, "title": "Programming", "label": "CS101", "members": [
            {"user_id": "u-alice", "name": "Alice Learner", "email": "alice@example.edu",
             "roles": ["Learner"]},
            {"user_id": "u-tom", "name": "Tom Moderator", "email": "tom@example.edu",
             "roles": ["Learner", "TeachingAssistant"]}]},  # Open edX's Community TA
        "resource_links": [{"id": f"rl-{c}", "title": "bigsum", "client_id": c,
                            "custom": {"assignment": "bigsum"}} for c in tools]}))
    env = {**os.environ, "GRADELINE_DB_URL": db, "GRADELINE_STATE_DIR": str(tmp_path / "state")}
    s = Site(tmp_path, platform, tool, key, tmp_path / "tool.log")
    with ExitStack() as up:
        up.enter_context(running(world.platform_cmd(pport, platform, tmp_path / "platform.json"),
                                 f"{platform}/jwks"))
        up.enter_context(running(world.tool_cmd(tmp_path / "lti.yaml", tmp_path / "spool",
                                                tport), f"{tool}/jwks", env, s.log))
        yield s


def test_each_registration_of_an_issuer_posts_with_its_own_token(site: Site) -> None:
    for client in ("gl-a", "gl-b"):  # links added by hand: the launch names no line item
        page = launch(site.platform, f"rl-{client}", "u-alice")
        assert page.status_code == 200 and "alice in lticourse" in page.text, why(page.text)
    report = site.sync(("gl-a", 7.0), ("gl-b", 9.0))
    assert not report.failed and len(report.posted) == 2 and len(report.columns) == 2, report
    held = site.state()
    columns = {li["_client"]: li for li in held["lineitems"].values()}
    assert {c: (li["resourceId"], li["tag"], li["scoreMaximum"], li["resourceLinkId"])
            for c, li in columns.items()} == {c: ("bigsum", "gradeline", 10.0, f"rl-{c}")
                                              for c in ("gl-a", "gl-b")}
    scores = {c: held["scores"][li["_id"]]["u-alice"]["scoreGiven"] for c, li in columns.items()}
    assert scores == {"gl-a": 7.0, "gl-b": 9.0}
    assert sorted(t["client_id"] for t in site.tokens()) == ["gl-a", "gl-b"]
    assert all(AGS + "lineitem" in t["scope"].split() for t in site.tokens())

    again = site.sync(("gl-a", 7.0), ("gl-b", 10.0))  # one change: one post, no new column
    assert (len(again.posted), again.unchanged, again.columns) == (1, 1, []), again
    assert len(site.state()["lineitems"]) == 2 and len(site.tokens()) == 2  # tokens kept


def test_a_read_only_registration_finds_its_column_and_asks_no_more(site: Site) -> None:
    page = launch(site.platform, "rl-gl-ro", "u-alice")
    assert page.status_code == 200, why(page.text)
    first = site.sync(("gl-ro", 6.0))  # no column, and the tool may not make one
    assert not first.posted and "lineitem.readonly" in first.failed[0][1], first
    column = admin(site.platform, "lineitems", {
        "context_id": CTX, "client_id": "gl-ro", "label": "bigsum", "scoreMaximum": 10,
        "resourceId": "bigsum", "tag": "gradeline"})  # made by hand in the gradebook
    admin(site.platform, "lineitems", {  # another tool's column, never the tool's
        "context_id": CTX, "client_id": "gl-a", "label": "bigsum", "scoreMaximum": 10,
        "resourceId": "bigsum", "tag": "gradeline"})
    later = site.sync(("gl-ro", 6.0), now=time.time() + 60)  # past the retry's wait
    assert len(later.posted) == 1 and not later.failed and not later.columns, later
    assert site.state()["scores"][column["_id"]]["u-alice"]["scoreGiven"] == 6.0
    scopes = {s for t in site.tokens() for s in t["scope"].split()}
    assert scopes == {AGS + "lineitem.readonly", AGS + "score"}  # what the launch offered


def test_a_registration_lti_yaml_lacks_is_refused_with_what_to_add(site: Site) -> None:
    _, refused = login(site.platform, f"rl-{NEW}", "u-alice")  # a placement just added
    seen = {"unknown client id": (refused.status_code, why(refused.text))}
    for name, change in (("wrong aud", {"aud": "gl-other"}),
                         ("wrong iss", {"iss": "https://lms.example.org"})):
        s, url, token, state = id_token(site.platform, "rl-gl-a", "u-alice")
        r = post(s, url, resigned(token, site.key, **change), state)
        seen[name] = (r.status_code, why(r.text))
    issuer = site.platform
    assert seen == {
        "unknown client id": (403, [f"this LMS registration is unknown: add client id {NEW} "
                                    f"of issuer {issuer} (deployment id dep-new) to lti.yaml"]),
        "wrong aud": (403, [f"this LMS registration is unknown: add client id gl-other of "
                            f"issuer {issuer} (deployment id dep-a) to lti.yaml"]),
        "wrong iss": (403, ["this LMS is not registered with gradeline: add issuer "
                            "https://lms.example.org with client id gl-a (deployment id "
                            "dep-a) to lti.yaml"])}
    log = site.log.read_text()
    assert "Traceback" not in log and "Internal Server Error" not in log, log
    assert [line for line in log.splitlines() if "LTI: refused" in line] == [
        f"WARNING grader.adapters.web.lti.app: LTI: refused (403): {w[0]}"
        for _, w in seen.values()], log


def test_a_role_outside_the_courses_staff_roles_is_a_student(site: Site) -> None:
    """Tom moderates the forum (Open edX sends Learner and the TA sub-role): staff in a
    course with the default staff roles, a student where the course names only
    Instructor and Administrator -- his own page, nobody else's."""
    staff = launch(site.platform, "rl-gl-a", "u-tom")
    assert staff.status_code == 200 and "alice" in staff.text, why(staff.text)
    student = launch(site.platform, "rl-gl-b", "u-tom")
    assert student.status_code == 200 and "tom in lticourse" in student.text, why(student.text)
    assert "alice" not in student.text.lower()
    with urllib.request.urlopen(student.url.rstrip("/") + "/a/bigsum", timeout=30) as r:
        page = r.read().decode()  # a staff page's path: a student's token shows their own
    assert "tom in lticourse" in page and "alice" not in page.lower()
