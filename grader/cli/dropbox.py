"""``gradeline dropbox init | collect`` (the grading account) and ``gradeline drop``
(a student): uploads on a shared machine without a web front end."""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from grader.adapters import dropbox
from grader.adapters.dropbox import Dropped, Refused
from grader.adapters.spool import Spool
from grader.cli.common import Commands, spool_options
from grader.compose.context import Context
from grader.core.errors import RefusedError
from grader.course.handin import check_student_id
from grader.pipeline.handin import Door
from grader.pipeline.intake import Reason


def cmd_dropbox(args: argparse.Namespace, ctx: Context) -> int:
    box = Path(args.dir)
    if args.action == "init":
        mode = dropbox.create(box, args.group)
        print(f"{box}: mode {mode:o}; students hand in with: gradeline drop {box} "
              "ASSIGNMENT FILE")
        return 0
    spool, name, course = ctx.spool(create=True), ctx.course(), ctx.course_file()
    door = Door(course, ctx.store) if course is not None else None
    taken = refused = 0
    with tempfile.TemporaryDirectory(prefix="gradeline-drops-") as staging:
        for d in dropbox.collect(box, Path(staging)):
            if isinstance(d, Dropped):
                d = _admitted(d, door, spool, name)
            if isinstance(d, Refused):
                _keep_refused(d, spool, name)
                refused += 1
                continue
            taken += 1
    print(f"collected {taken}, refused {refused}" + (" (kept in the spool's quarantine "
          "with the reason: gradeline status lists them)" if refused else ""),
          file=sys.stderr)
    return 0


def _admitted(d: Dropped, door: Door | None, spool: Spool, course: str) -> Dropped | Refused:
    """Spool ``d`` if the hand-in rule takes it (``pipeline.handin``), else its refusal."""
    at = datetime.fromisoformat(d.submitted_at)
    try:
        if door is not None:
            adm = door.admit(d.student, d.assignment, at)
        else:
            check_student_id(d.student)
    except RefusedError as why:
        return Refused(d.drop.name, str(why), d.drop, d.path, d.student, d.assignment,
                       d.submitted_at)
    e = spool.submit(course=course, assignment=d.assignment, student=d.student,
                     path=d.path, submitted_at=d.submitted_at,
                     deferred=door is not None and adm.deferred)
    d.drop.unlink(missing_ok=True)
    shutil.rmtree(d.path.parent)
    print(f"{e.id} {d.student} {d.assignment} {d.submitted_at}")
    return d


def _keep_refused(d: Refused, spool: Spool, course: str) -> None:
    """A refused drop into the spool's quarantine with its reason, then out of the
    box: staff see it with ``gradeline status``; nothing a student dropped is lost."""
    kept = ""
    if d.path is not None:
        e = spool.submit(course=course, assignment=d.assignment or "?",
                         student=d.student or "?", path=d.path,
                         submitted_at=d.submitted_at or None,
                         quarantine=(str(Reason.REFUSED), f"drop {d.name}: {d.reason}"))
        kept = f" (kept as quarantine/{e.id})"
        shutil.rmtree(d.path.parent)
    if d.drop is not None:
        d.drop.unlink(missing_ok=True)
    print(f"refused {d.name}: {d.reason}{kept}", file=sys.stderr)


def cmd_drop(args: argparse.Namespace, ctx: Context) -> int:
    """Hand in, and print what was handed in: the drop's name, size, SHA-256 and time
    (unsigned: the desk, ``gradeline hand-in``, gives a receipt staff can verify)."""
    src = Path(args.file)
    target = dropbox.drop(Path(args.dir), args.assignment, src)
    data = target.read_bytes()  # what the box holds, as its owner reads it
    when = datetime.fromtimestamp(target.stat().st_ctime, UTC).isoformat(timespec="seconds")
    print(target.name)
    print(f"dropped {src.name} for {args.assignment}: {len(data)} bytes, sha256 "
          f"{hashlib.sha256(data).hexdigest()}, at {when}", file=sys.stderr)
    return 0


def register(sub: Commands) -> None:
    b = sub.add_parser("dropbox", help="init: a drop directory students can write but not "
                                       "read or list; collect: its drops into the spool")
    b.add_argument("action", choices=["init", "collect"])
    b.add_argument("dir")
    b.add_argument("--group", help="init: staff group that may read drops (students not in it)")
    spool_options(b)
    b.set_defaults(func=cmd_dropbox)

    d = sub.add_parser("drop", help="hand in FILE for ASSIGNMENT through a drop directory")
    d.add_argument("dir")
    d.add_argument("assignment")
    d.add_argument("file")
    d.set_defaults(func=cmd_drop)
