"""A deterministic course's worth of submissions for the demo and the benchmarks.

Built from the bundled examples' labelled ``submissions/<expected>/`` files:
each student's attempt is one of them, usually personalised by a comment (so
content hashes differ), sometimes verbatim (a shared starter solution), and
sometimes an identical resubmission of the student's previous attempt -- the
cases that work avoidance (dedupe by content hash) must recognise.
"""

from __future__ import annotations

import csv
import errno
import hashlib
import random
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from grader.core.verdict import EXPECTED_DIRS
from grader.examples import example_dirs

#: How often each expected verdict is drawn (a typical deadline mix).
WEIGHTS = {"accepted": 55, "wrong_answer": 20, "run_time_error": 8, "compile_error": 5,
           "time_limit_exceeded": 5, "memory_limit_exceeded": 4, "output_limit_exceeded": 3}
COMMENT = {".py": "#", ".c": "//", ".cpp": "//", ".cc": "//"}
DEADLINE = datetime(2026, 11, 20, 23, 59, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class CourseRow:
    """One row of manifest.csv."""

    seq: int
    student: str
    assignment: str
    attempt: int
    submitted_at: str
    path: str
    expected: str
    identical_to: str


def _templates() -> dict[str, dict[str, list[Path]]]:
    out: dict[str, dict[str, list[Path]]] = {}
    for d in example_dirs():
        by: dict[str, list[Path]] = {}
        for exp in sorted(EXPECTED_DIRS):
            sub = d / "submissions" / exp
            if sub.is_dir():
                by[exp] = sorted(p for p in sub.iterdir() if p.is_file())
        out[d.name] = by
    return out


def generate_course(dest: Path, *, count: int = 240, seed: int = 1) -> list[CourseRow]:
    """Write ``count`` submissions under ``dest/submissions`` and ``dest/manifest.csv``.

    The same (count, seed) always gives byte-identical output.
    """
    if count < 1:
        raise ValueError("count must be at least 1")
    rng = random.Random(seed)  # noqa: S311 -- determinism is the point, not secrecy
    templates = _templates()
    root = dest / "submissions"
    if root.exists():
        shutil.rmtree(root)
    entries: list[CourseRow] = []
    last: dict[tuple[str, str], tuple[Path, int]] = {}
    student_no = 0
    while len(entries) < count:
        student_no += 1
        student = f"s{student_no:04d}"
        for assignment, by in templates.items():
            for attempt in range(1, rng.choice((1, 1, 2, 2, 3)) + 1):
                if len(entries) >= count:
                    break
                seq = len(entries) + 1
                # Arrivals bunch up before the deadline (exponential in time-to-deadline).
                when = DEADLINE - timedelta(seconds=rng.expovariate(1 / 7200))
                prev = last.get((student, assignment))
                if prev is not None:  # a later attempt arrives after the earlier one
                    earlier = datetime.fromisoformat(entries[prev[1] - 1].submitted_at)
                    when = max(when, earlier + timedelta(seconds=rng.randint(30, 900)))
                target_dir = root / assignment / student / str(attempt)
                target_dir.mkdir(parents=True)
                if prev is not None and rng.random() < 0.15:
                    src, prev_seq = prev
                    target = target_dir / src.name
                    shutil.copyfile(src, target)
                    expected = entries[prev_seq - 1].expected
                    identical = str(prev_seq)
                else:
                    choices = [e for e in WEIGHTS if by.get(e)]
                    expected = rng.choices(choices, [WEIGHTS[e] for e in choices])[0]
                    src = rng.choice(by[expected])
                    target = target_dir / src.name
                    text = src.read_text(encoding="utf-8")
                    if rng.random() < 0.8:  # personalised copy; else the verbatim starter
                        mark = COMMENT.get(src.suffix, "//")
                        text = f"{mark} {student} attempt {attempt} ({assignment})\n{text}"
                    target.write_text(text, encoding="utf-8")
                    identical = ""
                last[(student, assignment)] = (target, seq)
                entries.append(CourseRow(seq, student, assignment, attempt,
                                     when.isoformat(timespec="seconds"),
                                     str(target.relative_to(dest)), expected, identical))
    entries.sort(key=lambda e: e.seq)
    with (dest / "manifest.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["seq", "student", "assignment", "attempt", "submitted_at", "path",
                    "expected_verdict", "identical_to"])
        for e in entries:
            w.writerow([e.seq, e.student, e.assignment, e.attempt, e.submitted_at, e.path,
                        EXPECTED_DIRS[e.expected].value, e.identical_to])
    return entries


def tree_digest(root: Path) -> str:
    """SHA-256 over the relative paths and contents of every file under ``root``."""
    h = hashlib.sha256()
    for p in sorted(x for x in root.rglob("*") if x.is_file()):
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def shared_course(dest: Path, *, count: int, seed: int) -> list[CourseRow]:
    """The course at ``dest``, right even when several processes ask at once (an
    experiment's points run as concurrent Slurm jobs over one work directory).

    Each writes a private copy and renames it into place, so nobody reads a half-written
    course; a course already there with the same files is kept, another one (a different
    count or seed) is moved aside and replaced.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        entries = generate_course(tmp, count=count, seed=seed)
        mine = tree_digest(tmp)
        for _ in range(10):
            try:
                tmp.rename(dest)
                return entries
            except OSError as e:
                if e.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                    raise
            try:
                if tree_digest(dest) == mine:
                    return entries
                old = tmp.with_name(tmp.name + ".old")
                dest.rename(old)
                shutil.rmtree(old, ignore_errors=True)
            except FileNotFoundError:
                continue  # another process is replacing it too: try again
        raise OSError(f"{dest}: could not put the course in place")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
