"""``gradeline teams import | list`` and ``gradeline regrades list | open | answer |
override | log``: staff's side of team work and of regrade requests (the rules:
``course.teams``, ``course.regrades``; the store keeps every change as a row)."""

from __future__ import annotations

import argparse
import getpass
from datetime import UTC, datetime
from pathlib import Path

from grader.cli.common import Commands, spool_options
from grader.compose import read_side
from grader.compose.context import Context
from grader.core.errors import ConfigError
from grader.course.regrades import OUTCOMES, STATUSES
from grader.course.staffinput import decode
from grader.course.teams import Plan, Team, TeamEvent, Teams, plan_import, read_teams


def cmd_teams_import(args: argparse.Namespace, ctx: Context) -> int:
    course = ctx.course_required()
    course.assignment(args.assignment)
    try:
        raw = Path(args.csv).read_bytes()
    except OSError as e:
        raise ConfigError(f"{args.csv}: {e.strerror}") from None
    wanted = read_teams(decode(raw, str(args.csv)), str(args.csv), course, args.assignment)
    by, now = getpass.getuser(), datetime.now(UTC)
    made: list[Plan] = []

    def decide(teams: Teams) -> tuple[tuple[Team, ...], tuple[TeamEvent, ...]]:
        made.append(plan_import(teams, args.assignment, wanted, by, now, args.reason))
        return made[-1].new, made[-1].events
    with ctx.store() as store:
        store.migrate()
        if args.dry_run:
            decide(store.teams(course.name))
        else:
            store.change_teams(course.name, decide)
    said = " (not written: --dry-run)" if args.dry_run else ""
    print("\n".join(f"  {x}{said}" for x in made[-1].describe()) or "  no change")
    return 0


def cmd_teams_list(args: argparse.Namespace, ctx: Context) -> int:
    course = ctx.course_required()
    course.assignment(args.assignment)
    with ctx.store() as store:
        store.migrate()
        teams = store.teams(course.name)
    if args.log:
        for e in teams.events:
            if e.assignment == args.assignment:
                why = f" ({e.reason})" if e.reason else ""
                print(f"{e.at.astimezone(course.zone).isoformat(timespec='seconds')} "
                      f"{e.student} {e.action}s {e.team}, by {e.by}{why}")
        return 0
    for t in teams.of(args.assignment):
        members = teams.members(args.assignment, t.name)
        code = f" (join code {t.code})" if t.code else ""
        print(f"{t.name}{code}: {', '.join(members) or 'nobody now'}")
    alone = sorted(set(course.students) - {s for t in teams.of(args.assignment)
                                           for s in teams.members(args.assignment, t.name)})
    if alone:
        print(f"in no team: {', '.join(alone)}")
    return 0


def cmd_regrades_list(args: argparse.Namespace, ctx: Context) -> int:
    course = ctx.course_required()
    q = read_side.regrade_queue(ctx, course).queue(
        assignment=args.assignment or "", target=args.group or "",
        status="" if args.status == "all" else args.status, older_h=args.older)
    for row in q.rows:
        r = row.request
        print(f"{r.id:>5}  {row.assignment}  {row.student}  {r.target_kind} {r.target}  "
              f"{r.status}  {row.age_h:g} h  {r.reason[:60]}")
    print(f"{len(q.rows)} request(s); " + ", ".join(f"{k} {v}" for k, v in
                                                     sorted((q.counts or {}).items())))
    return 0


def cmd_regrades_open(args: argparse.Namespace, ctx: Context) -> int:
    course = ctx.course_required()
    r = read_side.student_desk(ctx, course).ask(args.student, args.assignment, args.group,
                                                args.reason, args.submission,
                                                by=getpass.getuser())
    print(f"request {r.id} about {r.target_kind} {r.target} of {r.submission}, for "
          f"{args.student}")
    return 0


def cmd_regrades_answer(args: argparse.Namespace, ctx: Context) -> int:
    course = ctx.course_required()
    a = read_side.regrade_queue(ctx, course).answer(args.request, args.outcome, args.reason,
                                                    getpass.getuser(), args.points)
    print(f"request {args.request}: {a.outcome}, {a.before:g} -> {a.after:g} points; the "
          "next grade sync takes it to the LMS")
    return 0


