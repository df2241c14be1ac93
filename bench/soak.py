"""Soak: many submissions through `gradeline serve` on the local Slurm while faults
are injected mid-stream; afterwards every submission must be graded or
quarantined exactly once, serve's memory bounded, and nothing left running.

Faults (each at its own point of the stream; ``--faults`` picks them):

* ``slurmd``   SIGKILL of a node's slurmd, restarted 5 s later (its job steps live on);
* ``postgres`` PostgreSQL stopped as by a crash (``pg_ctl stop -m immediate``),
  started again 15 s later;
* ``serve``    SIGKILL of serve's process group, started again 2 s later;
* ``node``     a node lost: its slurmd, job steps and every process under them
  SIGKILLed at once; it comes back 30 s later (Slurm marks it DOWN after
  ``SlurmdTimeout`` and requeues what ran there);
* ``fsfull``   the spool's file system (a tmpfs of its own) filled to the last byte
  for 20 s: arrivals, journals and pilots meet ENOSPC.

With ``--nfs ROOT`` the spool's tmpfs is mounted under ``ROOT`` (the kernel NFS
server's NFSv4 root export on this host), exported, and the spool lives on an NFS 4.2
mount of it over loopback: serve, the pilots and the fault all go through the NFS
client (the emulated node of ``make test-nfs`` runs it so; this VM's kernel has no NFS).

The submitter retries a submission the spool refused (as a drop box would), so
exactly ``--count`` submissions are accepted. The assignment is cheap on purpose
(one Python test): the orchestration is under test, not the compiler.

Run on purpose, as root (tmpfs, the daemons)::

    .venv/bin/python bench/soak.py --count 10000 --rate 20

``run_soak`` is also what the CI-sized test (tests/slurm/test_soak.py) calls.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent / "gradeline"
REPO = Path(__file__).resolve().parent.parent
STATE = Path(os.environ.get("GRADELINE_STATE_DIR", "/var/lib/gradeline"))
FAULTS = ("slurmd", "postgres", "serve", "node", "fsfull")

PROBLEM = {
    "problem.yaml": "name: Echo\nlimits:\n  memory: 256\n  output: 8\nvalidation: default\n",
    "gradeline.yaml": "time_limit_s: 2.0\nlanguages: [python3]\ngroups:\n  sample: 0\n"
                      "  secret: {points: 1, scoring: all_or_nothing}\n",
    "problem.md": "Print the input.\n",
    "data/sample/1.in": "hello\n", "data/sample/1.ans": "hello\n",
    "data/secret/1.in": "soak\n", "data/secret/1.ans": "soak\n",
    "submissions/accepted/echo.py": "import sys\nsys.stdout.write(sys.stdin.read())\n",
}


def write_problem(root: Path) -> Path:
    """The cheap assignment ``echo`` under ``root`` (an assignments directory)."""
    for rel, text in PROBLEM.items():
        p = root / "echo" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


@dataclass
class Soak:
    """What a soak run saw."""

    count: int
    faults: list[dict[str, Any]] = field(default_factory=list)
    submit_retries: int = 0
    rss_kb: list[tuple[float, int]] = field(default_factory=list)  # (t, VmRSS) of serve
    peak_rss_kb: int = 0
    serve_starts: int = 0
    serve_exits: int = 0  # times serve ended by itself (a supervisor restarted it)
    duration_s: float = 0.0
    result: dict[str, Any] = field(default_factory=dict)


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, ppid) of a process."""
    try:
        s = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = s[s.rindex(")") + 2:].split()
    return rest[0], int(rest[1])


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def descendants(roots: Sequence[int]) -> set[int]:
    kids: dict[int, list[int]] = {}
    for pid in _pids():
        st = _stat(pid)
        if st:
            kids.setdefault(st[1], []).append(pid)
    out, todo = set(), list(roots)
    while todo:
        p = todo.pop()
        if p in out:
            continue
        out.add(p)
        todo.extend(kids.get(p, []))
    return out


