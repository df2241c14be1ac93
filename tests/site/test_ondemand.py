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

import base64
import contextlib
import http.client
import json
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..support import BIN, CHROMIUM, COURSE_STAFF, PY, USER, DeskRun, as_user, desk_files, free_port

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
HERE = Path(__file__).with_name("ondemand")
APP = "/pun/sys/gradeline"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
NEEDS = {"passenger": "passenger", "apache2": "apache2", "htpasswd": "apache2-utils"}


@dataclass
class Portal:
    url: str  # the portal's address
    root: Path
    desk: DeskRun
    course: str
    passwords: dict[str, str]


def _need() -> None:
    missing = [pkg for cmd, pkg in NEEDS.items() if shutil.which(cmd) is None and
               not Path(f"/usr/sbin/{cmd}").exists()]
    if missing or os.geteuid() != 0:
        why = f"the OnDemand test needs root and {' '.join(missing) or 'nothing else'}"
        if os.environ.get("GRADELINE_REQUIRE_SANDBOX") == "1":
            pytest.fail(why)
        pytest.skip(why)


def _start_pun(root: Path, user: str, app: Path) -> None:
    """The user's own server as OnDemand's per-user nginx would run it: Passenger,
    started as the user, on <root>/run/USER/passenger.sock (USER:www-data 0750: the
    portal reaches it, no other user does)."""
    pw = pwd.getpwnam(user)
    sockdir, private, home = root / "run" / user, root / "run" / user / "private", \
        root / "home" / user
    for d, mode, group in ((sockdir, 0o750, "www-data"), (private, 0o700, str(pw.pw_gid)),
                           (home, 0o700, str(pw.pw_gid))):
        subprocess.run(["install", "-d", "-m", oct(mode)[2:], "-o", user, "-g", group,
                        str(d)], check=True)
    r = subprocess.run(
        ["runuser", "-u", user, "--", "env", "-i", f"HOME={home}", f"USER={user}",
         f"LOGNAME={user}", "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8",
         f"TMPDIR={private}", "passenger", "start", str(app), "--engine", "builtin",
         "--socket", str(sockdir / "passenger.sock"), "--app-type", "wsgi",
         "--startup-file", str(app / "passenger_wsgi.py"), "--python", str(app / "bin/python"),
         "--environment", "production", "--min-instances", "1", "--max-pool-size", "2",
         "--daemonize", "--log-file", str(private / "passenger.log"),
         "--pid-file", str(private / "passenger.pid"), "--instance-registry-dir", str(private),
         "--disable-security-update-check", "--disable-anonymous-telemetry"],
        capture_output=True, text=True, timeout=120, cwd=app)
    assert r.returncode == 0, r.stdout + r.stderr


def _stop_pun(root: Path, user: str) -> None:
    private = root / "run" / user / "private"
    subprocess.run(["runuser", "-u", user, "--", "passenger", "stop", "--pid-file",
                    str(private / "passenger.pid")], capture_output=True, timeout=60, cwd="/")


