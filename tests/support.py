"""What the tests share, in one place (the conftest files hold fixtures only): the
paths and the ``gradeline`` of this venv and a runner for it, process scans, the
outside systems a test starts of its own (a database server, a staff tunnel, a web
server), the site tier's accounts, in-memory fakes of the pipeline's ports, and
writers of courses, packages and LMS files."""

from __future__ import annotations

import base64
import contextlib
import csv
import hashlib
import http.client
import io
import itertools
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import psycopg
import pytest
import yaml

from grader.adapters.spool import Spool
from grader.core.errors import StoreError
from grader.core.jobs import GradingJob, JudgeFault, Outcome
from grader.core.record import SubmissionRecord
from grader.core.result import CompileResult, SubmissionResult, TestResult
from grader.core.samples import ShardSample
from grader.core.verdict import Verdict, submission_verdict
from grader.formats.load import load_problem
from grader.formats.problem import Problem
from grader.formats.scoring import score_submission
from grader.measure.corpus import generate_course

ROOT = Path(__file__).resolve().parent.parent
PY = Path(sys.executable)
#: the command under test: the venv's own entry point
BIN = PY.parent / "gradeline"
EXAMPLES = ROOT / "grader" / "examples"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: How many times slower than real hardware these tests run: an emulated node
#: (bench/cgroup2/node.sh) sets it, and the time limits of the sandbox contract and
#: the hostile corpus are stretched by it; 1 everywhere else.
SLOWDOWN = float(os.environ.get("GRADELINE_TEST_SLOWDOWN", "1"))


def gl(*args: object, env: Mapping[str, str] | None = None, timeout: float = 1800,
       cwd: Path | None = None, ok: bool = False) -> subprocess.CompletedProcess[str]:
    """``gradeline ARGS`` with ``env`` over this process's environment; ``ok``: fail the
    test (with the command's output) unless it exits 0."""
    r = subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True,
                       timeout=timeout, cwd=cwd, check=False,
                       env={**os.environ, **(env or {})})
    if ok:
        assert r.returncode == 0, f"gradeline {' '.join(map(str, args))}\n{r.stdout}\n{r.stderr}"
    return r


def db_env(db: str, conf: str | None = None) -> dict[str, str]:
    """This process's environment with the test's database (and cluster), no crash
    points armed."""
    out = {**os.environ, "GRADELINE_DB_URL": db}
    if conf is not None:
        out["SLURM_CONF"] = conf
    out.pop("GRADELINE_FAULT", None)
    return out

# -- processes ---------------------------------------------------------------------
def proc_files(name: str):
    """(pid, bytes of /proc/<pid>/<name>) for every process still readable: the one
    scan behind the "nothing survives" checks (a process may exit mid-scan)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            yield pid, Path(f"/proc/{pid}/{name}").read_bytes()
        except OSError:
            continue


def descendants(root: int | None = None) -> set[str]:
    """The pids below ``root`` (default: this test process) in the process tree. A
    sandboxed run's processes stay below the container that this process started (an
    orphan inside a PID namespace goes to that namespace's init, not to the machine's),
    so a leak check over these sees its own test's processes and nobody else's."""
    parent: dict[str, str] = {}
    for pid, stat in proc_files("stat"):
        fields = stat.rsplit(b")", 1)[-1].split()
        if len(fields) > 1:
            parent[pid] = fields[1].decode()
    below: set[str] = set()
    frontier = {str(root if root is not None else os.getpid())}
    while frontier:
        frontier = {pid for pid, pp in parent.items() if pp in frontier} - below
        below |= frontier
    return below


_SLEEPS = itertools.count(1)


def own_sleep(seconds: int) -> str:
    """A ``sleep`` duration no other process on the machine has: ``seconds`` and a
    fraction unique to this test process and call, so that a "nothing survived" check
    finds what its own test started and never another test's (a Slurm job's ``sleep
    300``, a person's shell)."""
    return f"{seconds}.{os.getpid():07d}{next(_SLEEPS):03d}"