def _vm(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class Cluster:
    """The local Slurm's daemons, as the faults need them."""

    def __init__(self) -> None:
        self.conf = STATE / "slurm" / "slurm.conf"
        self.nodes = [ln.split()[0].split("=")[1] for ln in self.conf.read_text().splitlines()
                      if ln.startswith("NodeName=")]
        self.multi = len(self.nodes) > 1

    def slurmd_pid(self, node: str) -> int | None:
        f = STATE / "slurm" / f"slurmd-{node}.pid"
        try:
            return int(f.read_text().split()[0])
        except (OSError, ValueError):
            return None

    def start_slurmd(self, node: str) -> None:
        argv = ["slurmd", "-f", str(self.conf)] + (["-N", node] if self.multi else [])
        subprocess.run(argv, check=False)

    def steps_on(self, node: str) -> list[int]:
        """slurmstepd processes of jobs on ``node`` (by squeue's node list)."""
        out = subprocess.run(["squeue", "-h", "-w", node, "-o", "%A"], capture_output=True,
                             text=True, env={**os.environ, "SLURM_CONF": str(self.conf)})
        jobs = set(out.stdout.split())
        return [p for p in _pids() if "slurmstepd" in _cmdline(p)
                and any(f"[{j}." in _cmdline(p) for j in jobs)]


class Faults:
    """Injects one named fault; returns what it did."""

    def __init__(self, spool_mount: Path, serve: Callable[[], None],
                 kill_serve: Callable[[], None], pg: Any, say: Callable[[str], None]) -> None:
        self.cluster, self.pg = Cluster(), pg
        self.mount, self.serve, self.kill_serve, self.say = spool_mount, serve, kill_serve, say

    def inject(self, name: str) -> dict[str, Any]:
        t0 = time.monotonic()
        info: dict[str, Any] = getattr(self, "_" + name)()
        info.update(fault=name, seconds=round(time.monotonic() - t0, 1))
        self.say(f"soak: fault {name}: {info}")
        return info

    def _slurmd(self) -> dict[str, Any]:
        node = self.cluster.nodes[0]
        pid = self.cluster.slurmd_pid(node)
        if pid:
            os.kill(pid, signal.SIGKILL)
        time.sleep(5)
        self.cluster.start_slurmd(node)
        return {"node": node, "killed": pid}

    def _postgres(self) -> dict[str, Any]:
        self.pg.stop("immediate")
        time.sleep(15)
        self.pg.start()
        return {}

    def _serve(self) -> dict[str, Any]:
        self.kill_serve()
        time.sleep(2)
        self.serve()
        return {}

    def _node(self) -> dict[str, Any]:
        node = self.cluster.nodes[-1]
        roots = self.cluster.steps_on(node)
        pid = self.cluster.slurmd_pid(node)
        victims = descendants(roots + ([pid] if pid else []))
        # A lost node loses everything at once. Killed one by one, a pilot could see
        # its container die first and grade on (a JE no real node loss produces):
        # stop them all, then kill them.
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for p in victims:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p, sig)
        time.sleep(30)
        self.cluster.start_slurmd(node)
        return {"node": node, "processes_killed": len(victims)}

    def _fsfull(self) -> dict[str, Any]:
        ballast = self.mount / "ballast"
        written = 0
        try:
            with ballast.open("wb") as f:
                block = b"\0" * (1 << 20)
                while True:
                    f.write(block)
                    f.flush()
                    os.fsync(f.fileno())  # on NFS the server's ENOSPC shows here
                    written += len(block)
        except OSError:
            pass
        # the last partial blocks too: nothing is left for anyone
        try:
            with ballast.open("ab") as f:
                while True:
                    f.write(b"\0" * 4096)
                    f.flush()
                    os.fsync(f.fileno())
        except OSError:
            pass
        time.sleep(20)
        ballast.unlink()
        return {"filled_mb": written >> 20}


