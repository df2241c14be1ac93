"""Hand-ins per second through the student desk: the rush's front door.

The desk runs as an ordinary grading account (as on a site), with its own PostgreSQL;
``--students`` real accounts (``gl-desk-NNN``, created when missing) each run a client
process (as themselves: the kernel names them to the desk) that hands in
``--per-student`` distinct files as fast as the desk answers, ``--concurrency`` at a
time. Every hand-in is a real one: spooled (fsync'd), its receipt signed and stored.
Reported: hand-ins per second over the whole rush, the latency of one hand-in (p50,
p95), that every receipt is in the database and in the spool, and the CPU seconds per
hand-in of the desk, PostgreSQL and the clients -- the part whose share fills the
machine is the bottleneck.

Run on purpose, as root (it makes the accounts)::

    .venv/bin/python bench/desk_rush.py --students 40 --per-student 50

Writes ``bench/results/desk/summary.json`` and ``summary.txt``.
"""

from __future__ import annotations

import argparse
import json
import pwd
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from benchlib import cpu_by_part

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "results" / "desk"
PY = Path(sys.executable)
BIN = PY.parent / "gradeline"
GRADER = "gl-desk-grader"
#: which part a process is, by its command line (the clients report their own CPU)
PARTS = (("desk", " desk "), ("postgres", "postgres"))

CLIENT = """
import json, sys, threading, time
from pathlib import Path
from grader.adapters.desk_client import ask
sock, n, conc, files = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
lat, errors, lock = [], [], threading.Lock()
todo = list(range(n))
def work():
    while True:
        with lock:
            if not todo:
                return
            i = todo.pop()
        t0 = time.monotonic()
        r = ask(sock, {"op": "hand-in", "assignment": "bigsum", "name": "sum.py"},
                files / f"{i}.py")
        with lock:
            lat.append(time.monotonic() - t0)
            if not r.get("ok"):
                errors.append(r.get("error"))
print("ready", flush=True)
sys.stdin.readline()
ts = [threading.Thread(target=work) for _ in range(conc)]
for t in ts: t.start()
for t in ts: t.join()
t = __import__("os").times()
print(json.dumps({"lat": lat, "errors": errors[:5], "failed": len(errors),
                  "cpu_s": t.user + t.system}), flush=True)
"""


def account(name: str) -> int:
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", name], check=True)
        return pwd.getpwnam(name).pw_uid


def as_grader(work: Path, *argv: object, popen: bool = False) -> Any:
    env = ["env", "-i", f"HOME={work}", f"PATH={PY.parent}:/usr/bin:/bin",
           f"GRADELINE_STATE_DIR={work / 'state'}", "LC_ALL=C.UTF-8"]
    cmd = ["runuser", "-u", GRADER, "--", *env, *map(str, argv)]
    if popen:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit(f"{argv}: {r.stdout}{r.stderr}")
    return r.stdout


def setup(work: Path, students: list[str]) -> tuple[Path, list[str]]:
    """The course (bigsum, every bench student on the roster), owned by the grader."""
    uid = account(GRADER)
    course = work / "course"
    course.mkdir(parents=True)
    shutil.copytree(REPO / "grader/examples/bigsum", course / "bigsum")
    (course / "roster.csv").write_text("student,name,email\n" + "".join(
        f"{s},{s},{s}@x\n" for s in students))
    (course / "course.yaml").write_text(yaml.safe_dump({
        "course": "deskbench", "roster": "roster.csv", "assignments": [
            {"name": "bigsum", "package": "bigsum", "deadline": "2099-01-01 00:00"}]}))
    subprocess.run(["chown", "-R", f"{uid}:{uid}", str(work)], check=True)
    return work / "desk" / "desk.sock", ["--spool", str(work / "spool"), "--course-file",
                                          str(course / "course.yaml")]