def cmd_regrades_override(args: argparse.Namespace, ctx: Context) -> int:
    course = ctx.course_required()
    c = read_side.regrade_queue(ctx, course).override(args.assignment, args.student,
                                                      args.points, args.reason,
                                                      getpass.getuser())
    print(f"{args.student}'s grade of {args.assignment}: {c.before:g} -> {c.after:g} of "
          f"{c.out_of:g} points")
    return 0


def cmd_regrades_log(args: argparse.Namespace, ctx: Context) -> int:
    course = ctx.course_required()
    requests, changes = read_side.regrade_queue(ctx, course).log()
    for r in requests:
        if args.assignment and r.assignment != args.assignment:
            continue
        print(f"{r.opened_at.isoformat(timespec='seconds')} request {r.id} by {r.opened_by} "
              f"for {r.student}: {r.target.label()} of {r.spool_id}: {r.reason}")
        if r.answer:
            a = r.answer
            print(f"{a.at.isoformat(timespec='seconds')} request {r.id} {a.outcome} by "
                  f"{a.by}: {a.before:g} -> {a.after:g}: {a.reason}")
    for c in changes:
        if not args.assignment or c.assignment == args.assignment:
            print(f"{c.at.isoformat(timespec='seconds')} change of {c.assignment} "
                  f"{c.student or c.spool_id}: {c.note()}")
    return 0


def _course(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--course-file", type=Path, metavar="COURSE_YAML",
                    help="the course file (default $GRADELINE_COURSE_FILE)")


def register(sub: Commands) -> None:
    t = sub.add_parser("teams", help="team work: import staff's teams, list teams and "
                                     "their log")
    ts = t.add_subparsers(dest="teams_command", required=True)
    i = ts.add_parser("import", help="make an assignment's teams those of a CSV (team,student"
                                     " or Canvas's group export); every change logged")
    i.add_argument("assignment")
    i.add_argument("csv", type=Path)
    i.add_argument("--reason", default="", help="why, kept with every change")
    i.add_argument("--dry-run", action="store_true", help="list the changes, write nothing")
    _course(i)
    i.set_defaults(func=cmd_teams_import)
    ls = ts.add_parser("list", help="an assignment's teams now, or (--log) every change")
    ls.add_argument("assignment")
    ls.add_argument("--log", action="store_true")
    _course(ls)
    ls.set_defaults(func=cmd_teams_list)

    r = sub.add_parser("regrades", help="regrade requests: the queue, answers, requests "
                                        "for a student, grade overrides, the audit")
    rs = r.add_subparsers(dest="regrades_command", required=True)
    q = rs.add_parser("list", help="the queue, oldest first")
    q.add_argument("--assignment")
    q.add_argument("--group", help="only requests about this test group")
    q.add_argument("--status", default="open", choices=[*STATUSES, "all"])
    q.add_argument("--older", type=float, metavar="HOURS", help="opened at least this "
                                                                "long ago")
    spool_options(q)
    q.set_defaults(func=cmd_regrades_list)
    o = rs.add_parser("open", help="open a request on a student's behalf")
    o.add_argument("assignment")
    o.add_argument("student")
    o.add_argument("group")
    o.add_argument("--reason", required=True)
    o.add_argument("--submission", help="default: the one that counts for the student")
    spool_options(o)
    o.set_defaults(func=cmd_regrades_open)
    a = rs.add_parser("answer", help="answer a request: regraded, adjusted (--points) or "
                                     "declined, with a reason")
    a.add_argument("request", type=int)
    a.add_argument("outcome", choices=OUTCOMES)
    a.add_argument("--reason", required=True, help="what the student reads")
    a.add_argument("--points", type=float, help="adjusted: the group's points now")
    spool_options(a)
    a.set_defaults(func=cmd_regrades_answer)
    v = rs.add_parser("override", help="set one student's grade of an assignment (a team "
                                       "member who did not take part), with a reason")
    v.add_argument("assignment")
    v.add_argument("student")
    v.add_argument("--points", type=float, required=True)
    v.add_argument("--reason", required=True)
    spool_options(v)
    v.set_defaults(func=cmd_regrades_override)
    g = rs.add_parser("log", help="every request, answer and grade change: who, when, "
                                  "before, after, why")
    g.add_argument("--assignment")
    spool_options(g)
    g.set_defaults(func=cmd_regrades_log)