def _slurm_word(env: dict[str, str]) -> str:
    """The nodes' states and the jobs' (what a stalled soak waits for)."""
    out = []
    for argv in (["sinfo", "-h", "-N", "-o", "%N %t %E"], ["squeue", "-h", "-o", "%i %T %R"]):
        r = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
        out.append(", ".join(r.stdout.split("\n")[:8]).strip(", ") or r.stderr.strip())
    if "drain" in out[0]:  # why: each slurmd's last errors
        for log in sorted((STATE / "slurm").glob("slurmd-*.log")):
            errors = [ln for ln in log.read_text(errors="replace").splitlines()
                      if "error" in ln][-3:]
            out.append(f"{log.name}: " + " | ".join(errors))
    return " / ".join(out)


def run_soak(work: Path, *, count: int, rate: float, faults: Sequence[str],
             db_url: str, pg: Any, serve_args: Sequence[str] = (),
             timeout_s: float = 7200, say: Callable[[str], None] = print,
             nfs_root: Path | None = None) -> Soak:
    """Feed ``count`` submissions at ``rate``/s into a serve on a spool of its own
    tmpfs, inject ``faults`` spread over the stream, and check the end state.

    :param pg: the PostgreSQL server behind ``db_url`` (``stop(mode)``, ``start()``).
    :param nfs_root: the NFSv4 root export: the tmpfs goes under it and the spool on
        an NFS mount of it.
    """
    from grader.adapters.spool import Spool

    soak = Soak(count)
    mount = work / "spoolfs"
    mount.mkdir(parents=True, exist_ok=True)
    size_mb = max(256, count // 10)
    fs = mount if nfs_root is None else nfs_root / "soak"
    fs.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(fs)],
                   check=True)
    if nfs_root is not None:
        subprocess.run(["exportfs", "-o", "rw,sync,no_subtree_check,no_root_squash,fsid=7",
                        f"127.0.0.1:{fs}"], check=True)
        subprocess.run(["mount", "-t", "nfs4", "-o", "vers=4.2,hard", "127.0.0.1:/soak",
                        str(mount)], check=True)
        say(f"soak: the spool is on NFS: {_mount_line(mount)}")
    try:
        return _soak(soak, work, mount, rate, faults, db_url, pg, serve_args, timeout_s,
                     say, Spool)
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
        if nfs_root is not None:
            subprocess.run(["exportfs", "-u", f"127.0.0.1:{fs}"], check=False)
            subprocess.run(["umount", "-l", str(fs)], check=False)


def _mount_line(path: Path) -> str:
    for line in Path("/proc/mounts").read_text().splitlines():
        if line.split()[1] == str(path):
            return line
    return "(not mounted)"


