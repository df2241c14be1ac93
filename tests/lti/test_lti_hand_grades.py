"""Hand-grades reach the LMS's gradebook (against the LTI 1.3 platform of
``tests/lti/platform``): a student launches, the autograder's result and a hand-grade
of each question are in the store, staff release, and ``gradeline lti sync-grades``
posts the score the rubric file says (the autograder's and the hand-grade's) with
the hand-grade's summary as the AGS ``comment``; an item's points changed in the
rubric file post the new score at the next sync, once. And staff grade in their own
launch: a TA sees pseudonyms and saves a grade through the tool's pages, only the
instructor reveals the names."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests
import yaml
from cryptography.hazmat.primitives.asymmetric import rsa

from grader.adapters.store.postgres import Store
from grader.core.record import SubmissionRecord
from grader.core.result import SubmissionResult
from grader.core.verdict import Verdict

from ..support import BIN, EXAMPLES, RUBRIC, free_port
from . import world
from .world import launch, pem, running, why

pytestmark = pytest.mark.slow  # a platform and the tool, each its own process
CLIENT, DEPLOYMENT, CTX = "gradeline", "dep-1", "course-101"


@dataclass
class Site:
    tmp: Path
    platform: str
    env: dict[str, str]

    def sync(self) -> str:
        r = subprocess.run([str(BIN), "lti", "sync-grades", "--registrations",
                            str(self.tmp / "lti.yaml")], capture_output=True, text=True,
                           env=self.env, timeout=120, check=False)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    def score(self) -> dict[str, object]:
        scores = world.state(self.platform)["scores"]
        [column] = scores.values()
        return column["u-alice"]  # type: ignore[no-any-return]


@pytest.fixture
def site(tmp_path: Path, db: str) -> Iterator[Site]:
    pport, tport = free_port(), free_port()
    platform, tool = f"http://localhost:{pport}", f"http://127.0.0.1:{tport}/lti"
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private, public = pem(key)
    (tmp_path / "platform.pem").write_text(private)
    (tmp_path / "platform.pub").write_text(public)
    shutil.copytree(EXAMPLES / "bigsum", tmp_path / "bigsum")
    (tmp_path / "roster.csv").write_text("student,name,email,lms_id\n"
                                         "alice,Alice Learner,alice@example.edu,u-alice\n")
    rubric = copy.deepcopy(RUBRIC)  # tom grades the style question of everyone
    rubric["questions"][0]["graders"] = ["tom"]  # type: ignore[index]
    (tmp_path / "rubric.yaml").write_text(yaml.safe_dump(rubric))
    due = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%d %H:%M")
    (tmp_path / "course.yaml").write_text(yaml.safe_dump({
        "course": "lticourse", "roster": "roster.csv",
        "staff": {"lms": {"tom": "Tom@example.edu"}},  # tina is not named: her LMS id
        "assignments": [
            {"name": "bigsum", "package": "bigsum", "deadline": due, "points": 10,
             "rubric": "rubric.yaml"}]}))
    (tmp_path / "lti.yaml").write_text(yaml.safe_dump({
        "tool": {"base_url": tool, "keys": "lti-keys"},
        "platforms": [{"issuer": platform, "client_id": CLIENT, "deployment_ids": [DEPLOYMENT],
                       "auth_login_url": f"{platform}/auth",
                       "auth_token_url": f"{platform}/token",
                       "key_set_url": f"{platform}/jwks",
                       "course_file": str(tmp_path / "course.yaml")}]}))
    (tmp_path / "platform.json").write_text(json.dumps({
        "platform_private_key_file": str(tmp_path / "platform.pem"),
        "platform_public_key_file": str(tmp_path / "platform.pub"),
        "tools": [{"client_id": CLIENT, "deployment_id": DEPLOYMENT, "lineitems": "full",
                   "oidc_login_url": f"{tool}/login", "launch_url": f"{tool}/launch",
                   "key_set_url": f"{tool}/jwks"}],
        "course": {"context_id": CTX, "title": "Programming", "label": "CS101", "members": [
            {"user_id": "u-alice", "name": "Alice Learner", "email": "alice@example.edu",
             "roles": ["Learner"]},
            {"user_id": "u-tina", "name": "Tina Teacher", "email": "tina@example.edu",
             "roles": ["Instructor"]},
            {"user_id": "u-tom", "name": "Tom Assistant", "email": "tom@example.edu",
             "roles": ["Instructor", "TeachingAssistant"]}]},
        "resource_links": [{"id": "rl-1", "title": "bigsum", "client_id": CLIENT,
                            "custom": {"assignment": "bigsum"}}]}))
    env = {**os.environ, "GRADELINE_DB_URL": db, "GRADELINE_STATE_DIR": str(tmp_path / "state")}
    with ExitStack() as up:
        up.enter_context(running(world.platform_cmd(pport, platform, tmp_path / "platform.json"),
                                 f"{platform}/jwks"))
        up.enter_context(running(world.tool_cmd(tmp_path / "lti.yaml", tmp_path / "spool",
                                                tport), f"{tool}/jwks", env,
                                 tmp_path / "tool.log"))
        yield Site(tmp_path, platform, env)


def test_the_lms_score_carries_the_hand_grade_and_its_summary(site: Site, db: str) -> None:
    page = launch(site.platform, "rl-1", "u-alice")
    assert page.status_code == 200 and "alice in lticourse" in page.text, why(page.text)
    at = (datetime.now(UTC) - timedelta(days=2)).isoformat()
    with Store(db) as s:
        s.ingest([SubmissionRecord(
            spool_id="s-1", course="lticourse", assignment="bigsum", student="alice",
            submitted_at=at, batch_id="b1", state="graded", arrived_at=at, claimed_at=at,
            content_hash="h", language="python3", result=SubmissionResult(
                "bigsum", "v1", "s-1", "h", "python3", Verdict.WA, 1.0, 2.0, None, (),
                ()))])
        s.save_question("lticourse", "bigsum", "alice", "style", seen=0, items=("names",),
                        adjustment=0.0, reason="", spool_id="s-1", grader="ta1")
        s.release("lticourse", "bigsum", "prof")
    assert "0 posted" in site.sync()  # design is not graded: nothing final yet
    with Store(db) as s:
        s.save_question("lticourse", "bigsum", "alice", "design", seen=0, items=("d-part",),
                        adjustment=-0.5, reason="no tests of its own", spool_id="s-1",
                        grader="ta2")
    assert "1 posted" in site.sync()
    score = site.score()
    # 1 of 2 by the autograder, scaled to the assignment's 10 points, + 3 + (3 - 0.5)
    assert (score["scoreGiven"], score["scoreMaximum"]) == (10.5, 20.0)
    assert score["gradingProgress"] == "FullyGraded"
    comment = str(score["comment"])
    assert comment.startswith("Graded by hand: 5.5 of 10.") and "-1 Unclear names" in comment
    assert "adjusted -0.5 (no tests of its own)" in comment

    edited = json.loads(json.dumps(RUBRIC))
    edited["questions"][1]["items"][1]["points"] = 5  # d-part: 3 -> 5
    (site.tmp / "rubric.yaml").write_text(yaml.safe_dump(edited))
    assert "1 posted" in site.sync()
    assert site.score()["scoreGiven"] == 12.5
    assert "0 posted, 1 unchanged" in site.sync()  # once per change


def _ingest(db: str) -> None:
    at = (datetime.now(UTC) - timedelta(days=2)).isoformat()
    with Store(db) as s:
        s.ingest([SubmissionRecord(
            spool_id="s-1", course="lticourse", assignment="bigsum", student="alice",
            submitted_at=at, batch_id="b1", state="graded", arrived_at=at, claimed_at=at,
            content_hash="h", language="python3", result=SubmissionResult(
                "bigsum", "v1", "s-1", "h", "python3", Verdict.WA, 1.0, 2.0, None, (),
                ()))])


def _form(html: str) -> dict[str, str]:
    return dict(re.findall(r'name="(csrf|version)" value="([^"]*)"', html))


def test_staff_grade_in_their_launch_and_only_the_instructor_reveals(site: Site, db: str
                                                                    ) -> None:
    _ingest(db)
    tom = launch(site.platform, "rl-1", "u-tom")  # a TA: Instructor#TeachingAssistant
    assert tom.status_code == 200, why(tom.text)
    base = tom.url.rstrip("/")
    index = requests.get(f"{base}/a/bigsum/grade", timeout=30)
    assert index.status_code == 200 and "Graded anonymously" in index.text
    # staff: lms names tom by his email: the style question's queue is his own
    assert index.text.count("Your queue") == 1 and "Every student" in index.text
    [key] = set(re.findall(r"/a/bigsum/grade/style/(anon-[a-z2-7]{8})", index.text))
    table = requests.get(f"{base}/a/bigsum", timeout=30).text
    assert key in table and "alice" not in table and "Alice Learner" not in table
    page = requests.get(f"{base}/a/bigsum/grade/style/{key}", timeout=30)
    assert page.status_code == 200 and "Unclear names" in page.text
    saved = requests.post(f"{base}/a/bigsum/grade/style/{key}", timeout=30,
                          allow_redirects=False,
                          data={**_form(page.text), "item": "names", "then": "stay"})
    assert saved.status_code == 303 and saved.headers["location"] == f"{key}?saved=1"
    again = requests.get(f"{base}/a/bigsum/grade/style/{key}?saved=1", timeout=30)
    assert "Saved." in again.text and re.search(r'id="item-names"[^>]* checked', again.text)
    with Store(db) as s:
        [grade] = s.hand_grades("lticourse", "bigsum")["bigsum"]
    assert (grade.student, grade.grader, grade.items) == ("alice", "tom", ("names",))
    # the grading page's export, in the launch too: by pseudonym while names are hidden
    assert f"{base}/a/bigsum/grade/evaluations.csv" in index.text
    csv = requests.get(f"{base}/a/bigsum/grade/evaluations.csv", timeout=30)
    assert csv.status_code == 200 and csv.headers["content-type"].startswith("text/csv")
    assert "bigsum-evaluations.csv" in csv.headers["content-disposition"]
    rows = csv.text.splitlines()
    assert key in rows[1] and "alice" not in csv.text and "tom" in rows[1], csv.text
    assert requests.get(f"{base}/a/nosuch/grade/evaluations.csv", timeout=30
                        ).status_code == 404
    refused = requests.post(f"{base}/a/bigsum/grade/reveal",  # tom's own form token
                            data={"csrf": _form(page.text)["csrf"]}, timeout=30,
                            allow_redirects=False)
    assert refused.status_code == 403 and "only an instructor reveals" in refused.text

    tina = launch(site.platform, "rl-1", "u-tina")
    tbase = tina.url.rstrip("/")
    tindex = requests.get(f"{tbase}/a/bigsum/grade", timeout=30).text
    assert "Your queue" not in tindex  # not named in staff: lms: every student's
    revealed = requests.post(f"{tbase}/a/bigsum/grade/reveal", data=_form(tindex),
                             timeout=30)
    assert revealed.status_code == 200 and "alice (Alice Learner)" in revealed.text
    assert "Alice Learner" in requests.get(f"{base}/a/bigsum", timeout=30).text  # tom too
    with Store(db) as s:
        assert s.names_revealed("lticourse", "bigsum")[1] == "u-tina"  # type: ignore[index]
