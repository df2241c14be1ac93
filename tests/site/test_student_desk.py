"""Students see their own results and nobody else's (issue #29), with real accounts:
the grading account (an ordinary user) runs the desk, its PostgreSQL and the grading;
two student accounts hand in and ask through the desk's socket, each as themselves
(runuser), so the kernel's word on who asks is what is tested."""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from grader.adapters.browser import render_check

from ..support import BIN, PY, USER, WRONG_SUM, as_user, desk_files, staff_tunnel

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

VISIBILITY = {"visibility": {"sample": "visible", "secret/small": "after_release",
                             "secret/large": "hidden"}}


@pytest.fixture
def desk(desk_factory):
    """(run as the grading account, socket, course options, alice, bob, base URL)."""
    d = desk_factory(VISIBILITY)
    return d.run, d.sock, d.opts, d.alice, d.bob, d.base


def test_each_student_sees_their_own_results_never_anothers_nor_hidden_data(desk):
    run, sock, opts, alice, bob, _ = desk
    env = {"GRADELINE_DESK_SOCKET": str(sock)}
    tmp_path = desk_files(sock)

    # a receipt at hand-in, signed: staff verify it, an edited one is refused
    r = as_user(alice, BIN, "hand-in", "bigsum", tmp_path / "sum.py", env=env)
    assert r.returncode == 0, r.stderr
    receipt_a = json.loads(r.stdout)
    assert receipt_a["student"] == alice and receipt_a["size"] == len(WRONG_SUM)
    r = as_user(bob, BIN, "hand-in", "bigsum", tmp_path / "good.py", env=env)
    assert r.returncode == 0, r.stderr
    receipt_b = json.loads(r.stdout)
    (tmp_path / "receipt.json").write_text(json.dumps(receipt_a))
    (tmp_path / "forged.json").write_text(json.dumps({**receipt_a, "size": 1}))
    for f in ("receipt.json", "forged.json"):
        (tmp_path / f).chmod(0o644)
    ok = run([BIN, "receipt", "verify", tmp_path / "receipt.json"])
    assert ok.returncode == 0 and "genuine" in ok.stdout, ok.stderr
    assert run([BIN, "receipt", "verify", tmp_path / "forged.json"]).returncode == 2

    # before grading: waiting, with the receipt's hash
    mine = _mine(alice, env)
    assert [(s["id"], s["state"], s["sha256"]) for s in mine] == \
        [(receipt_a["submission"], "waiting", receipt_a["sha256"])]

    # graded at hand-in: the visible groups only
    g = run([BIN, "run", *opts, "--executor", "local"])
    assert g.returncode == 0, g.stderr
    mine_a, mine_b = _mine(alice, env), _mine(bob, env)
    assert [s["id"] for s in mine_a] == [receipt_a["submission"]]
    assert [s["id"] for s in mine_b] == [receipt_b["submission"]]
    a = mine_a[0]
    assert a["verdict"] == "WA" and {t["group"] for t in a["tests"]} == {"sample"}
    failed = next(t for t in a["tests"] if t["verdict"] == "WA")
    assert failed["output"].strip() == "0" and failed["input"] and failed["expected"]
    text = json.dumps(mine_a)
    assert "secret" not in text and receipt_b["submission"] not in text
    assert receipt_b["sha256"] not in text

    # a request naming another student is refused; so is someone not on the roster
    forged = as_user(alice, PY, "-c", "import json,sys; "
                     "from grader.adapters.desk_client import ask; "
                     f"print(json.dumps(ask(sys.argv[1], {{'op': 'mine', 'student': '{bob}'}})))",
                 sock, env={"PYTHONPATH": str(Path(__file__).parents[2])})
    reply = json.loads(forged.stdout)
    assert reply["ok"] is False and bob in reply["error"] and "kernel" in reply["error"]
    nobody = as_user("nobody", BIN, "mine", env=env)
    assert nobody.returncode == 2 and "not on the roster" in nobody.stderr
    # nor can a student read the spool or the grading account's state behind the desk
    assert as_user(alice, "ls", opts[1]).returncode != 0

    # the whole suite graded, not released: still the visible groups only
    later = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    d = run([BIN, "deadline", "bigsum", *opts, "--executor", "local", "--now", later])
    assert d.returncode == 0, d.stderr
    assert "secret" not in json.dumps(_mine(alice, env))

    # released: the after-release group and the full score; the hidden one never
    assert run([BIN, "release", "bigsum", "--course-file", opts[3]]).returncode == 0
    a = _mine(alice, env)[0]
    groups = {t["group"] for t in a["tests"]}
    assert groups == {"sample", "secret/small"} and a["complete"] is True
    assert "secret/large" not in json.dumps(_mine(alice, env))