def _soak(soak: Soak, work: Path, mount: Path, rate: float, faults: Sequence[str],
          db_url: str, pg: Any, serve_args: Sequence[str], timeout_s: float,
          say: Callable[[str], None], spool_cls: Any) -> Soak:
    assignments = write_problem(work / "assignments")
    spool = spool_cls(mount / "spool", create=True)
    env = {**os.environ, "GRADELINE_DB_URL": db_url, "GRADELINE_COURSE": "soak",
           "GRADELINE_ASSIGNMENTS": str(assignments),
           "SLURM_CONF": str(STATE / "slurm" / "slurm.conf")}
    env.pop("GRADELINE_FAULT", None)
    proc: dict[str, subprocess.Popen[bytes]] = {}
    log = (work / "serve.log").open("ab")

    def start_serve() -> None:
        soak.serve_starts += 1
        proc["serve"] = subprocess.Popen(
            [str(BIN), "serve", "--spool", str(spool.root), "--executor", "slurm",
             "--no-dedupe", "--report", "10", *serve_args], env=env, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True)

    def supervise() -> None:
        """Restart serve if it ended by itself (counted: it must not)."""
        p = proc["serve"]
        if p.poll() is not None and not killing.is_set():
            soak.serve_exits += 1
            log.flush()
            last = (work / "serve.log").read_text(errors="replace").splitlines()[-4:]
            say(f"soak: serve exited by itself (status {p.returncode}); restarting it; its "
                "last words: " + " | ".join(last))
            start_serve()

    killing = threading.Event()

    def kill_serve() -> None:
        killing.set()
        p = proc["serve"]
        soak.peak_rss_kb = max(soak.peak_rss_kb, _vm(p.pid, "VmHWM"))
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()

    stop_sampling = threading.Event()

    def sample() -> None:
        t0 = time.monotonic()
        while not stop_sampling.wait(1.0):
            p = proc.get("serve")
            if p is not None and p.poll() is None:
                rss = _vm(p.pid, "VmRSS")
                soak.rss_kb.append((round(time.monotonic() - t0, 1), rss))
                soak.peak_rss_kb = max(soak.peak_rss_kb, _vm(p.pid, "VmHWM"))

    def serve_again() -> None:
        start_serve()
        killing.clear()

    injector = Faults(mount, serve_again, kill_serve, pg, say)
    src = work / "src"
    src.mkdir(exist_ok=True)
    t0 = time.monotonic()
    start_serve()
    threading.Thread(target=sample, daemon=True).start()
    at = {int(soak.count * (i + 1) / (len(faults) + 1)): f for i, f in enumerate(faults)}
    fault_threads: list[threading.Thread] = []
    for i in range(soak.count):
        if i in at:
            name = at[i]

            def run(name: str = name) -> None:
                soak.faults.append(injector.inject(name))

            th = threading.Thread(target=run)
            th.start()
            fault_threads.append(th)
        f = src / f"{i % 1000}.py"
        f.write_text(f"import sys\nsys.stdout.write(sys.stdin.read())\n# attempt {i}\n")
        while True:
            try:
                spool.submit(course="soak", assignment="echo", student=f"s{i % 500:04d}",
                             path=f)
                break
            except OSError:  # the spool's file system is full: the drop box retries
                soak.submit_retries += 1
                time.sleep(0.5)
        if i % 50 == 0:
            supervise()
        if i % 1000 == 999:
            say(f"soak: {i + 1} submitted ({time.monotonic() - t0:.0f} s)")
        delay = t0 + (i + 1) / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    for th in fault_threads:
        th.join()
    deadline = time.monotonic() + timeout_s
    last_word = time.monotonic()
    while any(any(spool.dir(d).iterdir()) for d in ("new", "cur")):
        if time.monotonic() > deadline:
            break
        supervise()
        if time.monotonic() - last_word > 60:  # a slow machine (an emulated node) says why
            last_word = time.monotonic()
            say(f"soak: waiting: {len(list(spool.dir('new').iterdir()))} new, "
                f"{len(list(spool.dir('cur').iterdir()))} batch(es) in cur/ "
                f"({time.monotonic() - t0:.0f} s); serve: "
                + " | ".join((work / "serve.log").read_text(errors="replace")
                             .splitlines()[-2:]) + "; Slurm: " + _slurm_word(env))
        time.sleep(1)
    p = proc["serve"]
    soak.peak_rss_kb = max(soak.peak_rss_kb, _vm(p.pid, "VmHWM"))
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=600)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
    stop_sampling.set()
    log.close()
    soak.duration_s = time.monotonic() - t0
    soak.result = check(spool, db_url, soak.count)
    return soak


