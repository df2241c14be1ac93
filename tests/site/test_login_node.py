"""A login node is shared (issue #43), with real accounts: the grading account (an
ordinary user) runs the desk and the web server; two students and a member of the
course's staff group have accounts on the same host. Every staff route answers the
staff account alone (over the staff socket: the kernel says who connects), never a
student, over TCP or the socket; one student's flood of stalled and oversized requests
leaves the desk's memory and the other students' answers alone; the course's hand-in
limits refuse or defer what is past them, with the reason and the next allowed time."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from ..support import BIN, COURSE_STAFF, PY, as_user

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

#: GET a path as whoever runs it: over TCP (a URL) or a Unix socket (PATH URLPATH);
#: prints the status
_GET = """
import http.client, socket, sys
class Unix(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX); self.sock.settimeout(30)
        self.sock.connect(sys.argv[1])
where, path = sys.argv[1], sys.argv[2]
if where.startswith("http://"):
    host, port = where[7:].split(":")
    c = http.client.HTTPConnection(host, int(port), timeout=30)
else:
    c = Unix("localhost")
try:
    c.request("GET", path); print(c.getresponse().status)
except OSError as e:
    print("no connection:", e)
"""


def _get(user: str, where: str | Path, path: str) -> str:
    r = as_user(user, PY, "-c", _GET, str(where), path)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def _hand_in(user: str, sock: Path, assignment: str, file: Path
             ) -> subprocess.CompletedProcess[str]:
    return as_user(user, BIN, "hand-in", assignment, file,
                   env={"GRADELINE_DESK_SOCKET": str(sock)})


def _file(sock: Path, name: str = "sum.py", text: str = "print(0)\n") -> Path:
    files = sock.parent / "files"
    files.mkdir(mode=0o755, exist_ok=True)
    f = files / name
    f.write_text(text)
    f.chmod(0o644)
    return f


def test_every_staff_route_answers_the_courses_staff_and_no_student(desk_factory,
                                                                     staff_account):
    d = desk_factory({}, COURSE_STAFF)
    sub = json.loads(_hand_in(d.alice, d.sock, "bigsum", _file(d.sock)).stdout)["submission"]
    _hand_in(d.bob, d.sock, "bigsum", _file(d.sock, "b.py", "print(1)\n"))
    assert d.run([BIN, "run", *d.opts, "--executor", "local"]).returncode == 0
    routes = ["/", "/api/snapshot", "/a/bigsum", "/api/a/bigsum", f"/s/{d.bob}",
              f"/api/s/{d.bob}", f"/sub/{sub}", f"/api/sub/{sub}", "/a/bigsum/preview",
              "/a/bigsum/similarity", "/usage", "/api/usage"]
    table = []
    for route in routes:
        got = (_get(d.alice, d.base, route), _get(d.alice, d.staff_sock, route),
               _get(staff_account, d.base, route), _get(staff_account, d.staff_sock, route))
        table.append((route, *got))
        assert got == ("403", "403", "403", "200"), (route, got)
    print("\nroute                          alice TCP  alice socket  staff TCP  staff socket")
    for row in table:
        print(f"{row[0][:30]:<30} {row[1]:>9}  {row[2]:>12}  {row[3]:>9}  {row[4]:>12}")
    # a student's own page still opens from TCP, by the link the desk signed for them
    link = as_user(d.alice, BIN, "mine", "--link",
                   env={"GRADELINE_DESK_SOCKET": str(d.sock)}).stdout.split()[0]
    assert _get(d.alice, d.base, link.removeprefix(d.base)) == "200"


#: one student's flood: N connections, half stalled mid-line, half announcing a 16 MiB
#: file and stalling after 4 MiB of it; prints how many were refused at once, then waits
_FLOOD = """
import json, socket, sys, time
path, n = sys.argv[1], int(sys.argv[2])
socks, busy = [], 0
for i in range(n):
    s = socket.socket(socket.AF_UNIX); s.connect(path); s.setblocking(False)
    try:
        if i % 2:
            s.send(b'{"op": "hand-in", "assignment": "bigsum", "name": "x"')
        else:
            s.send(json.dumps({"op": "hand-in", "assignment": "bigsum", "name": "x.py",
                               "size": 16 << 20}).encode() + b"\\n")
            sent = 0
            while sent < 4 << 20:
                sent += s.send(b"\\0" * (1 << 16))
    except OSError:
        pass
    socks.append(s)