def sleeping(duration: str) -> list[str]:
    """The pids of ``sleep DURATION`` processes still alive (see ``own_sleep``)."""
    want = f"sleep\0{duration}\0".encode()
    return [pid for pid, cmd in proc_files("cmdline") if cmd == want or
            cmd.endswith(b"/" + want)]

# -- outside systems a test starts -------------------------------------------------
def unavailable(reason: str) -> None:
    if os.environ.get("GRADELINE_REQUIRE_SANDBOX") == "1":
        pytest.fail(f"sandbox required (GRADELINE_REQUIRE_SANDBOX=1) but {reason}")
    pytest.skip(reason)


CHROMIUM = Path("/usr/bin/chromium")


BROWSER_TOOLS = ROOT / "build/tools/browser"


@contextlib.contextmanager
def own_local_server():
    """A local PostgreSQL of its own, made by the project's code in a scratch state dir
    (the session's `pg_url` one stays up for the other tests)."""
    from grader.adapters.store.server import LocalServer

    if os.environ.get("GRADELINE_TEST_DB_URL"):
        pytest.skip("needs PostgreSQL server binaries to start a server of its own")
    state = Path(tempfile.mkdtemp(prefix="gradeline-pg2-", dir="/var/tmp"))
    state.chmod(0o755)
    s = LocalServer(state)
    try:
        s.start()
        yield s, state
    finally:
        s.stop("immediate")
        shutil.rmtree(state, ignore_errors=True)


