"""gradeline's Open OnDemand app run the way OnDemand runs apps: behind the portal's
Apache (the site's login, then the user's own server on that user's Unix socket, as
mod_ood_proxy does), in a Passenger started as each logged-in user (Debian's Passenger
standalone, one per user), with the course's desk and staff pages run by the grading
account. Students hand in and see their own results in headless Chromium, the course's
TA sees the staff pages; a student asking for them, forging the portal's user header,
posting from another site or with another user's form, or knocking on another user's
socket gets a refusal and hands nothing in. axe-core finds no serious violation on the
pages the portal shows. Screenshots go to $GRADELINE_SCREENSHOTS when set.

Needs root, Debian's passenger, apache2 (mod_lua) and apache2-utils, node, npm and
chromium (``make test`` installs them)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..support import (
    BIN,
    COURSE_STAFF,
    OOD_APP,
    PY,
    USER,
    Portal,
    as_user,
    desk_files,
    drive_portal,
    portal_request,
)

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
APP = OOD_APP


@pytest.fixture
def portal(desk_factory, staff_account, portal_factory) -> Iterator[Portal]:
    d = desk_factory({}, COURSE_STAFF)
    yield portal_factory(d, [d.alice, d.bob, staff_account])


def _multipart(fields: dict[str, str], file: Path) -> tuple[bytes, str]:
    b = secrets.token_hex(8)
    parts = [f'--{b}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
             for k, v in fields.items()]
    parts.append(f'--{b}\r\nContent-Disposition: form-data; name="file"; filename='
                 f'"{file.name}"\r\nContent-Type: text/plain\r\n\r\n'.encode()
                 + file.read_bytes() + f"\r\n--{b}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={b}"


def _csrf(page: str) -> str:
    return page.split('name="csrf" value="', 1)[1].split('"', 1)[0]


def test_students_and_staff_in_the_portal(portal: Portal, browser_tools: Path,
                                          tmp_path: Path, staff_account: str) -> None:
    p, d = portal, portal.desk
    alice, bob, ta = d.alice, d.bob, staff_account
    page = f"{APP}/c/{p.course}/"
    files = desk_files(d.sock)
    shots = Path(os.environ.get("GRADELINE_SCREENSHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    me = {u: {"user": u, "password": p.passwords[u], "axe": True} for u in (alice, bob, ta)}

    # students hand in through the page's form, each as themselves
    got = drive_portal(browser_tools, p, [
        {**me[alice], "path": f"{APP}/", "shot": str(shots / "ondemand-home.png")},
        {**me[alice], "path": page, "handin": {"assignment": "bigsum",
                                               "file": str(files / "sum.py")},
         "shot": str(shots / "ondemand-handin.png")},
        {**me[bob], "path": page, "handin": {"assignment": "bigsum",
                                             "file": str(files / "good.py")},
         "viewport": [360, 740], "shot": str(shots / "ondemand-handin-phone.png")},
        {**me[ta], "path": f"{APP}/"},
    ], tmp_path)
    home, a_in, b_in, ta_home = got
    assert home["status"] == 200 and p.course in home["text"]
    assert "staff pages" not in home["text"] and "staff pages" in ta_home["text"]
    for who, res, f in ((alice, a_in, "sum.py"), (bob, b_in, "good.py")):
        assert res["status"] == 200 and f"{who} in {p.course}" in res["text"], res["text"]
        assert "Receipt" in res["text"] and f'"student": "{who}"' in res["text"]
        assert f"Handed in {f} for bigsum" in res["text"]
    # the app runs as each user, in their own Passenger; none of it as root or as the
    # grading account (which runs the desk and the staff server only)
    def apps_of(user: str) -> list[str]:
        return subprocess.run(["pgrep", "-u", user, "-f", "wsgi-loader|PassengerAgent"],
                              capture_output=True, text=True).stdout.split()
    for u in (alice, bob, ta):
        assert apps_of(u), f"no Passenger process of {u}"
    assert not apps_of("root") and not apps_of(USER)

    assert d.run([BIN, "run", *d.opts, "--executor", "local"]).returncode == 0
    got = drive_portal(browser_tools, p, [
        {**me[alice], "path": page, "shot": str(shots / "ondemand-student.png")},
        {**me[bob], "path": page},
        {**me[alice], "path": f"{APP}/c/{p.course}/staff/a/bigsum"},
        {**me[ta], "path": f"{APP}/c/{p.course}/staff/a/bigsum",
         "shot": str(shots / "ondemand-staff.png")},
        {**me[bob], "path": page, "viewport": [360, 740],
         "shot": str(shots / "ondemand-student-phone.png")},
        {**me[ta], "path": f"{APP}/c/{p.course}/staff/s/{alice}", "viewport": [360, 740],
         "shot": str(shots / "ondemand-staff-phone.png")},
    ], tmp_path)
    a_page, b_page, a_staff, ta_staff, b_phone, ta_phone = got
    assert "WA" in a_page["text"] and bob not in a_page["text"], a_page["text"]
    assert "AC" in b_page["text"] and alice not in b_page["text"], b_page["text"]
    assert a_staff["status"] == 403 and f"{alice} is not staff" in a_staff["text"]
    assert ta_staff["status"] == 200 and alice in ta_staff["text"] and bob in ta_staff["text"]
    assert b_phone["status"] == 200 and ta_phone["status"] == 200 and "WA" in ta_phone["text"]
    _refusals(p, files, alice, bob)


def _refusals(p: Portal, files: Path, alice: str, bob: str) -> None:
    """A student's tricks: each refused, nothing handed in."""
    page = f"{APP}/c/{p.course}/"
    a, b = (alice, p.passwords[alice]), (bob, p.passwords[bob])
    before = _count(p, alice)
    assert portal_request(p.url, "GET", page, (alice, "wrong"))[0] == 401
    assert portal_request(p.url, "GET", page, None)[0] == 401
    status, text = portal_request(p.url, "GET", page, a, headers={"X-Forwarded-User": bob})
    assert status == 200 and f"{alice} in" in text and f"{bob} in" not in text
    own, bobs = _csrf(text), _csrf(portal_request(p.url, "GET", page, b)[1])
    for token, extra, why in ((bobs, {}, "the form expired"),
                              ("", {}, "the form expired"),
                              (own, {"Origin": "http://evil.example"}, "another site")):
        body, ctype = _multipart({"csrf": token, "assignment": "bigsum"}, files / "sum.py")
        status, text = portal_request(p.url, "POST", page + "hand-in", a, body,
                                {"Content-Type": ctype, **extra})
        assert status == 403 and why in text, (status, text[-500:])
    # the real form still works, and the desk names the kernel's user, not a field
    body, ctype = _multipart({"csrf": own, "assignment": "bigsum", "student": bob},
                             files / "sum.py")
    status, text = portal_request(p.url, "POST", page + "hand-in", a, body, {"Content-Type": ctype})
    assert status == 200 and f"&quot;student&quot;: &quot;{alice}&quot;" in text
    assert _count(p, alice) == before + 1 and _count(p, bob) == 1
    # another user's server is not reachable from a student's account
    knock = as_user(alice, PY, "-c", "import socket,sys; s=socket.socket(socket.AF_UNIX); "
                    "s.connect(sys.argv[1])", str(p.root / "run" / bob / "passenger.sock"))
    assert knock.returncode != 0 and "Permission denied" in knock.stderr


def _count(p: Portal, who: str) -> int:
    r = as_user(who, BIN, "mine", "--json", env={"GRADELINE_DESK_SOCKET": str(p.desk.sock)})
    assert r.returncode == 0, r.stderr
    return len(json.loads(r.stdout)["assignments"][0]["submissions"])


def test_ondemand_install_refuses_a_missing_python(tmp_path: Path) -> None:
    r = subprocess.run([str(BIN), "ondemand", "install", str(tmp_path / "app"), "--python",
                        str(tmp_path / "nope")], capture_output=True, text=True)
    assert r.returncode == 2 and "no such interpreter" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "app").exists()


def test_ondemand_install_runs_a_python_whose_path_has_a_space(tmp_path: Path) -> None:
    spaced = tmp_path / "site env" / "python3"
    spaced.parent.mkdir()
    spaced.symlink_to(sys.executable)
    r = subprocess.run([str(BIN), "ondemand", "install", str(tmp_path / "app"), "--python",
                        str(spaced)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(tmp_path / "app/bin/python"), "-c", "print('ok')"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout == "ok\n", out.stderr
