"""``gradeline import``: an LMS's bulk download of an assignment's hand-ins spooled for
grading, each under its roster student with its hand-in time, and what maps to no
student kept in quarantine with the reason (``pipeline.lms_import``)."""

from __future__ import annotations

import argparse
import getpass
import zipfile
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from grader.cli.common import Commands, spool_options
from grader.compose.context import Context
from grader.core.errors import ConfigError
from grader.course.lms_archive import LMSES
from grader.course.lms_mapping import WorksheetRow, read_times, read_worksheet
from grader.course.spec import parse_time
from grader.course.staffinput import read_text
from grader.pipeline.handin import Door
from grader.pipeline.lms_import import (
    ImportPlan,
    Line,
    plan_import,
    read_members,
    refuse_untimed,
    spool_import,
)

HELP = "spool an LMS's download of an assignment's hand-ins (Canvas, Moodle)"
DESCRIPTION = """\
Spool every hand-in of Canvas's "Download Submissions" zip or Moodle's "Download all
submissions" zip for the assignment, each under the roster student it maps to (the roster's
lms_id column, Moodle's worksheet email, then the name) with its hand-in time: Moodle's
grading worksheet gives those (--worksheet); Canvas's zip has none, so a hand-in Canvas
did not mark late is timed at the deadline, and one it marked late needs --late-at or
--times. A hand-in that maps to no student, and a member of no hand-in, is kept in the
spool's quarantine with the reason (gradeline status lists it); nothing is dropped.

Exit status: 0 every hand-in mapped and was spooled, 1 some were quarantined (the table
says why; the rest were spooled), 2 an error (a refused zip or a hand-in without a time
spools nothing)."""


def _time(text: str, zone: ZoneInfo, flag: str) -> datetime:
    try:
        at = parse_time(text, flag)
    except ValueError as e:
        raise ConfigError(f"{flag}: {e}") from None
    return at if at.tzinfo is not None else at.replace(tzinfo=zone)


def _read(path: Path, what: str) -> str:
    return read_text(path, what)


def _cell(line: Line, zone: ZoneInfo) -> str:
    return line.at.astimezone(zone).strftime("%Y-%m-%d %H:%M") if line.at else "-"


def plan_table(plan: ImportPlan, zone: ZoneInfo) -> str:
    """The import's rows: spooled ones first, then the quarantined with the reason."""
    rows = [("LMS entry", "student", "files", "flags", "handed in", "how")]
    for x in sorted(plan.lines, key=lambda x: (x.quarantined, x.label)):
        flags = ",".join([*(["late"] if x.late else []), *x.kinds])
        how = f"QUARANTINED {x.code}: {x.how}" if x.code is not None else x.how
        rows.append((x.label, x.student or "-", str(len(x.files)), flags, _cell(x, zone),
                     how))
    width = [max(len(r[i]) for r in rows) for i in range(5)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, width, strict=False)) + "  "
                     + r[5] for r in rows)


def _summary(plan: ImportPlan, dry: bool) -> str:
    ok = [x for x in plan.lines if not x.quarantined]
    bad = len(plan.lines) - len(ok)
    late = sum(1 for x in ok if x.late)
    verb = ("would spool", "would keep") if dry else ("spooled", "kept")
    text = f"{verb[0]} {len(ok)} hand-in(s) ({late} marked late)"
    if bad:
        text += f"; {verb[1]} {bad} in quarantine (gradeline status lists them)"
    return text + (": dry run, nothing spooled" if dry else "")


def cmd_import(args: argparse.Namespace, ctx: Context) -> int:
    course = ctx.course_required(" (its roster says whose each hand-in is)")
    deadline = course.assignment(args.assignment).deadline
    worksheet: dict[str, WorksheetRow] | None = None
    if args.worksheet:
        worksheet = read_worksheet(_read(args.worksheet, "worksheet"), course.zone,
                                   str(args.worksheet))
    times = read_times(_read(args.times, "--times"), course.zone, str(args.times)) \
        if args.times else None
    late_at = _time(args.late_at, course.zone, "--late-at") if args.late_at else None
    if late_at is not None and late_at <= deadline:
        raise ConfigError(f"--late-at {late_at.isoformat()} is not after the deadline "
                          f"{deadline.isoformat()}: it times hand-ins Canvas marked late")
    try:
        with zipfile.ZipFile(args.archive) as zf:
            names = list(read_members(zf, str(args.archive)))
    except (OSError, zipfile.BadZipFile) as e:
        raise ConfigError(f"{args.archive}: not a readable zip: {e}") from None
    plan = plan_import(names, course, args.assignment, lms=args.lms, worksheet=worksheet,
                       times=times, late_at=late_at,
                       strip_copy_suffix=args.strip_copy_suffix,
                       door=Door(course, ctx.store, override=args.override or "",
                                 by=getpass.getuser()))
    if worksheet is not None and plan.lms != "moodle":
        raise ConfigError("--worksheet is Moodle's grading worksheet; this is a "
                          f"{plan.lms} download")
    print(f"{plan.lms} download {args.archive}: {len(plan.lines)} row(s) for "
          f"{args.assignment} (due {deadline.isoformat(timespec='minutes')})")
    print(plan_table(plan, course.zone))
    for note in plan.notes:
        print(f"note: {note}")
    if args.dry_run:
        refuse_untimed(plan)
        print(_summary(plan, dry=True))
    else:
        report = spool_import(args.archive, plan, ctx.spool(create=True), course=ctx.course(),
                              assignment=args.assignment)
        print(_summary(report.plan, dry=False))
    return 1 if any(x.quarantined for x in plan.lines) else 0


def register(sub: Commands) -> None:
    """Bulk intake: an LMS's download of hand-ins."""
    p = sub.add_parser("import", help=HELP, description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("archive", type=Path, metavar="ARCHIVE",
                   help="the zip as the LMS gave it (not unpacked and zipped again)")
    p.add_argument("--assignment", required=True, metavar="NAME",
                   help="the course file's assignment the hand-ins are for")
    p.add_argument("--lms", choices=LMSES,
                   help="which LMS wrote the zip (default: told from its member names)")
    p.add_argument("--worksheet", type=Path, metavar="CSV",
                   help="Moodle's grading worksheet of the assignment (\"Download grading "
                        "worksheet\", in English): hand-in times, and emails to map by")
    p.add_argument("--late-at", metavar="TIME",
                   help="the hand-in time of every hand-in Canvas marked late (its zip has "
                        "none), e.g. when the assignment closed; the course's zone unless "
                        "it has an offset")
    p.add_argument("--times", type=Path, metavar="CSV",
                   help="hand-in times by student or lms_id (columns submitted_at and "
                        "student or lms_id): before any other source")
    p.add_argument("--strip-copy-suffix", action="store_true",
                   help="spool Canvas's Main-1.java (a repeated file name) as Main.java")
    p.add_argument("--override", metavar="REASON",
                   help="take the hand-ins the course's hand-in rule refuses (past a limit "
                        "or the late cutoff); the reason is kept in each entry")
    p.add_argument("--dry-run", action="store_true",
                   help="list what would be spooled and quarantined; spool nothing")
    spool_options(p)
    p.set_defaults(func=cmd_import)