def test_staff_pages_and_a_students_own_page_in_headless_chromium(desk_factory, tmp_path):
    """Checked the way people look at them (the staff pages through the staff socket, as
    ssh -L brings staff there); screenshots go to $GRADELINE_SCREENSHOTS when set (the
    closing note's), else to pytest's tmp."""
    desk_run = desk_factory(VISIBILITY)
    run, sock, opts, alice, bob, base = (desk_run.run, desk_run.sock, desk_run.opts,
                                         desk_run.alice, desk_run.bob, desk_run.base)
    env = {"GRADELINE_DESK_SOCKET": str(sock)}
    files = desk_files(sock)
    ids = {}
    for who, f in ((alice, "sum.py"), (bob, "good.py")):
        r = as_user(who, BIN, "hand-in", "bigsum", files / f, env=env)
        assert r.returncode == 0, r.stderr
        ids[who] = json.loads(r.stdout)["submission"]
    assert run([BIN, "run", *opts, "--executor", "local"]).returncode == 0
    shots = Path(os.environ.get("GRADELINE_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)

    def look(url: str, name: str, *present: str, absent: tuple[str, ...] = ()) -> str:
        res = render_check(url, shots / f"{name}.png", title=present[0], size=(1100, 900))
        dom = str(res["dom"])
        for text in present:
            assert text in dom, (name, text)
        for text in absent:
            assert text not in dom, (name, text)
        assert int(str(res["screenshot_bytes"])) > 5000, name
        return dom

    issued = time.monotonic()
    link = as_user(alice, BIN, "mine", "--link", env=env)
    assert link.returncode == 0, link.stderr
    url = link.stdout.split()[0]
    assert url.startswith(f"{base}/me/")
    look(url, "student-alice", f"{alice} in desk-", ids[alice][:19], "expected", "WA",
         absent=(ids[bob][:19], "secret", bob))
    body, mac = url.rsplit("/", 1)[1].split(".")
    look(f"{base}/me/{body[:-2]}xx.{mac}", "student-forged", "not a link",
         absent=(ids[alice][:19],))
    issued = time.monotonic()  # the later of the two links
    bobs = as_user(bob, BIN, "mine", "--link", env=env).stdout.split()[0]
    assert _status(bobs) == 200 and bobs != url

    with staff_tunnel(USER, desk_run.staff_sock) as staff:  # the grading account is staff
        _staff_pages(staff, look, run, opts, alice, bob, ids)
    assert _mine(bob, env)[0]["verdict"] == "AC"  # the preview stored nothing
    time.sleep(max(0.0, 31 - (time.monotonic() - issued)))  # the links expire (30 s)
    assert _status(url) == 403 and _status(bobs) == 403


def _staff_pages(base, look, run, opts, alice, bob, ids) -> None:
    look(f"{base}/a/bigsum", "staff-assignment", "bigsum: every student", alice, bob)
    look(f"{base}/s/{alice}", "staff-student", f"{alice}: every attempt", ids[alice][:19])
    later = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    d = run([BIN, "deadline", "bigsum", *opts, "--executor", "local", "--now", later])
    assert d.returncode == 0, d.stderr
    look(f"{base}/sub/{ids[alice]}", "staff-submission", "submission", "print(0)",
         "secret/large", "hidden")
    (Path(opts[3]).parent / "bigsum/data/sample/1.ans").write_text("999\n")
    pv = run([BIN, "regrade", "--assignment", "bigsum", *opts, "--executor", "local",
              "--preview"])
    assert pv.returncode == 0, pv.stderr
    assert f"{bob}\t{ids[bob]}\tAC" in pv.stdout  # bob's AC would become WA
    look(f"{base}/a/bigsum/preview", "staff-preview", "regrade preview", "would change", bob)


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return int(r.status)
    except urllib.error.HTTPError as e:
        return int(e.code)

def _mine(student: str, env: dict[str, str]) -> list[dict[str, object]]:
    r = as_user(student, BIN, "mine", "--json", env=env)
    assert r.returncode == 0, r.stderr
    view = json.loads(r.stdout)
    assert view["student"] == student
    return view["assignments"][0]["submissions"]  # type: ignore[no-any-return]
