"""What many tests share, in one place: the ``gradeline`` of this venv and a runner
for it, the environment a test's database and cluster give a command, a bunch of slow
accepted submissions for queueing tests, and how many bulk submissions started after a
live one (the Slurm priority tests' measure)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import psycopg

#: the command under test: the venv's own entry point
BIN = Path(sys.executable).parent / "gradeline"


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