SLURM_NODES = 2  # two slurmd "nodes" on this machine, one core each


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (for a server a test starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: what ``ssh -L PORT:SOCKET host`` does on the login node's side: each TCP connection
#: to PORT relayed to SOCKET, connected as the account running it
_TUNNEL = """
import asyncio, sys
async def pipe(r, w):
    try:
        while data := await r.read(65536):
            w.write(data); await w.drain()
    finally:
        w.close()
async def relay(cr, cw):
    sr, sw = await asyncio.open_unix_connection(sys.argv[2])
    await asyncio.gather(pipe(cr, sw), pipe(sr, cw), return_exceptions=True)
async def main():
    server = await asyncio.start_server(relay, "127.0.0.1", int(sys.argv[1]))
    print("ready", flush=True)
    async with server:
        await server.serve_forever()
asyncio.run(main())
"""


@contextlib.contextmanager
def staff_tunnel(user: str | None, sock: Path) -> Iterator[str]:
    """A browser's way to the staff socket as ``user`` (None: this process's), as
    ``ssh -L`` gives staff: yields the base URL of a local port relayed to ``sock``."""
    port = free_port()
    as_them = ["runuser", "-u", user, "--", "env", "-i", "PATH=/usr/bin:/bin"] if user else []
    p = subprocess.Popen([*as_them, "/usr/bin/python3", "-c", _TUNNEL, str(port), str(sock)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        yield f"http://127.0.0.1:{port}"
    finally:
        p.terminate()
        p.communicate(timeout=30)


@contextlib.contextmanager
def running_web(args: list[str], env: dict[str, str]) -> Iterator[str]:
    """``gradeline web ARGS`` until the block ends, its staff pages reached as staff
    reach them (its staff socket, relayed as this process's account): yields the base
    URL once it answers."""
    import time

    with tempfile.TemporaryDirectory(prefix="gl-web-") as tmp:
        sock = Path(tmp) / "staff.sock"
        web = subprocess.Popen([str(BIN), "web", *args,
                                "--port", str(free_port()), "--staff-socket", str(sock)],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(150):
                if sock.exists():
                    break
                time.sleep(0.2)
            with staff_tunnel(None, sock) as base:
                for _ in range(100):
                    try:
                        urllib.request.urlopen(f"{base}/healthz", timeout=2).close()
                        break
                    except OSError:
                        time.sleep(0.2)
                yield base
        finally:
            web.terminate()
            web.wait(timeout=30)

# -- accounts (the site tier) ------------------------------------------------------
ALICE, BOB = "gradeline-alice", "gradeline-bob"  # student accounts
CAROL = "gradeline-carol"  # a third student (teams: the one outside the team)
USER = "gradeline-ci"
TA = "gradeline-ta"
TA2 = "gradeline-ta2"  # a second member of the staff group (grading by hand)
STAFF_GROUP = "gradeline-staff"
COURSE_STAFF = {"staff": {"groups": [STAFF_GROUP]}}


def site_required(reason: str) -> None:
    if os.environ.get("GRADELINE_REQUIRE_SANDBOX") == "1":
        pytest.fail(f"site-user tier required but {reason}")
    pytest.skip(reason)


def as_user(user: str, *argv: str | Path, env: dict[str, str] | None = None,
            cwd: str = "/", timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``argv`` run as ``user`` (runuser), with a clean environment plus ``env``."""
    envs = [f"{k}={v}" for k, v in (env or {}).items()]
    return subprocess.run(["runuser", "-u", user, "--", "env", "-i", "PATH=/usr/bin:/bin",
                           "LC_ALL=C.UTF-8", *envs, *map(str, argv)],
                          capture_output=True, text=True, timeout=timeout, cwd=cwd)


def answers(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/healthz", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


@dataclass
class DeskRun:
    """A desk and a web server running as the grading account for a course of bigsum."""

    run: Any  # as the grading account (site_user's runner)
    sock: Path  # the desk's socket
    staff_sock: Path  # the web server's staff socket
    opts: list[Any]  # --spool, --course-file
    alice: str
    bob: str
    base: str  # the web server's TCP address
    desk_pid: int

# -- fakes of the pipeline's ports -------------------------------------------------
class MemoryStore:
    """The ResultStore port in memory; ``down`` makes every call fail like a lost DB."""

    def __init__(self) -> None:
        self.subs: dict[str, SubmissionRecord] = {}
        self.results: dict[tuple[str, str], SubmissionResult] = {}
        self.reused: dict[tuple[str, str], str | None] = {}
        self.metrics: dict[str, list[ShardSample]] = {}
        self.down = False
        self.times_stored: dict[str, int] = {}  # spool id -> records of it ingested

    def _check(self) -> None:
        if self.down:
            raise StoreError("cannot connect to the results database: down")

    def migrate(self) -> list[str]:
        self._check()
        return []

    def close(self) -> None:
        pass

    def ingest(self, records: Iterable[SubmissionRecord]) -> int:
        self._check()
        new = 0
        for r in records:
            self.times_stored[r.spool_id] = self.times_stored.get(r.spool_id, 0) + 1
            self.subs[r.spool_id] = r
            if r.result is not None and (r.spool_id, r.result.problem_version) not in \
                    self.results:
                self.results[(r.spool_id, r.result.problem_version)] = r.result
                self.reused[(r.spool_id, r.result.problem_version)] = r.reused_from
                new += 1
        return new

    def ingest_metrics(self, batch_id: str, samples: Iterable[ShardSample]) -> int:
        self._check()
        self.metrics[batch_id] = list(samples)
        return len(self.metrics[batch_id])

    def current(self, spool_id: str) -> SubmissionResult:
        return [r for (s, _), r in self.results.items() if s == spool_id][-1]

    def stored_spool_ids(self, spool_ids: Iterable[str]) -> set[str]:
        self._check()
        return {s for s in spool_ids if s in self.subs}

    def reusable(self, version: str, content_hash: str) -> tuple[str, SubmissionResult] | None:
        self._check()
        for (sid, v), r in self.results.items():
            if v == version and self.subs[sid].content_hash == content_hash and \
                    self.reused[(sid, v)] is None and r.verdict is not Verdict.JE:
                return sid, r
        return None

    def outdated(self, course: str, assignment: str, version: str) -> list[str]:
        return [sid for sid, rec in self.subs.items() if rec.assignment == assignment
                and rec.result is not None and rec.result.problem_version != version]

    def status(self, course: str) -> list[tuple[str, str, int]]:
        return []


class FakeExecutor:
    """Grades by looking at the source: WA if it holds "WRONG", else AC; a source
    holding "BREAK" is a judge fault, one holding "NOLANG" the submission's fault."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.dispatched: list[str] = []
        self.left_behind: list[Outcome] = []
        self.shard_samples: list[ShardSample] = []

    def run(self, jobs: Sequence[GradingJob]) -> Iterator[Outcome]:
        for job in jobs:
            self.dispatched.append(job.key)
            src = Path(job.source)
            files = [src] if src.is_file() else [p for p in src.rglob("*") if p.is_file()]
            text = "".join(p.read_text() for p in files)
            if "BREAK" in text:
                yield Outcome(job.key, JudgeFault("the sandbox broke"), "t0", "t1")
                continue
            if "NOLANG" in text:
                yield Outcome(job.key, JudgeFault("no source file", "submission"), "t0", "t1")
                continue
            yield Outcome(job.key, fake_result(self.problem, "WRONG" not in text, text), "t0",
                          "t1")

    def collected(self) -> Iterator[Outcome]:
        return iter(self.left_behind)

    def wait_active(self) -> None:
        pass

    def samples(self) -> list[ShardSample]:
        return self.shard_samples


def fake_result(problem: Problem, ok: bool, text: str) -> SubmissionResult:
    _, groups = score_submission(problem, [])
    return SubmissionResult(problem.short_name, problem.version, "x", str(hash(text)), "cpp",
                            Verdict.AC if ok else Verdict.WA, 100.0 if ok else 0.0,
                            problem.max_score, None, (), groups)


def make_result(verdicts: dict[str, Verdict]) -> SubmissionResult:
    """bigsum's result with these tests' verdicts (the others accepted)."""
    p = load_problem(EXAMPLES / "bigsum")
    tests = [TestResult(c.name, c.group, verdicts.get(c.name, Verdict.AC), cpu_time_s=0.01,
                        wall_time_s=0.02, feedback="" if verdicts.get(c.name) is None else "bad")
             for c in p.cases]
    score, groups = score_submission(p, tests)
    return SubmissionResult(p.short_name, p.version, "sub.cpp", "ab" * 32, "cpp",
                            submission_verdict([t.verdict for t in tests]), score, p.max_score,
                            CompileResult(ok=True), tuple(tests), groups,
                            {"runtime": "bwrap"}, {"total_s": 1.0})


def fake_record(i, version="v1", tests=3):
    result = SubmissionResult(
        "a", version, f"spool:id{i}", f"h{i % 5}", "cpp", Verdict.AC, 100.0, 100.0, None,
        tuple(TestResult(f"t{k}", "g", Verdict.AC, 0.01, 0.02, 1000, 0) for k in range(tests)),
        ())
    return SubmissionRecord(
        spool_id=f"id{i}", course="c", assignment="a", student=f"s{i}",
        submitted_at="2026-11-20T10:00:00+00:00", batch_id="b1", state="graded",
        arrived_at="2026-11-20T10:00:00+00:00", claimed_at="2026-11-20T10:00:01+00:00",
        content_hash=f"h{i % 5}", language="cpp", result=result)

# -- courses, packages, spools and LMS files ---------------------------------------
BERLIN = ZoneInfo("Europe/Berlin")


COURSE_ROSTER = """student,name,email,extension,sis_id,section
alice,Alice Adams,alice@example.org,,S1,A
bob,Bob Brown,bob@example.org,2d,S2,B
"""


def course_yaml(tmp_path: Path, **over: object) -> Path:
    """A course file (two assignments, Berlin time, late days and a penalty) and its
    roster in ``tmp_path``; ``over`` replaces top-level keys."""
    data: dict[str, object] = {
        "course": "cs101", "timezone": "Europe/Berlin", "roster": "roster.csv",
        "late_days": 2,
        "late": {"penalty_per_day": 10, "cap": 50, "max_late": "4d"},
        "assignments": [
            {"name": "hw1", "package": "pk/hw1", "deadline": "2026-12-01 23:59",
             "points": 20},
            {"name": "hw2", "package": "pk/hw2", "deadline": "2026-12-08 23:59",
             "counts": "best", "late_days": 1},
        ],
    }
    data.update(over)
    (tmp_path / "roster.csv").write_text(COURSE_ROSTER)
    p = tmp_path / "course.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def course_at(day: int, hour: int, minute: int = 0) -> datetime:
    """A time in December 2026, in the course's zone (``course_yaml``'s)."""
    return datetime(2026, 12, day, hour, minute, tzinfo=BERLIN)


def write_files(root: Path, files: dict[str, str | None]) -> Path:
    """A package from {relative path: text}; a value of None makes a directory."""
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            p.mkdir(exist_ok=True)
        else:
            p.write_text(text)
    return root


def add_cases(root: Path, group: str, n: int, start: int = 1) -> None:
    """``n`` test cases (``i`` in, ``i`` out) in ``data/<group>/``, from ``start``."""
    for i in range(start, start + n):
        write_files(root, {f"data/{group}/{i:02d}.in": f"{i}\n",
                           f"data/{group}/{i:02d}.ans": f"{i}\n"})


WORKSHEET_ROWS = [
    ("Participant 7", "Alice Adams", "alice@example.org", "Submitted for grading",
     "Tuesday, 1 December 2026, 11:58 PM"),
    ("Participant 8", "Bob Brown", "BOB@example.org", "Submitted for grading",
     "Wednesday, 2 December 2026, 9:05 AM"),
    ("Participant 9", "Carol Carter", "carol@example.org", "Submitted for grading",
     "Monday, 30 November 2026, 12:00 PM"),
    ("Participant 10", "Dan Dixon", "dan@example.org", "Submitted for grading",
     "Tuesday, 1 December 2026, 8:00 AM"),
    ("Participant 11", "Zoe Zed", "zoe@example.org", "No submission", "-"),
]


def worksheet_csv(rows: list[tuple[str, ...]] = WORKSHEET_ROWS) -> str:
    """Moodle's grading worksheet as it downloads it (a BOM, every cell quoted)."""
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(["Identifier", "Full name", "Email address", "Status", "Grade",
                "Last modified (submission)"])
    w.writerows([(*r[:4], "", r[4]) for r in rows])
    return "\ufeff" + buf.getvalue()


WORKSHEET = worksheet_csv()


def spool_course(tmp_path, count, seed=5):
    course = tmp_path / "course"
    entries = generate_course(course, count=count, seed=seed)
    spool = Spool(tmp_path / "spool", create=True)
    for e in entries:
        spool.submit(course="c", assignment=e.assignment, student=e.student,
                     path=course / e.path, submitted_at=e.submitted_at)
    return course, entries


WRONG_SUM = "print(0)\n"  # fails bigsum's samples: a visible failure with input and answer


def desk_files(sock: Path) -> Path:
    """A wrong and a right bigsum, where the students can read them (pytest's tmp is
    root's alone)."""
    files = sock.parent / "files"
    files.mkdir(mode=0o755)
    (files / "sum.py").write_text(WRONG_SUM)
    shutil.copy(EXAMPLES / "bigsum/submissions/accepted/sum.py", files / "good.py")
    for f in files.iterdir():
        f.chmod(0o644)
    return files


def submit_slow_sums(tmp: Path, count: int, spool: Sequence[str], env: Mapping[str, str],
                     *, sleep_s: float, submitted_at: str) -> None:
    """``count`` accepted bigsum submissions, each sleeping ``sleep_s`` per test (so a
    queue can be watched) and each its own text (identical ones are graded once)."""
    for i in range(count):
        slow = tmp / f"slow{i}.py"
        slow.write_text(f"# s{i}\nimport sys, time\ntime.sleep({sleep_s})\n"
                        "data = sys.stdin.read().split()\n"
                        "print(sum(map(int, data[1:1 + int(data[0])])))\n")
        gl("submit", "bigsum", f"s{i}", slow, *spool, "--submitted-at", submitted_at,
           env=env, timeout=60, ok=True)


def started_after_live(db: str, live_student: str, bulk_course: str | None = None,
                       bulk_assignment: str | None = None) -> tuple[int, list[str]]:
    """How many bulk submissions (a course's, or an assignment's) started grading after
    ``live_student``'s, and every bulk start (for the message)."""
    with psycopg.connect(db) as c:
        live = c.execute("SELECT started_at FROM submissions WHERE student = %s",
                         (live_student,)).fetchone()[0]
        rows = c.execute(
            "SELECT s.started_at FROM submissions s JOIN courses c ON c.id = s.course_id "
            "WHERE (%s::text IS NULL OR c.name = %s) AND (%s::text IS NULL OR "
            "s.assignment = %s) AND s.student <> %s",
            (bulk_course, bulk_course, bulk_assignment, bulk_assignment,
             live_student)).fetchall()
    starts = [r[0] for r in rows]
    return sum(1 for s in starts if s > live), [str(s) for s in sorted(starts)]


def file_tree(root: Path) -> dict[str, str]:
    """Everything under ``root``: a file's SHA-256, a link's target, a directory (what a
    command that refuses its input must leave as it was)."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_symlink():
            out[rel] = f"link {p.readlink()}"
        elif p.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def zip_of(path: Path, files: Mapping[str, bytes], mode: int = 0o755,
           method: int = zipfile.ZIP_DEFLATED) -> None:
    """A zip of ``files`` (name -> bytes), each with Unix ``mode`` (0: none recorded)."""
    with zipfile.ZipFile(path, "w", method) as z:
        for name, data in files.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o100000 | mode) << 16 if mode else 0
            info.compress_type = method
            z.writestr(info, data)


def files_of(src: Path, prefix: str = "") -> dict[str, bytes]:
    """Every file under ``src`` by its relative name (after ``prefix``)."""
    return {prefix + p.relative_to(src).as_posix(): p.read_bytes()
            for p in sorted(src.rglob("*")) if p.is_file()}

# -- grading by hand (course.rubric) -------------------------------------------------
#: a rubric of two questions: style (by deduction, keys 1-3, two graders) and a
#: select-one design question (keys a-c)
RUBRIC: dict[str, object] = {
    "combine": "add", "anonymous": True,
    "questions": [
        {"id": "style", "title": "Style", "points": 4, "start": 4,
         "graders": ["ta1", "ta2"],
         "items": [
             {"id": "names", "key": "1", "points": -1, "title": "Unclear names",
              "explanation": "Names say what a value holds.",
              "note": "Not for loop indices."},
             {"id": "dup", "key": "2", "points": -2, "title": "Duplicated code"},
             {"id": "tidy", "key": "3", "points": 1, "title": "Exceptionally tidy",
              "always_show": True}]},
        {"id": "design", "title": "Design", "points": 6, "select": "one",
         "items": [
             {"id": "d-full", "key": "a", "points": 6, "title": "Sound design"},
             {"id": "d-part", "key": "b", "points": 3, "title": "Works, but tangled"},
             {"id": "d-none", "key": "c", "points": 0, "title": "No design to speak of"}]}]}


def with_rubric(course_file: Path, rubric: object = RUBRIC, assignment: int = 0) -> Path:
    """The course file with ``rubric`` (any YAML data) written beside it
    (``rubric.yaml``) and named by its ``assignment``-th assignment."""
    data = yaml.safe_load(course_file.read_text())
    (course_file.parent / "rubric.yaml").write_text(yaml.safe_dump(rubric))
    data["assignments"][assignment]["rubric"] = "rubric.yaml"
    course_file.write_text(yaml.safe_dump(data))
    return course_file


def asgi(app: Any, method: str, path: str, peer: object = None,
         form: Mapping[str, str | Sequence[str]] | None = None, query: str = "",
         origin: str | None = None) -> tuple[int, dict[str, str], str]:
    """(status, headers, body) of one request to an ASGI ``app`` in this process, over
    the staff socket as ``peer`` (a ``peercred.Peer``; None: over TCP), with ``form``
    sent URL-encoded (a POST)."""
    import asyncio
    from urllib.parse import urlencode

    from grader.adapters.web.serving import PEER

    body = urlencode([(k, v) for k, vs in (form or {}).items()
                      for v in ([vs] if isinstance(vs, str) else vs)]).encode()
    headers = [(b"host", b"localhost:8470")]
    if form is not None:
        headers += [(b"content-type", b"application/x-www-form-urlencoded"),
                    (b"content-length", str(len(body)).encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    out: dict[str, Any] = {"body": b"", "headers": {}}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(msg: dict[str, Any]) -> None:
        if msg["type"] == "http.response.start":
            out["status"] = msg["status"]
            out["headers"] = {k.decode(): v.decode() for k, v in msg["headers"]}
        else:
            out["body"] += msg.get("body", b"")

    scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(),
             "query_string": query.encode(), "headers": headers,
             "client": ("127.0.0.1", 40000), "server": ("127.0.0.1", 8470),
             "scheme": "http", "root_path": "", "http_version": "1.1", "app": app,
             "state": {PEER: peer}}
    asyncio.run(app(scope, receive, send))
    return out["status"], out["headers"], out["body"].decode()

# -- the Open OnDemand portal (the site tier) --------------------------------------
ONDEMAND = ROOT / "tests/site/ondemand"
OOD_APP = "/pun/sys/gradeline"  # where the portal serves the app
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
PORTAL_NEEDS = {"passenger": "passenger", "apache2": "apache2", "htpasswd": "apache2-utils"}


@dataclass
class Portal:
    """The portal's address, its scratch root, the course's desk and its users'
    passwords (``portal_factory``)."""

    url: str
    root: Path
    desk: DeskRun
    course: str
    passwords: dict[str, str]


def portal_needs() -> None:
    """Skip (or fail, where required) without root, Passenger, Apache or htpasswd."""
    missing = [pkg for cmd, pkg in PORTAL_NEEDS.items() if shutil.which(cmd) is None and
               not Path(f"/usr/sbin/{cmd}").exists()]
    if missing or os.geteuid() != 0:
        why = f"the OnDemand test needs root and {' '.join(missing) or 'nothing else'}"
        if os.environ.get("GRADELINE_REQUIRE_SANDBOX") == "1":
            pytest.fail(why)
        pytest.skip(why)


def start_pun(root: Path, user: str, app: Path) -> None:
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


def stop_pun(root: Path, user: str) -> None:
    private = root / "run" / user / "private"
    subprocess.run(["runuser", "-u", user, "--", "passenger", "stop", "--pid-file",
                    str(private / "passenger.pid")], capture_output=True, timeout=60, cwd="/")


def portal_request(url: str, method: str, path: str, auth: tuple[str, str] | None,
                   body: bytes = b"", headers: dict[str, str] | None = None
                   ) -> tuple[int, str]:
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


def drive_portal(tools: Path, p: Portal, steps: list[dict[str, Any]], work: Path
                 ) -> list[dict[str, Any]]:
    """The portal used in headless Chromium (``tests/site/ondemand/drive.js``: each step
    a login, a page, a form filled and sent), every page checked by axe-core: no serious
    violation, nothing fetched from elsewhere."""
    job = work / "job.json"
    job.write_text(json.dumps({"portal": p.url, "chromium": str(CHROMIUM), "tags": AXE_TAGS,
                               "steps": steps}))
    r = subprocess.run(["node", str(ONDEMAND / "drive.js"), str(job)], capture_output=True,
                       text=True, timeout=600, env={**os.environ, "NODE_PATH": str(tools)})
    assert r.returncode == 0, r.stderr[-3000:]
    out: list[dict[str, Any]] = json.loads(r.stdout.splitlines()[-1])
    for res in out:
        assert not res["elsewhere"], res
        serious = [v for v in res["violations"] if v["impact"] in ("serious", "critical")]
        assert not serious, (res["path"], serious)
    return out