def check(spool: Any, db_url: str, count: int) -> dict[str, Any]:
    """Exactly once, nothing left: the figures the soak reports."""
    from grader.adapters.store.postgres import Store

    new, cur, done, quarantined = (len(list(spool.dir(d).iterdir()))
                                   for d in ("new", "cur", "done", "quarantine"))
    ids: list[str] = []
    for j in spool.dir("batches").glob("*/results.jsonl"):
        for ln in j.read_text().splitlines():
            with contextlib.suppress(ValueError, KeyError):
                ids.append(json.loads(ln)["spool_id"])
    with Store(db_url) as s:
        stored = s.count("SELECT count(*) FROM submissions")
        results = s.count("SELECT count(*) FROM results")
        unstamped = s.count("SELECT count(*) FROM submissions WHERE stored_at IS NULL")
        verdicts: dict[str, int] = dict(s.conn.execute(
            "SELECT verdict, count(*) FROM results GROUP BY verdict").fetchall())
        # why a submission that should pass did not: its record, for the report
        not_ac = [f"{sid} {v}: {json.dumps(rec)[:1500]}" for sid, v, rec in s.conn.execute(
            "SELECT s.spool_id, r.verdict, r.record FROM results r JOIN submissions s "
            "ON s.id = r.submission_id WHERE r.verdict <> 'AC' LIMIT 3").fetchall()]
    deadline = time.monotonic() + 30  # cancelled pilots get Slurm's KillWait to end
    while True:
        zombies = [p for p in _pids() if (st := _stat(p)) and st[0] == "Z"]
        strays = [p for p in _pids() if "gradeline serve" in _cmdline(p)
                  or "grader.cli.task" in _cmdline(p)]
        if not (zombies or strays) or time.monotonic() > deadline:
            break
        time.sleep(1)
    accounted = done + quarantined
    return {"submitted": count, "new_left": new, "cur_left": cur, "done": done,
            "quarantined": quarantined, "in_database": stored, "results": results,
            "unstamped": unstamped, "verdicts": verdicts, "not_ac": not_ac,
            "lost": count - len(set(ids)) if accounted == count else count - accounted,
            "doubled": len(ids) - len(set(ids)), "zombies": len(zombies),
            "stray_processes": len(strays)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--rate", type=float, default=20.0, help="arrivals per second")
    ap.add_argument("--faults", default=",".join(FAULTS),
                    help=f"comma-separated, in order, from {', '.join(FAULTS)}")
    ap.add_argument("--work", type=Path, default=Path("/var/tmp/gl-soak"))
    ap.add_argument("--nfs", type=Path, metavar="ROOT",
                    help="the spool on NFS: ROOT is this host's NFSv4 root export")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "soak")
    args = ap.parse_args()
    faults = [f for f in args.faults.split(",") if f]
    if unknown := set(faults) - set(FAULTS):
        ap.error(f"unknown faults: {', '.join(sorted(unknown))}")
    url = subprocess.run([str(BIN), "db", "fresh", "gl_soak"], capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1]
    args.work.mkdir(parents=True, exist_ok=True)
    from grader.adapters.store.server import LocalServer
    soak = run_soak(args.work, count=args.count, rate=args.rate, faults=faults, db_url=url,
                    pg=LocalServer(STATE), nfs_root=args.nfs)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    summary = {k: v for k, v in soak.__dict__.items() if k != "rss_kb"}
    rss = [r for _, r in soak.rss_kb]
    summary["rss_mb_first_quarter_max"] = max(rss[:len(rss) // 4] or [0]) / 1024
    summary["rss_mb_last_quarter_max"] = max(rss[-len(rss) // 4:] or [0]) / 1024
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    (out / "rss.csv").write_text("t_s,rss_kb\n" + "".join(f"{t},{r}\n" for t, r in soak.rss_kb))
    r = soak.result
    print(json.dumps(summary, indent=2))
    ok = (r["lost"] == 0 and r["doubled"] == 0 and soak.serve_exits == 0
          and r["new_left"] == 0 and r["cur_left"] == 0
          and r["in_database"] == soak.count and r["unstamped"] == 0 and r["zombies"] == 0
          and r["stray_processes"] == 0)
    where = " over NFS" if args.nfs else ""
    print(f"soak{where}: {soak.count} submissions, faults {faults}: lost {r['lost']}, doubled "
          f"{r['doubled']}, peak RSS of serve {soak.peak_rss_kb / 1024:.0f} MB, "
          f"{soak.duration_s:.0f} s -- {'OK' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
