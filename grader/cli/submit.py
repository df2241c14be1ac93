"""``gradeline submit``: staff's door into the spool, under the hand-in rule every door
follows (``pipeline.handin``), which ``--override`` passes with a reason kept in the
entry."""

from __future__ import annotations

import argparse
import getpass
import sys
from datetime import UTC, datetime
from pathlib import Path

from grader.cli.common import Commands, spool_options
from grader.compose.context import Context
from grader.core.errors import GradelineError, RefusedError
from grader.course.handin import check_student_id
from grader.course.spec import parse_time
from grader.pipeline.handin import Door


def cmd_submit(args: argparse.Namespace, ctx: Context) -> int:
    at = datetime.now(UTC).replace(microsecond=0)
    if args.submitted_at:
        try:  # the course file's own time reader: the same forms, the same refusals
            at = parse_time(args.submitted_at, "--submitted-at")
        except ValueError as err:
            raise GradelineError(f"--submitted-at: {err}") from None
        if at.tzinfo is None:
            raise GradelineError("--submitted-at needs an offset (2026-12-01T23:59+01:00): "
                                 "deadlines are compared across time zones")
    course = ctx.course_file()
    override = ""
    try:
        if course is not None:
            adm = Door(course, ctx.store, override=args.override or "",
                       by=getpass.getuser()).admit(args.student, args.assignment, at)
            override = f"{adm.override} (refused: {adm.refused})" if adm.override else ""
        else:
            check_student_id(args.student)
            ctx.assignment_known(args.assignment)
    except RefusedError as why:
        hint = "" if args.override or course is None else \
            " (staff may take it anyway, with the reason kept: --override REASON)"
        raise RefusedError(f"not submitted: {why}{hint}") from None
    e = ctx.spool(create=True).submit(course=ctx.course(), assignment=args.assignment,
                           student=args.student, path=Path(args.path),
                           submitted_at=at.isoformat(), override=override)
    print(e.id)
    if override:
        print(f"taken past the hand-in rule: {override}", file=sys.stderr)
    return 0


def register(sub: Commands) -> None:
    s = sub.add_parser("submit", help="put a submission into the spool (atomically)")
    s.add_argument("assignment")
    s.add_argument("student")
    s.add_argument("path", help="source file, directory or archive")
    s.add_argument("--submitted-at", metavar="TIME",
                   help="when the student handed it in, with an offset (an LMS export's "
                        "time; default: now): what deadlines are compared with")
    s.add_argument("--override", metavar="REASON",
                   help="take it although the course's hand-in rule refuses it (not on "
                        "the roster, past a limit or the late cutoff); the reason is kept "
                        "in the entry")
    spool_options(s)
    s.set_defaults(func=cmd_submit)

