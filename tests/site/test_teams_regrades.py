"""Teams and regrade requests with real accounts on one host (issue #56): three students
and two TAs. The grading account runs the desk, the staff pages and PostgreSQL; the
students ask through the desk's socket (the kernel says who they are) and through the
Open OnDemand app behind the portal, in headless Chromium with axe-core on every page.

A self-formed team of two hands in through the desk and through the portal, late for
one member only (``charge: every_member``: the other has an extension), under the
team's hand-in limit; the third student sees none of it. A request outside the window
is refused with the reason; inside it one is adjusted by one TA and another declined by
the other, each as the account the kernel named, and the students read the answers. The
audit has both; the grade sheet, the Canvas file and the test LMS's gradebook (AGS, one
score per member) hold each member's changed grade; the team, locked at its time,
refuses a member who would leave. Screenshots go to $GRADELINE_SCREENSHOTS when set."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import time
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from cryptography.hazmat.primitives.asymmetric import rsa

from ..lti.world import admin, launch, pem, platform_cmd, running, state
from ..support import (
    ALICE,
    BIN,
    BOB,
    COURSE_STAFF,
    OOD_APP,
    PY,
    USER,
    DeskRun,
    as_user,
    desk_files,
    drive_portal,
    free_port,
)

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
LOCK_S = 90  # the team locks this long after the course is made
STAMP = "%Y-%m-%d %H:%M:%S"


def _course(desk_factory, carol: str, now: datetime) -> DeskRun:
    roster = ("student,name,email,extension,lms_id\n"
              f"{ALICE},Alice Adams,alice@example.edu,,u-alice\n"
              f"{BOB},Bob Brown,bob@example.edu,1d,u-bob\n"  # a day more: on time
              f"{carol},Carol Chen,carol@example.edu,,u-carol\n")
    return desk_factory(
        {"name": "pair", "deadline": (now - timedelta(hours=2)).strftime(STAMP),
         "visibility": {"sample": "visible", "secret/small": "after_release",
                        "secret/large": "after_release"},
         "teams": {"min": 2, "max": 2, "formation": "self", "charge": "every_member",
                   "lock": (now + timedelta(seconds=LOCK_S)).strftime(STAMP)},
         "limits": {"max_submissions": 2}},
        {**COURSE_STAFF, "late": {"penalty_per_day": 10},
         "regrades": {"closes": "7d", "per_assignment": 1}}, roster=roster)


def test_a_team_hands_in_asks_and_every_member_gets_the_changed_grade(
        desk_factory, portal_factory, teams_accounts, staff_account, browser_tools,
        tmp_path) -> None:
    carol, ta2 = teams_accounts
    ta, now = staff_account, datetime.now(UTC)
    d = _course(desk_factory, carol, now)
    env, files = {"GRADELINE_DESK_SOCKET": str(d.sock)}, desk_files(d.sock)
    shots = Path(os.environ.get("GRADELINE_SCREENSHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)

    def desk(who: str, *argv: object) -> subprocess.CompletedProcess[str]:
        return as_user(who, BIN, *map(str, argv), env=env)

    # a team's work needs a team: alice makes one at the desk, bob joins in the portal
    alone = desk(ALICE, "hand-in", "pair", files / "good.py")
    assert alone.returncode == 2 and "you are in no team" in alone.stderr
    made = desk(ALICE, "team", "pair", "create", "red")
    assert made.returncode == 0, made.stderr
    code = re.search(r"join code (\w+)", made.stdout)
    assert code, made.stdout
    p = portal_factory(d, [BOB, carol, ta, ta2])
    page = f"{OOD_APP}/c/{p.course}/"
    me = {u: {"user": u, "password": p.passwords[u], "axe": True} for u in p.passwords}
    joined, = drive_portal(browser_tools, p, [
        {**me[BOB], "path": page, "fill": {"#team-code-0": code.group(1)},
         "click": "Join the team"}], tmp_path)
    assert "You are in team red of pair" in joined["text"], joined["text"][-800:]

    # the team hands in twice, once at each door; a third is past the team's limit
    first = desk(ALICE, "hand-in", "pair", files / "good.py")
    assert first.returncode == 0, first.stderr
    handed, carols = drive_portal(browser_tools, p, [
        {**me[BOB], "path": page, "handin": {"assignment": "pair", "file": str(files / "sum.py")}},
        {**me[carol], "path": page, "shot": str(shots / "teams-outsider.png")}], tmp_path)
    assert "Handed in sum.py for pair." in handed["text"], handed["text"][-800:]
    third = desk(ALICE, "hand-in", "pair", files / "good.py")
    assert third.returncode == 2 and "2 of the 2 submissions allowed" in third.stderr
    # the third student sees nothing of it, at either door
    assert ALICE not in carols["text"] and BOB not in carols["text"]
    mine = json.loads(desk(carol, "mine", "--json").stdout)["assignments"][0]
    assert mine["submissions"] == [] and mine["team"]["name"] == ""

    assert d.run([BIN, "run", *d.opts, "--executor", "local"]).returncode == 0
    later = (now + timedelta(days=2)).isoformat()  # past bob's own deadline too
    done = d.run([BIN, "deadline", "pair", *d.opts, "--executor", "local", "--now", later])
    assert done.returncode == 0, done.stderr

    _requests(d, p, desk, me, browser_tools, tmp_path, shots, ta, ta2)
    _grades_and_the_lms(d, tmp_path)

    # every change of the team is logged; after its lock the team stays as it is
    log = d.run([BIN, "teams", "list", "pair", "--log", "--course-file", d.opts[3]]).stdout
    assert f"{ALICE} joins red, by {ALICE}" in log and f"{BOB} joins red, by {BOB}" in log
    time.sleep(max(0.0, (now + timedelta(seconds=LOCK_S + 1) - datetime.now(UTC))
                   .total_seconds()))
    left = desk(BOB, "team", "pair", "leave")
    assert left.returncode == 2 and "the teams of pair locked at" in left.stderr


def _requests(d: DeskRun, p, desk, me, tools: Path, tmp: Path, shots: Path, ta: str,
              ta2: str) -> None:
    """Asked outside the window, then inside it at both doors; answered by two TAs."""
    why = "my sum is right: the checker wants a trailing space"
    early = desk(ALICE, "ask-regrade", "pair", "secret/small", "--reason", why)
    assert early.returncode == 2 and "requests about pair open when staff release" in \
        early.stderr
    assert d.run([BIN, "release", "pair", "--course-file", d.opts[3]]).returncode == 0
    asked = desk(ALICE, "ask-regrade", "pair", "secret/small", "--reason", why)
    assert asked.returncode == 0, asked.stderr
    mine = re.search(r"request (\d+)", asked.stdout)
    assert mine, asked.stdout
    page, staff = f"{OOD_APP}/c/{p.course}/", f"{OOD_APP}/c/{p.course}/staff/regrades"
    bobs, queue = drive_portal(tools, p, [
        {**me[BOB], "path": page, "fill": {"#ask-group-0": "secret/large",
                                           "#ask-reason-0": "large inputs pass for me"},
         "click": "Ask for a regrade"},
        {**me[ta], "path": staff, "shot": str(shots / "teams-regrade-queue.png")}], tmp)
    theirs = re.search(r"Your request (\d+) about secret/large", bobs["text"])
    assert theirs, bobs["text"][:1500]
    assert queue["status"] == 200 and why in queue["text"] and "large inputs" in queue["text"]
    adjusted, declined, seen = drive_portal(tools, p, [
        {**me[ta], "path": f"{staff}/{mine.group(1)}",
         "fill": {"#a-outcome": "adjusted", "#a-points": "30",
                  "#a-reason": "Right: the checker was too strict."},
         "click": "Answer the request", "shot": str(shots / "teams-regrade-request.png")},
        {**me[ta2], "path": f"{staff}/{theirs.group(1)}",
         "fill": {"#a-outcome": "declined", "#a-reason": "Over the time limit on large."},
         "click": "Answer the request"},
        {**me[BOB], "path": page, "shot": str(shots / "teams-student.png")}], tmp)
    assert "Answered: adjusted, 0 → 30 points" in adjusted["text"], adjusted["text"][-800:]
    assert "Answered: declined" in declined["text"], declined["text"][-800:]
    assert "Over the time limit on large." in seen["text"] and "declined" in seen["text"]
    answer = json.loads(desk(ALICE, "mine", "pair", "--json").stdout)["assignments"][0]
    assert [(r["status"], r["after"], r["answered_by"]) for r in answer["requests"]] == \
        [("adjusted", 30.0, ta)]
    audit = d.run([BIN, "regrades", "log", "--course-file", d.opts[3]]).stdout
    assert f"adjusted by {ta}: 0 -> 30" in audit and f"declined by {ta2}" in audit


def _grades_and_the_lms(d: DeskRun, tmp: Path) -> None:
    """The sheets and the LMS's gradebook: the team's grade, adjusted, for each member;
    alice's 10 % late, bob on time by his own deadline, carol nothing."""
    scratch = Path(d.opts[1]).parent
    out = scratch / "grades-teams"
    r = d.run([BIN, "grades", "--course-file", d.opts[3], "--out", out])
    assert r.returncode == 0, r.stderr
    sheet = {row["student"]: row for row in csv.DictReader(io.StringIO(
        (out / "pair.csv").read_text()))}
    assert (sheet[ALICE]["points"], sheet[ALICE]["penalty_pct"]) == ("27", "10")
    assert (sheet[BOB]["points"], sheet[BOB]["penalty_pct"]) == ("30", "0")
    assert sheet[ALICE]["team"] == sheet[BOB]["team"] == "red"
    assert "the checker was too strict" in sheet[BOB]["changes"]
    canvas = {row[3]: row[5] for row in csv.reader(io.StringIO((out / "canvas.csv").read_text()))}
    assert (canvas[ALICE], canvas[BOB]) == ("27", "30")
    scores = _ags(d, tmp)
    assert (scores["u-alice"]["scoreGiven"], scores["u-bob"]["scoreGiven"]) == (27.0, 30.0)
    assert "u-carol" not in scores