@pytest.fixture
def portal(desk_factory, staff_account) -> Iterator[Portal]:
    _need()
    d = desk_factory({}, COURSE_STAFF)
    course = yaml.safe_load(Path(d.opts[3]).read_text())["course"]
    root = Path(tempfile.mkdtemp(prefix="gradeline-ood-", dir="/var/tmp"))
    root.chmod(0o755)  # the portal (www-data) and every user pass through
    users = [d.alice, d.bob, staff_account]
    passwords = {u: secrets.token_urlsafe(12) for u in users}
    port = free_port()
    try:
        # the app, installed as a site installs a system app
        app = root / "apps/sys/gradeline"
        config = root / "gradeline-ondemand.yaml"
        config.write_text(yaml.safe_dump({"title": "Grading", "courses": [
            {"name": course, "desk": str(d.sock), "staff": str(d.staff_sock)}]}))
        r = subprocess.run([str(BIN), "ondemand", "install", str(app), "--config", str(config),
                            "--python", str(PY)], capture_output=True, text=True, check=False)
        assert r.returncode == 0, r.stderr
        subprocess.run(["chmod", "-R", "a+rX", str(root / "apps")], check=True)
        (root / "apache").mkdir()
        (root / "run").mkdir()
        for u in users:
            subprocess.run(["htpasswd", "-b", "-B", *(["-c"] if u == users[0] else []),
                            str(root / "apache/htpasswd"), u, passwords[u]],
                           check=True, capture_output=True)
        conf = (HERE / "portal.conf.in").read_text().replace("@ROOT@", str(root)) \
            .replace("@PORT@", str(port)).replace("@LUA@", str(root / "apache/pun_proxy.lua"))
        shutil.copy(HERE / "pun_proxy.lua", root / "apache/pun_proxy.lua")
        (root / "apache/httpd.conf").write_text(conf)
        subprocess.run(["chmod", "-R", "a+rX", str(root / "apache")], check=True)
        for u in users:
            _start_pun(root, u, app)
        a = subprocess.run(["apache2", "-f", str(root / "apache/httpd.conf"), "-k", "start"],
                           capture_output=True, text=True, check=False)
        assert a.returncode == 0, a.stderr
        url = f"http://127.0.0.1:{port}"
        for _ in range(100):
            if _request(url, "GET", "/", None)[0] in (200, 404):
                break
            time.sleep(0.1)
        yield Portal(url, root, d, course, passwords)
    finally:
        for u in users:
            _stop_pun(root, u)
        pid = root / "apache/httpd.pid"
        if pid.exists():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid.read_text()), 15)
            for _ in range(100):
                if not pid.exists():
                    break
                time.sleep(0.1)
        shutil.rmtree(root, ignore_errors=True)


def _request(url: str, method: str, path: str, auth: tuple[str, str] | None,
             body: bytes = b"", headers: dict[str, str] | None = None) -> tuple[int, str]:
    """(status, body) of a request to the portal, logged in as ``auth``."""
    host, port = url.removeprefix("http://").split(":")
    h = dict(headers or {})
    if auth:
        h["Authorization"] = "Basic " + base64.b64encode(":".join(auth).encode()).decode()
    c = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        c.request(method, path, body=body or None, headers=h)
        r = c.getresponse()
        return r.status, r.read().decode(errors="replace")
    except OSError as e:
        return 0, str(e)
    finally:
        c.close()


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


def _drive(tools: Path, p: Portal, steps: list[dict[str, Any]],
           work: Path) -> list[dict[str, Any]]:
    job = work / "job.json"
    job.write_text(json.dumps({"portal": p.url, "chromium": str(CHROMIUM), "tags": TAGS,
                               "steps": steps}))
    r = subprocess.run(["node", str(HERE / "drive.js"), str(job)], capture_output=True,
                       text=True, timeout=600, env={**os.environ, "NODE_PATH": str(tools)})
    assert r.returncode == 0, r.stderr[-3000:]
    out: list[dict[str, Any]] = json.loads(r.stdout.splitlines()[-1])
    for res in out:
        assert not res["elsewhere"], res
        serious = [v for v in res["violations"] if v["impact"] in ("serious", "critical")]
        assert not serious, (res["path"], serious)
    return out


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
    got = _drive(browser_tools, p, [
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
    got = _drive(browser_tools, p, [
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
    assert _request(p.url, "GET", page, (alice, "wrong"))[0] == 401
    assert _request(p.url, "GET", page, None)[0] == 401
    status, text = _request(p.url, "GET", page, a, headers={"X-Forwarded-User": bob})
    assert status == 200 and f"{alice} in" in text and f"{bob} in" not in text
    own, bobs = _csrf(text), _csrf(_request(p.url, "GET", page, b)[1])
    for token, extra, why in ((bobs, {}, "the form expired"),
                              ("", {}, "the form expired"),
                              (own, {"Origin": "http://evil.example"}, "another site")):
        body, ctype = _multipart({"csrf": token, "assignment": "bigsum"}, files / "sum.py")
        status, text = _request(p.url, "POST", page + "hand-in", a, body,
                                {"Content-Type": ctype, **extra})
        assert status == 403 and why in text, (status, text[-500:])
    # the real form still works, and the desk names the kernel's user, not a field
    body, ctype = _multipart({"csrf": own, "assignment": "bigsum", "student": bob},
                             files / "sum.py")
    status, text = _request(p.url, "POST", page + "hand-in", a, body, {"Content-Type": ctype})
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
