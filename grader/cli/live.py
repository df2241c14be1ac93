"""``gradeline web`` and ``gradeline status --watch``: the live view for course staff
(handlers, registered lazily: the web stack and numpy load only when used)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import uvicorn

from grader.adapters import web
from grader.adapters.scheduler.accounting import Usage
from grader.adapters.store.postgres import Store
from grader.compose.context import Context
from grader.core.errors import GradelineError
from grader.views.desk import Desk, desk_key
from grader.views.live import Snapshot, snapshot, text
from grader.views.staff import StaffPages


def provider(args: argparse.Namespace, ctx: Context) -> web.Provider:
    """Reads the store and the spool afresh at each call (survives database restarts)."""
    spool, course = ctx.spool(), ctx.course()
    url = ctx.db_url()

    def current() -> Mapping[str, Any]:
        since = datetime.fromtimestamp(time.time() - args.window - 3600, UTC)
        try:
            with Store(url) as store:
                rows = store.finished(course, since)
        except GradelineError as e:
            rows = []
            print(f"gradeline: {e}", file=sys.stderr)
        waiting = len(spool.new_entries())
        in_progress = sum(len(spool.batch_entries(b)) for b in spool.batches())
        return snapshot(course, rows, waiting=waiting, in_progress=in_progress,
                        window_s=args.window).to_dict()

    return current


def cmd_web(args: argparse.Namespace, ctx: Context) -> int:
    """The live page; with a course file also the staff pages and students' own pages
    (their links come from the desk, signed with the same key)."""
    course = ctx.course_file()
    staff = students = None
    if course is not None:
        problems = ctx.problems()
        staff = StaffPages(course, ctx.spool(), ctx.reads(), problems,
                           usage=_usage(ctx, course.slurm.account))
        key = desk_key(ctx.state_dir / "desk.key")
        students = Desk(course, ctx.spool(), ctx.reads(), problems, key).page_for
    app = web.app(provider(args, ctx), refresh_s=args.refresh, staff=staff,
                  students=students)
    what = "live and staff pages" if staff else "live page"
    print(f"gradeline {what} for course {ctx.course()}: http://{args.host}:{args.port}/",
          file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def _usage(ctx: Context, account: str | None) -> Callable[[str], list[Usage]] | None:
    """The course account's core-hours from Slurm's accounting, where both exist."""
    sched = ctx.scheduler() if account else None
    if sched is None or account is None:
        return None
    return lambda since: sched.usage(since, [account])


def cmd_watch(args: argparse.Namespace, ctx: Context) -> int:
    current = provider(args, ctx)
    try:
        while True:
            s = Snapshot(**current())
            if sys.stdout.isatty():
                print("\033[H\033[2J", end="")
            print(text(s), flush=True)
            if args.once:
                return 0
            time.sleep(args.refresh)
    except KeyboardInterrupt:
        return 0