def _ags(d: DeskRun, tmp: Path) -> dict[str, dict[str, object]]:
    """The test LMS (an LTI 1.3 platform from PyPI) and gradeline's tool, run by the
    grading account: one launch makes the course known, one sync posts the grades."""
    course_file = Path(d.opts[3])
    lti = course_file.parent / "lti"
    lti.mkdir()
    pport, tport = free_port(), free_port()
    platform, tool = f"http://localhost:{pport}", f"http://127.0.0.1:{tport}/lti"
    private, public = pem(rsa.generate_private_key(public_exponent=65537, key_size=2048))
    (tmp / "platform.pem").write_text(private)
    (tmp / "platform.pub").write_text(public)
    (lti / "lti.yaml").write_text(yaml.safe_dump({
        "tool": {"base_url": tool, "keys": "lti-keys"},
        "platforms": [{"issuer": platform, "client_id": "gradeline",
                       "deployment_ids": ["d1"], "auth_login_url": f"{platform}/auth",
                       "auth_token_url": f"{platform}/token",
                       "key_set_url": f"{platform}/jwks", "course_file": str(course_file)}]}))
    members = [{"user_id": f"u-{n}", "name": n, "email": f"{n}@example.edu",
                "roles": ["Learner"]} for n in ("alice", "bob", "carol")]
    (tmp / "platform.json").write_text(json.dumps({
        "platform_private_key_file": str(tmp / "platform.pem"),
        "platform_public_key_file": str(tmp / "platform.pub"),
        "tools": [{"client_id": "gradeline", "deployment_id": "d1",
                   "oidc_login_url": f"{tool}/login", "launch_url": f"{tool}/launch",
                   "key_set_url": f"{tool}/jwks"}],
        "course": {"context_id": "c1", "title": "Teams", "label": "T1", "members": members},
        "resource_links": []}))
    shutil.chown(lti, USER, USER)
    shutil.chown(lti / "lti.yaml", USER, USER)
    scratch = Path(d.opts[1]).parent
    as_them = ["runuser", "-u", USER, "--", "env", "-i", f"HOME={scratch}",
               f"PATH={PY.parent}:/usr/bin:/bin", f"GRADELINE_STATE_DIR={scratch / 'state'}",
               "LC_ALL=C.UTF-8", str(BIN)]
    with ExitStack() as up:
        up.enter_context(running(platform_cmd(pport, platform, tmp / "platform.json"),
                                 f"{platform}/jwks"))
        up.enter_context(running([*as_them, "lti", "serve", "--registrations",
                                  str(lti / "lti.yaml"), "--port", str(tport),
                                  "--sync-every", "0", *map(str, d.opts)], f"{tool}/jwks"))
        admin(platform, "resource_links", {"id": "rl-pair", "title": "pair",
                                           "client_id": "gradeline",
                                           "custom": {"assignment": "pair"}})
        opened = launch(platform, "rl-pair", "u-alice")
        assert opened.status_code == 200 and f"{ALICE} in" in opened.text, opened.text[-500:]
        sync = subprocess.run([*as_them, "lti", "sync-grades", "--registrations",
                               str(lti / "lti.yaml"), *map(str, d.opts)],
                              capture_output=True, text=True, timeout=120)
        assert sync.returncode == 0 and "2 posted" in sync.stdout, sync.stdout + sync.stderr
        return next(iter(state(platform)["scores"].values()))  # type: ignore[no-any-return]
