"""``gradeline db | image | check-env | settings | usage``: the installation itself,
and what the courses used of the cluster."""

from __future__ import annotations

import argparse

from grader.cli.checkenv import checks
from grader.cli.common import Commands
from grader.cli.images import cmd_image
from grader.compose.context import Context
from grader.core.errors import GradelineError
from grader.core.secret import redact_url


def cmd_db(args: argparse.Namespace, ctx: Context) -> int:
    server = ctx.local_server()

    def show(url: str) -> str:
        """URLs are for scripts (export GRADELINE_DB_URL=$(gradeline db url)), but a
        password in one is shown only on request."""
        return url if args.show_password else redact_url(url)
    if args.action == "start":
        url = ctx.db_url()
        with ctx.store() as s:
            applied = s.migrate()
        print(redact_url(url) +
              (f"  (migrations applied: {', '.join(applied)})" if applied else ""))
    elif args.action == "stop":
        server.stop()
    elif args.action == "url":
        print(show(ctx.settings.db_url or server.url))
    elif args.action == "fresh":
        if not args.name:
            raise GradelineError("db fresh needs a database NAME (letters, digits, _)")
        print(show(ctx.fresh_database(args.name)))
    else:
        up = server.running()
        print(f"local server {'running' if up else 'stopped'} at {server.data}")
        return 0 if up else 1
    return 0


def cmd_check_env(args: argparse.Namespace, ctx: Context) -> int:
    failed = False
    for c in checks(ctx):
        mark = "ok  " if c.ok else ("FAIL" if c.required else "warn")
        failed |= (not c.ok) and c.required
        print(f"{mark} {c.name:<18} {c.detail}")
        if not c.ok and c.remedy:
            print(f"     -> {c.remedy}")
    return 1 if failed else 0


def cmd_settings(args: argparse.Namespace, ctx: Context) -> int:
    """Every environment variable gradeline reads, its value here, what it is for."""
    for env, value, doc in ctx.settings.describe():
        print(f"{env}\n    = {value}\n    {doc}")
    return 0


def cmd_usage(args: argparse.Namespace, ctx: Context) -> int:
    """Core-hours per course account and QOS from Slurm's accounting database."""
    sched = ctx.scheduler()
    if sched is None:
        raise GradelineError("no Slurm controller answers (set SLURM_CONF, or start the "
                             "local cluster: slurm/local-cluster.sh start --accounting)")
    course = ctx.course_file()
    accounts = args.account or ([course.slurm.account] if course and course.slurm.account
                                else None)
    if course is not None and not accounts:
        raise GradelineError(f"course {course.name} names no Slurm account (slurm: account: "
                             "in the course file); give --account")
    rows = sched.usage(args.since, accounts)
    print(f"{'account':<16} {'qos':<12} {'jobs':>7} {'core-hours':>11}")
    for u in rows:
        print(f"{u.account:<16} {u.qos:<12} {u.jobs:>7} {u.core_hours:>11.3f}")
    for acct in sorted({u.account for u in rows}):
        mine = [u for u in rows if u.account == acct]
        print(f"{acct:<16} {'(all)':<12} {sum(u.jobs for u in mine):>7} "
              f"{sum(u.core_hours for u in mine):>11.3f}")
    if not rows:
        print(f"(no jobs since {args.since})")
    return 0


def register(sub: Commands) -> None:
    d = sub.add_parser("db", help="the local PostgreSQL server (unless GRADELINE_DB_URL)")
    d.add_argument("action", choices=["start", "stop", "status", "url", "fresh"],
                   help="fresh NAME: an empty database NAME on the local server; prints its URL")
    d.add_argument("name", nargs="?")
    d.add_argument("--show-password", action="store_true",
                   help="url/fresh: print a password that the URL holds (hidden otherwise)")
    d.set_defaults(func=cmd_db)

    i = sub.add_parser("image", help="build, locate, list or prune the grading images")
    i.add_argument("action", choices=["build", "status", "list", "prune"],
                   help="prune: remove images of other definitions, and with --assignment "
                        "the assignment images of other autograders")
    i.add_argument("--definition", help="definition file (default containers/grader.def)")
    i.add_argument("--assignment", action="append", default=[], metavar="PACKAGE",
                   help="build: also the image of this autograder package (its setup.sh "
                        "run once, with the network); prune: keep its image (repeatable)")
    i.add_argument("--examples", action="store_true",
                   help="build/status/prune: as --assignment for every bundled example "
                        "that has an image of its own (what 'make demo' and the tests grade)")
    i.add_argument("--force", action="store_true", help="rebuild even when cached")
    i.set_defaults(func=cmd_image)

    e = sub.add_parser("check-env", help="what this machine can do; remedies for what not")
    e.set_defaults(func=cmd_check_env, reports_only=True)

    s = sub.add_parser("settings", help="every knob read from the environment, with its value")
    s.set_defaults(func=cmd_settings, reports_only=True)

    u = sub.add_parser("usage", help="core-hours per course account and QOS (Slurm "
                                     "accounting)")
    u.add_argument("--since", default="now-30days",
                   help="from when, in Slurm's time format (default %(default)s)")
    u.add_argument("--account", action="append", default=[],
                   help="this account only (repeatable); default: the course file's, else all")
    u.add_argument("--course-file", help="the course whose account to report")
    u.set_defaults(func=cmd_usage, reports_only=True)