def client_files(work: Path, student: str, n: int) -> Path:
    d = work / "files" / student
    d.mkdir(parents=True)
    for i in range(n):
        (d / f"{i}.py").write_text(f"# {student} {i}\nprint(sum(range(10)))\n")
    subprocess.run(["chmod", "-R", "a+rX", str(work / "files")], check=True)
    return d


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=40)
    ap.add_argument("--per-student", type=int, default=50)
    ap.add_argument("--concurrency", type=int, default=2, help="hand-ins in flight per student")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    students = [f"gl-desk-{i:03d}" for i in range(args.students)]
    for s in students:
        account(s)
    work = Path(tempfile.mkdtemp(prefix="gradeline-deskbench-", dir="/var/tmp"))
    work.chmod(0o755)
    sock, opts = setup(work, students)
    as_grader(work, BIN, "db", "start")
    desk = as_grader(work, BIN, "desk", "--desk", sock, *opts, popen=True)
    try:
        for _ in range(300):
            if sock.exists():
                break
            time.sleep(0.1)
        clients = [subprocess.Popen(
            ["runuser", "-u", s, "--", "env", "-i", "PATH=/usr/bin:/bin",
             f"PYTHONPATH={REPO}", str(PY), "-c", CLIENT, str(sock), str(args.per_student),
             str(args.concurrency), str(client_files(work, s, args.per_student))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for s in students]
        for c in clients:
            assert c.stdout is not None and c.stdout.readline().strip() == "ready"
        cpu0, t0 = cpu_by_part(PARTS), time.monotonic()
        for c in clients:
            assert c.stdin is not None
            c.stdin.write("go\n")
            c.stdin.flush()
        results = [json.loads(c.communicate(timeout=3600)[0].splitlines()[-1])
                   for c in clients]
        wall = time.monotonic() - t0
        cpu1 = cpu_by_part(PARTS)
    finally:
        desk.terminate()
        desk.communicate(timeout=60)
    n = args.students * args.per_student
    lat = sorted(x for r in results for x in r["lat"])
    failed = sum(r["failed"] for r in results)
    stored = int(as_grader(work, PY, "-c", "import sys, psycopg; from grader.compose.context "
                           "import Context; from grader.settings import load; s = load(); "
                           "c = psycopg.connect(Context(s, s.state_dir).db_url()); "
                           "print(c.execute('SELECT count(*) FROM receipts').fetchone()[0])"
                           ).split()[-1])
    spooled = len(list((work / "spool" / "new").iterdir()))
    per = {k: round(1000 * (cpu1.get(k, 0.0) - cpu0.get(k, 0.0)) / n, 2)
           for k in ("desk", "postgres")}
    per["clients"] = round(1000 * sum(r["cpu_s"] for r in results) / n, 2)
    summary = {"students": args.students, "per_student": args.per_student,
               "concurrency": args.concurrency, "hand_ins": n, "failed": failed,
               "wall_s": round(wall, 2), "per_s": round(n / wall, 1),
               "p50_ms": round(1000 * statistics.median(lat), 1),
               "p95_ms": round(1000 * lat[int(0.95 * (len(lat) - 1))], 1),
               "receipts_stored": stored, "spooled": spooled, "cpu_ms_per_hand_in": per,
               "errors": [e for r in results for e in r["errors"]][:5],
               "commit": subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short",
                                         "HEAD"], capture_output=True, text=True).stdout.strip(),
               "date": time.strftime("%Y-%m-%d")}
    as_grader(work, BIN, "db", "stop")
    shutil.rmtree(work, ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    line = (f"{n} hand-ins from {args.students} accounts ({args.concurrency} at a time each): "
            f"{summary['per_s']}/s, p50 {summary['p50_ms']} ms, p95 {summary['p95_ms']} ms; "
            f"{failed} failed; receipts stored {stored}, spooled {spooled}; CPU ms per "
            f"hand-in: desk {per['desk']}, PostgreSQL {per['postgres']}, clients "
            f"{per['clients']}")
    with (args.out / "summary.txt").open("a") as f:
        f.write(f"{summary['date']} {summary['commit']}: {line}\n")
    print(line)


if __name__ == "__main__":
    main()