time.sleep(0.5)
for s in socks:
    try:
        if b"busy" in s.recv(4096):
            busy += 1
    except OSError:
        pass
print(busy, flush=True)
sys.stdin.read()
"""


def _memory_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process, KiB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text()
                  .splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def test_one_accounts_flood_leaves_the_desk_and_the_others_unharmed(desk_factory):
    d = desk_factory({})
    env = {"GRADELINE_DESK_SOCKET": str(d.sock)}
    assert _hand_in(d.bob, d.sock, "bigsum", _file(d.sock)).returncode == 0  # warm
    before, _ = _memory_kib(d.desk_pid)
    flood = subprocess.Popen(["runuser", "-u", d.alice, "--", str(PY), "-c", _FLOOD,
                              str(d.sock), "200"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert flood.stdout is not None
        busy = int(flood.stdout.readline())
        t0 = time.monotonic()
        mine = as_user(d.bob, BIN, "mine", "--json", env=env)
        mine_s = time.monotonic() - t0
        t0 = time.monotonic()
        handed = _hand_in(d.bob, d.sock, "bigsum", _file(d.sock, "b2.py", "print(2)\n"))
        hand_in_s = time.monotonic() - t0
        _, peak = _memory_kib(d.desk_pid)
    finally:
        flood.communicate("", timeout=60)
    print(f"\nflood of 200 from {d.alice}: {busy} refused at once (busy); desk RSS "
          f"{before / 1024:.1f} MiB before, peak {peak / 1024:.1f} MiB; {d.bob}'s mine "
          f"{mine_s:.2f} s, hand-in {hand_in_s:.2f} s")
    assert mine.returncode == 0 and handed.returncode == 0, mine.stderr + handed.stderr
    assert busy >= 190  # all but the account's share (4) of the desk
    assert (peak - before) / 1024 < 64
    assert mine_s < 2 and hand_in_s < 2
    # the stalled ones are dropped at the request's deadline; the desk answers her again
    time.sleep(31)
    again = as_user(d.alice, BIN, "mine", "--json", env=env)
    assert again.returncode == 0, again.stderr


def test_hand_in_limits_refuse_or_defer_as_the_course_says(desk_factory):
    d = desk_factory({"limits": {"max_submissions": 2}}, None,
                     ({"name": "capped", "limits": {"per_hour": 2, "burst": 1,
                                                    "past_limit": "defer"}},))
    env = {"GRADELINE_DESK_SOCKET": str(d.sock)}
    f = _file(d.sock)
    for _ in range(2):
        assert _hand_in(d.alice, d.sock, "bigsum", f).returncode == 0
    third = _hand_in(d.alice, d.sock, "bigsum", f)
    assert third.returncode == 2 and "2 of the 2 submissions allowed" in third.stderr
    assert "no more hand-ins" in third.stderr and "Traceback" not in third.stderr
    assert _hand_in(d.bob, d.sock, "bigsum", f).returncode == 0  # hers, not his
    first = _hand_in(d.alice, d.sock, "capped", f)
    assert first.returncode == 0 and "deferred" not in first.stdout
    later = _hand_in(d.alice, d.sock, "capped", f)  # past the bucket: taken, deferred
    assert later.returncode == 0, later.stderr
    receipt = json.loads(later.stdout)
    assert receipt["deferred"] is True and "2 hand-ins an hour" in receipt["limit"]
    assert "feedback comes after your deadline" in later.stderr
    view = json.loads(as_user(d.alice, BIN, "mine", "--json", env=env).stdout)
    by = {a["name"]: a for a in view["assignments"]}
    assert by["bigsum"]["limits"]["left"] == 0 and by["bigsum"]["limits"]["used"] == 2
    assert "next_at" in by["capped"]["limits"] and by["capped"]["limits"]["deferring"]
    deferred = [s for s in by["capped"]["submissions"] if s.get("deferred")]
    assert [s["id"] for s in deferred] == [receipt["submission"]]
    text = as_user(d.alice, BIN, "mine", env=env).stdout
    assert "hand-ins used 2, left 0" in text and "would be taken but deferred" in text
