"""Grading by hand with real accounts (issue #57): the grading account runs the desk and
the web server; two TAs of the course's staff group grade the same assignment at once
in headless Chromium, each through their own tunnel to the staff socket (as ``ssh -L``
brings them there), keyboard only -- rubric items by their access keys, a comment at a
line, an adjustment with its reason. A deliberately conflicting save is shown, with
the second TA's choice kept and the first's grade intact; an item's points changed in
the rubric file recompute both students' totals; while anonymous, no page or export
either TA reaches names a student; axe-core finds no serious violation on the grading
page; and after release a student sees the items and the comment at its line.
Screenshots go to $GRADELINE_SCREENSHOTS when set (the docs' grading.png)."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import time
import urllib.request
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from grader.adapters.browser import render_check

from ..support import (
    BIN,
    CHROMIUM,
    RUBRIC,
    STAFF_GROUP,
    USER,
    as_user,
    desk_files,
    staff_tunnel,
)

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
DRIVER = Path(__file__).with_name("hand_grading.js")
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
FAILING = ("serious", "critical")


def _rubric(tas: tuple[str, str], d_part: float = 3) -> str:
    r = json.loads(json.dumps(RUBRIC))
    r["questions"][0]["graders"] = list(tas)
    r["questions"][1]["items"][1]["points"] = d_part
    return yaml.safe_dump(r)


def _get(base: str, path: str) -> str:
    with urllib.request.urlopen(base + path, timeout=30) as r:
        return r.read().decode()


def _drive(modules: Path, work: Path, browsers: dict[str, str], steps: list[dict[str, object]]
           ) -> list[dict[str, object]]:
    job = work / f"job-{time.monotonic_ns()}.json"
    job.write_text(json.dumps({"chromium": str(CHROMIUM), "tags": TAGS, "browsers": browsers,
                               "steps": steps}))
    r = subprocess.run(["node", str(DRIVER), str(job)], capture_output=True, text=True,
                       timeout=300, env={**os.environ, "NODE_PATH": str(modules)})
    assert r.returncode == 0, r.stderr[-3000:]
    out: list[dict[str, object]] = json.loads(r.stdout.splitlines()[-1])
    return out


def test_two_tas_grade_at_once_by_keyboard_and_nothing_is_lost(
        desk_factory, two_staff_accounts, browser_tools, tmp_path) -> None:
    ta1, ta2 = two_staff_accounts
    scratch = Path(f"/var/tmp/gradeline-rubric-{os.getpid()}")
    scratch.mkdir(mode=0o755, exist_ok=True)
    rubric = scratch / "rubric.yaml"
    rubric.write_text(_rubric((ta1, ta2)))
    uid = pwd.getpwnam(USER).pw_uid
    os.chown(rubric, uid, uid)
    try:
        d = desk_factory({"rubric": str(rubric)}, {"staff": {"groups": [STAFF_GROUP]}})
        _grade(d, ta1, ta2, rubric, browser_tools, tmp_path)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _grade(d, ta1: str, ta2: str, rubric: Path, modules: Path, tmp_path: Path) -> None:
    """Long because it is one story: hand-ins, two TAs, the conflict, the recomputed
    totals, anonymity, the student's page."""
    env = {"GRADELINE_DESK_SOCKET": str(d.sock)}
    files = desk_files(d.sock)
    for who, f in ((d.alice, "sum.py"), (d.bob, "good.py")):
        assert as_user(who, BIN, "hand-in", "bigsum", files / f, env=env).returncode == 0
    g = d.run([BIN, "run", *d.opts, "--executor", "local"])
    assert g.returncode == 0, g.stderr
    later = (datetime.now(UTC) + timedelta(days=2)).isoformat()  # the whole suite graded
    g = d.run([BIN, "deadline", "bigsum", *d.opts, "--executor", "local", "--now", later])
    assert g.returncode == 0, g.stderr
    shots = Path(os.environ.get("GRADELINE_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    with ExitStack() as up:
        one, two = (up.enter_context(staff_tunnel(t, d.staff_sock)) for t in (ta1, ta2))
        prof = up.enter_context(staff_tunnel(USER, d.staff_sock))  # the grading account
        rows = json.loads(_get(prof, "/api/a/bigsum"))
        by_spool = {r["counting"]: r["student"] for r in rows}
        index = json.loads(_get(one, "/api/a/bigsum/grade"))
        style, design = index["questions"]
        key = {}
        for row in design["queue"]:  # nobody named for design: everyone's queue
            page = json.loads(_get(one, f"/api/a/bigsum/grade/design/{row['key']}"))
            key[by_spool[page["submission"]]] = row["key"]
        assigned = {r["key"]: r["assigned"] for r in style["queue"]} | \
            {r["key"]: r["assigned"] for r in json.loads(_get(
                two, "/api/a/bigsum/grade"))["questions"][0]["queue"]}
        before = {r["student"]: r["points"] for r in json.loads(_get(prof, "/api/a/bigsum"))}
        assert before == {d.alice: None, d.bob: None}  # pending: not graded by hand yet

        a, b = key[d.alice], key[d.bob]
        steps: list[dict[str, object]] = [
            {"who": "one", "do": "open", "path": f"/a/bigsum/grade/design/{a}"},
            {"who": "two", "do": "open", "path": f"/a/bigsum/grade/design/{a}"},
            {"who": "one", "do": "key", "keys": ["Alt+b", "Tab", "Tab"]},
            {"who": "one", "do": "type", "text": "1"},
            {"who": "one", "do": "key", "keys": ["Tab", "Tab"]},
            {"who": "one", "do": "type", "text": "prints a constant: the sum is never made"},
            {"who": "one", "do": "key", "keys": ["Tab", "Tab"]},
            {"who": "one", "do": "type", "text": "-0.5"},
            {"who": "one", "do": "key", "keys": ["Tab"]},
            {"who": "one", "do": "type", "text": "no test of its own"},
            {"who": "one", "do": "submit", "key": "Alt+s"},
            {"who": "two", "do": "key", "keys": ["Alt+a"]},
            {"who": "two", "do": "submit", "key": "Alt+s"},  # from version 0: a conflict
            {"who": "two", "do": "look"},
            {"who": "two", "do": "open", "path": f"/a/bigsum/grade/design/{b}"},
            {"who": "two", "do": "key", "keys": ["Alt+b"]},
            {"who": "two", "do": "submit", "key": "Alt+s"}]
        for student in (a, b):
            who = "one" if assigned[student] == ta1 else "two"
            steps += [{"who": who, "do": "open", "path": f"/a/bigsum/grade/style/{student}"},
                      {"who": who, "do": "key", "keys": ["Alt+1"]},
                      {"who": who, "do": "submit", "key": "Alt+n"}]
        steps += [{"who": "one", "do": "open", "path": f"/a/bigsum/grade/design/{a}"},
                  {"who": "one", "do": "look"}, {"who": "one", "do": "axe"},
                  {"who": "one", "do": "shot", "path": str(shots / "grading.png")}]
        for path in ("/", "/a/bigsum", "/a/bigsum/grade", f"/sub/{rows[0]['counting']}",
                     f"/a/bigsum/grade/style/{b}"):
            steps += [step for w in ("one", "two") for step in (
                {"who": w, "do": "open", "path": path}, {"who": w, "do": "look"})]
        out = _drive(modules, tmp_path, {"one": one, "two": two}, steps)
        _check(out, d, ta1)

        csv_text = _get(two, "/a/bigsum/grade/evaluations.csv")
        seen = [s["html"] for s in out if s["do"] == "look"] + [csv_text]
        for text in seen:
            for name in (d.alice, d.bob):
                assert name not in str(text), name
        assert a in csv_text and b in csv_text

        points = {r["student"]: r["points"] for r in json.loads(_get(prof, "/api/a/bigsum"))}
        rubric.write_text(_rubric((ta1, ta2), d_part=5))  # the item's points changed
        os.utime(rubric, ns=(time.time_ns(), time.time_ns() + 10**9))
        after = {r["student"]: r["points"] for r in json.loads(_get(prof, "/api/a/bigsum"))}
        assert after[d.alice] == pytest.approx(points[d.alice] + 2)
        assert after[d.bob] == pytest.approx(points[d.bob] + 2)
    _student_sees_it(d, env, shots)


def _check(out: list[dict[str, object]], d, ta1: str) -> None:
    saved = [s for s in out if s["do"] == "submit"]
    assert [s["status"] for s in saved] == [200, 409, 200, 200, 200], saved
    focus = [f for s in out if s["do"] == "key" and s["who"] == "one"
             for f in s["focus"]]  # type: ignore[union-attr]
    assert focus[:8] == ["item-d-part", "c-file", "c-first", "c-last", "c-text", "c-item",
                         "adj", "reason"], focus  # the keyboard's way through the form
    conflict = next(s for s in out if s["do"] == "look" and s["who"] == "two")
    assert f"Not saved: {ta1} saved this question" in str(conflict["text"])
    assert "item-d-full" in conflict["checked"]  # the second TA's choice, kept
    mine = next(s for s in out if s["do"] == "look" and s["who"] == "one")  # design of a
    text = str(mine["text"])
    assert "prints a constant: the sum is never made" in text and "Works, but tangled" in text
    assert "item-d-part" in mine["checked"]  # the first TA's grade stands
    assert "conflict" in text  # the refused save is in the grade's history
    axe = next(s for s in out if s["do"] == "axe")
    bad = [v for v in axe["violations"] if v["impact"] in FAILING]  # type: ignore[union-attr]
    assert not bad and int(str(axe["passes"])) >= 20, bad


def _student_sees_it(d, env: dict[str, str], shots: Path) -> None:
    assert d.run([BIN, "release", "bigsum", "--course-file", d.opts[3]]).returncode == 0
    link = as_user(d.alice, BIN, "mine", "--link", env=env)
    assert link.returncode == 0, link.stderr
    res = render_check(link.stdout.split()[0], shots / "student-graded-by-hand.png",
                       title="Graded by hand", size=(1100, 1400))
    dom = str(res["dom"])
    for text in ("Graded by hand", "Works, but tangled", "Unclear names",
                 "prints a constant: the sum is never made", "print(0)",
                 "Adjusted -0.5: no test of its own"):
        assert text in dom, text
    assert d.bob not in dom
    mine = json.loads(as_user(d.alice, BIN, "mine", "--json", env=env).stdout)
    hand = mine["assignments"][0]["hand"]
    assert hand["complete"] and hand["points"] == 3 + 4.5  # style 4 - 1, design 5 - 0.5
