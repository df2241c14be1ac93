"""gradeline as an LTI 1.3 tool, end to end against a real LTI 1.3 platform run here
(``tests/lti/platform/lms_platform.py``: lti1p3platform's core signs the launches, checks the tool's
deep-linking response and serves Assignment and Grade Services and Names and Role
Provisioning Services), driven in headless Chromium: an instructor deep-links an
assignment, two students launch, hand in through the page and see their own results
(never the other's), someone not on the roster is refused, the deadline passes, staff
release, and the platform's gradebook holds both scores -- posted once; a forged, a
replayed, an expired id_token and one for an unknown deployment are refused."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests
import yaml
from cryptography.hazmat.primitives.asymmetric import rsa

from ..support import EXAMPLES, free_port, gl
from .world import admin, id_token, pem, platform_cmd, post, resigned, running, tool_cmd, why

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
HERE = Path(__file__).resolve().parent
CLIENT, DEPLOYMENT = "gradeline", "deployment-1"
WRONG, RIGHT = "print(0)\n", (EXAMPLES / "bigsum/submissions/accepted/sum.py").read_text()


class Lms:
    """The platform, the tool and the course between them (see the module docstring)."""

    def __init__(self, tmp: Path, db: str, images: Path) -> None:
        self.tmp, self.db = tmp, db
        self.pport, self.tport = free_port(), free_port()
        self.platform = f"http://localhost:{self.pport}"  # another site than the tool's
        self.tool = f"http://127.0.0.1:{self.tport}/lti"
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        private, public = pem(self.key)
        (tmp / "platform.pem").write_text(private)
        (tmp / "platform.pub").write_text(public)
        course = tmp / "course"
        course.mkdir()
        shutil.copytree(EXAMPLES / "bigsum", course / "bigsum")
        (course / "roster.csv").write_text("student,name,email,lms_id\n"
                                           "alice,Alice Learner,alice@example.edu,u-alice\n"
                                           "bob,Bob Learner,bob@example.edu,\n")
        due = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%d %H:%M")
        (course / "course.yaml").write_text(yaml.safe_dump({
            "course": "lticourse", "roster": "roster.csv", "assignments": [
                {"name": "bigsum", "package": "bigsum", "deadline": due,
                 "visibility": {"sample": "visible"},
                 "limits": {"max_submissions": 1}}]}))
        self.course = course / "course.yaml"
        self.spool = tmp / "spool"
        (tmp / "lti.yaml").write_text(yaml.safe_dump({
            "tool": {"base_url": self.tool, "keys": "lti-keys"},
            "platforms": [{"issuer": self.platform, "client_id": CLIENT,
                           "deployment_ids": [DEPLOYMENT],
                           "auth_login_url": f"{self.platform}/auth",
                           "auth_token_url": f"{self.platform}/token",
                           "key_set_url": f"{self.platform}/jwks",
                           "course_file": str(self.course)}]}))
        (tmp / "platform.json").write_text(json.dumps({
            "platform_private_key_file": str(tmp / "platform.pem"),
            "platform_public_key_file": str(tmp / "platform.pub"),
            "tools": [{"client_id": CLIENT, "deployment_id": DEPLOYMENT,
                       "oidc_login_url": f"{self.tool}/login",
                       "launch_url": f"{self.tool}/launch",
                       "key_set_url": f"{self.tool}/jwks"}],
            "course": {"context_id": "course-101", "title": "Programming", "label": "CS101",
                       "members": [
                           {"user_id": "u-tina", "name": "Tina Teacher",
                            "email": "tina@example.edu", "roles": ["Instructor"]},
                           {"user_id": "u-alice", "name": "Alice Learner",
                            "email": "alice@example.edu", "roles": ["Learner"]},
                           {"user_id": "u-bob", "name": "Bob Learner",
                            "email": "bob@example.edu", "roles": ["Learner"]},
                           {"user_id": "u-mallory", "name": "Mallory",
                            "email": "mallory@example.edu", "roles": ["Learner"]}]},
            "resource_links": []}))
        self.env = {"GRADELINE_DB_URL": db, "GRADELINE_STATE_DIR": str(tmp / "state"),
                    "GRADELINE_IMAGE_DIR": str(images)}

    def gl(self, *args: object) -> subprocess.CompletedProcess[str]:
        return gl(*args, env=self.env, timeout=900)

    def state(self) -> dict[str, object]:
        with urllib.request.urlopen(f"{self.platform}/api/state", timeout=30) as r:
            return json.loads(r.read())  # type: ignore[no-any-return]


@pytest.fixture
def lms(sbx_tmp: Path, db: str, settings: object, sandbox_factory: object) -> Iterator[Lms]:
    """The world under a directory the sandbox uid can read (the course's package)."""
    images = settings.image_dir or settings.state_dir / "images"  # type: ignore[attr-defined]
    tmp_path = sbx_tmp
    world = Lms(tmp_path, db, images)
    with ExitStack() as up:
        up.enter_context(running(platform_cmd(world.pport, world.platform,
                                              tmp_path / "platform.json"),
                                 f"{world.platform}/jwks"))
        up.enter_context(running(tool_cmd(tmp_path / "lti.yaml", world.spool, world.tport),
                                 f"{world.tool}/jwks", {**os.environ, **world.env}))
        yield world


def _drive(modules: Path, *args: object) -> dict[str, str]:
    r = subprocess.run(["node", str(HERE / "drive.js"), *map(str, args)], capture_output=True,
                       text=True, timeout=300, env={**os.environ, "NODE_PATH": str(modules)})
    assert r.returncode == 0, r.stderr
    out: dict[str, str] = json.loads(r.stdout.splitlines()[-1])
    return out


def test_courses_live_in_the_lms(lms: Lms, browser_tools: Path, tmp_path: Path) -> None:
    shots = Path(os.environ.get("GRADELINE_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    dl = _drive(browser_tools, "deeplink", lms.platform, "u-tina", "bigsum",
                shots / "lti-deeplink.png")
    assert "error" not in dl and dl["resource_link"], dl
    rl = dl["resource_link"]
    items = lms.state()["content_items"]
    assert [i["custom"] for i in items] == [{"assignment": "bigsum"}]  # type: ignore[index]

    files = tmp_path / "files"
    files.mkdir()
    (files / "sum.py").write_text(WRONG)
    (files / "good.py").write_text(RIGHT)
    alice = _drive(browser_tools, "launch", lms.platform, "u-alice", rl,
                   shots / "lti-student-handin.png", "bigsum", files / "sum.py")
    bob = _drive(browser_tools, "launch", lms.platform, "u-bob", rl, "", "bigsum",
                 files / "good.py")
    for who, page in (("alice", alice), ("bob", bob)):
        assert "error" not in page and f"{who} in lticourse" in page["text"], page
        assert "Received" in page["text"] and "signature" in page["text"], page["text"]
    refused = _drive(browser_tools, "launch", lms.platform, "u-mallory", rl, "")
    assert "not on the roster of course lticourse" in refused["text"], refused
    # past the limit, the same words as at every other door (course.handin)
    again = _drive(browser_tools, "launch", lms.platform, "u-alice", rl, "", "bigsum",
                   files / "good.py")
    assert "bigsum: you have handed in 1 of the 1 submissions allowed" in again["text"], again

    assert lms.gl("run", "--spool", lms.spool, "--course-file", lms.course, "--executor",
                  "local").returncode == 0
    mine = _drive(browser_tools, "launch", lms.platform, "u-alice", rl,
                  shots / "lti-student.png")
    assert "WA" in mine["text"] and "bob" not in mine["text"].lower(), mine["text"]
    staff = _drive(browser_tools, "launch", lms.platform, "u-tina", rl, shots / "lti-staff.png")
    assert "bigsum" in staff["text"], staff
    with urllib.request.urlopen(staff["url"].rstrip("/") + "/a/bigsum", timeout=30) as r:
        table = r.read().decode()
    assert "alice" in table and "bob" in table

    later = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    assert lms.gl("deadline", "bigsum", "--spool", lms.spool, "--course-file", lms.course,
                  "--executor", "local", "--now", later).returncode == 0
    assert lms.gl("release", "bigsum", "--course-file", lms.course).returncode == 0
    sync = lms.gl("lti", "sync-grades", "--registrations", lms.tmp / "lti.yaml")
    assert sync.returncode == 0 and "2 posted" in sync.stdout, sync.stdout + sync.stderr
    scores = next(iter(lms.state()["scores"].values()))  # type: ignore[attr-defined]
    assert scores["u-bob"]["scoreGiven"] == scores["u-bob"]["scoreMaximum"] > 0
    assert scores["u-alice"]["scoreGiven"] < scores["u-alice"]["scoreMaximum"]
    assert scores["u-bob"]["gradingProgress"] == "FullyGraded"
    canvas = scores["u-bob"]["https://canvas.instructure.com/lti/submission"]
    assert canvas["submitted_at"]  # Canvas dates lateness by the hand-in, not the post
    again = lms.gl("lti", "sync-grades", "--registrations", lms.tmp / "lti.yaml")
    assert "0 posted, 2 unchanged" in again.stdout, again.stdout  # once per change

    roster = lms.gl("lti", "roster", "--registrations", lms.tmp / "lti.yaml",
                    "--course-file", lms.course, "--write")
    assert roster.returncode == 0, roster.stderr
    assert "linked bob to LMS id u-bob" in roster.stdout
    assert "staff in the LMS: Tina Teacher" in roster.stdout
    assert "added mallory" in roster.stdout
    assert f"wrote {lms.course.parent / 'roster.csv'}" in roster.stderr
    # the running tool reads the roster it names again: mallory is a student now
    now_in = _drive(browser_tools, "launch", lms.platform, "u-mallory", rl, "")
    assert "mallory in lticourse" in now_in["text"], now_in


def _hand_in_unread(url: str, length: str | None) -> tuple[int, str]:
    """A hand-in's headers and not one byte of its body: the answer must come anyway."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname or "", u.port, timeout=10)
    conn.putrequest("POST", u.path)
    conn.putheader("Content-Type", "multipart/form-data; boundary=B")
    conn.putheader(*(("Content-Length", length) if length else ("Transfer-Encoding",
                                                                "chunked")))
    conn.endheaders()
    r = conn.getresponse()
    out = r.status, r.read().decode()
    conn.close()
    return out


def test_forged_replayed_expired_and_unknown_launches_are_refused(lms: Lms) -> None:
    rl = "rl-static"
    admin(lms.platform, "resource_links", {"id": rl, "title": "bigsum", "client_id": CLIENT,
                                           "custom": {"assignment": "bigsum"}})
    s, url, token, state = id_token(lms.platform, rl, "u-alice")
    ok = post(s, url, token, state)
    assert ok.status_code == 200 and "alice in lticourse" in ok.text, why(ok.text)
    for length in ("104857600", None):  # 100 MiB announced, or no size at all
        status, body = _hand_in_unread(ok.url + "hand-in", length)
        assert status == 413 and "at most 16 MiB" in body, (length, status, body[:300])
    replay = post(s, url, token, state)
    assert replay.status_code == 403 and "launch refused" in replay.text
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    cases = {"forged": lambda t: resigned(t, other),
             "expired": lambda t: resigned(t, lms.key, exp=int(time.time()) - 60,
                                           iat=int(time.time()) - 600),
             "unknown deployment": lambda t: resigned(
                 t, lms.key, **{"https://purl.imsglobal.org/spec/lti/claim/deployment_id":
                                "somewhere-else"})}
    for name, forge in cases.items():
        s, url, token, state = id_token(lms.platform, rl, "u-alice")
        r = post(s, url, forge(token), state)
        assert r.status_code == 403 and "launch refused" in r.text, (name, r.text[:300])
        assert "alice in lticourse" not in r.text


def test_students_form_a_team_in_the_lms(lms: Lms) -> None:
    """The team forms of a student's page in the LMS: the desk's rules, whichever door."""
    course = yaml.safe_load(lms.course.read_text())
    course["assignments"][0]["teams"] = {"min": 2, "max": 2, "formation": "self"}
    lms.course.write_text(yaml.safe_dump(course))  # the tool reads it again
    rl = "rl-team"
    admin(lms.platform, "resource_links", {"id": rl, "title": "bigsum", "client_id": CLIENT,
                                           "custom": {"assignment": "bigsum"}})

    def form(page: requests.Response, path: str, **fields: str) -> requests.Response:
        token = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert token, page.text[:500]
        return requests.post(page.url.rstrip("/") + path, timeout=60,
                             data={"csrf": token.group(1), "assignment": "bigsum", **fields})

    alice = post(*id_token(lms.platform, rl, "u-alice"))
    assert "you are in no team yet" in alice.text and "Create the team" in alice.text
    made = form(alice, "/team", action="create", value="red")
    assert made.status_code == 200 and "You are in team red of bigsum." in made.text
    code = re.search(r"join with the code <code>(\w+)</code>", made.text)
    assert code, made.text[:500]
    bob = post(*id_token(lms.platform, rl, "u-bob"))
    wrong = form(bob, "/team", action="join", value="nope")
    assert wrong.status_code == 400 and "no team of bigsum has the code" in wrong.text
    joined = form(bob, "/team", action="join", value=code.group(1))
    assert joined.status_code == 200 and "alice, bob" in joined.text


def test_a_student_asks_for_a_performance_measurement_in_the_lms(lms: Lms) -> None:
    """The on-demand measurement's button on a student's page in the LMS: the desk's
    tokens and reasons, whichever door."""
    shutil.copytree(EXAMPLES / "primecount", lms.course.parent / "primecount")
    course = yaml.safe_load(lms.course.read_text())
    course["assignments"].append({
        "name": "primecount", "package": "primecount",
        "deadline": course["assignments"][0]["deadline"], "performance": {"on_demand": 1}})
    lms.course.write_text(yaml.safe_dump(course))  # the tool reads it again
    rl = "rl-perf"
    admin(lms.platform, "resource_links", {"id": rl, "title": "primecount",
                                           "client_id": CLIENT,
                                           "custom": {"assignment": "primecount"}})

    def csrf(page: requests.Response) -> str:
        token = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert token, page.text[:500]
        return token.group(1)

    alice = post(*id_token(lms.platform, rl, "u-alice"))
    assert "Performance on demand: 0 of 1 used" in alice.text
    src = EXAMPLES / "primecount/submissions/accepted/parallel.c"
    handed = requests.post(alice.url.rstrip("/") + "/hand-in", timeout=60,
                           data={"csrf": csrf(alice), "assignment": "primecount"},
                           files={"file": ("parallel.c", src.read_bytes())})
    assert handed.status_code == 200 and "Received" in handed.text, why(handed.text)
    early = requests.post(alice.url.rstrip("/") + "/measure", timeout=60,
                          data={"csrf": csrf(alice), "assignment": "primecount"})
    assert early.status_code == 400 and "is not graded yet" in early.text

    assert lms.gl("run", "--spool", lms.spool, "--course-file", lms.course, "--executor",
                  "local").returncode == 0  # the hand-in phase: the visible tests
    page = post(*id_token(lms.platform, rl, "u-alice"))
    assert "Measure my latest submission" in page.text
    asked = requests.post(page.url.rstrip("/") + "/measure", timeout=60,
                          data={"csrf": csrf(page), "assignment": "primecount"})
    assert asked.status_code == 200 and "waits to be measured (1 of 1 measurements used)" \
        in asked.text, why(asked.text)
    assert "Performance on demand: 1 of 1 used" in asked.text
    assert "Measure my latest submission" not in asked.text  # no token left: no button
    again = requests.post(page.url.rstrip("/") + "/measure", timeout=60,
                          data={"csrf": csrf(page), "assignment": "primecount"})
    assert again.status_code == 400 and "you have used 1 of the 1 performance " \
        "measurements on demand" in again.text
