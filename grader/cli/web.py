"""``gradeline web`` and ``gradeline status --watch``: the live view for course staff
(handlers, registered lazily: the web stack and numpy load only when used)."""

from __future__ import annotations

import argparse
import socket
import sys
import time
from pathlib import Path

from grader.adapters import web
from grader.adapters.peercred import Peer, is_one_of
from grader.adapters.web import serving
from grader.compose import read_side, snapshots
from grader.compose.context import Context
from grader.views.snapshot import text


def staff_socket(args: argparse.Namespace, ctx: Context) -> Path:
    """--staff-socket, or the grading account's default."""
    return Path(args.staff_socket) if args.staff_socket else ctx.state_dir / "web" / \
        "staff.sock"


def cmd_web(args: argparse.Namespace, ctx: Context) -> int:
    """Students' own pages over TCP (their links come from the desk, signed with the
    same key); the live page and, with a course file, the staff pages on the staff
    socket, to the course's staff only (``adapters.web.serving``)."""
    ctx.spool(create=True)  # a service: it makes the spool the desk hands in to
    course = ctx.course_file()
    staff = students = grading = None
    is_staff = None
    if course is not None:
        problems = ctx.problems()
        staff = read_side.staff_pages(ctx, course, problems)
        students = read_side.student_desk(ctx, course, problems).page_for
        grading = read_side.grading(ctx, staff)
        named = course.staff

        def is_staff(peer: Peer) -> bool:
            return is_one_of(peer, [*named.accounts, *named.instructors], named.groups)
    sock = staff_socket(args, ctx)
    door = f"the staff socket ({socket.gethostname()}:{sock}; ssh -L 8470:{sock} " \
           f"{socket.gethostname()}, then http://localhost:8470/)"
    app = web.app(snapshots.snapshots(ctx, args.window), refresh_s=args.refresh, staff=staff,
                  students=students, is_staff=is_staff, staff_door=door, grading=grading)
    who = ", ".join([*course.staff.accounts, *(f"group {g}" for g in course.staff.groups)]) \
        if course is not None else ""
    print(f"gradeline web for course {ctx.course()}: students' own pages on "
          f"http://{args.host}:{args.port}/me/...; live{' and staff' if staff else ''} "
          f"pages on {sock} for {who or 'this account only'} (ssh -L 8470:{sock} "
          f"{socket.gethostname()})", file=sys.stderr, flush=True)
    serving.serve(app, host=args.host, port=args.port, staff_socket=sock)
    return 0


def cmd_watch(args: argparse.Namespace, ctx: Context) -> int:
    current = snapshots.snapshots(ctx, args.window)
    try:
        while True:
            s = current()
            if sys.stdout.isatty():
                print("\033[H\033[2J", end="")
            print(text(s), flush=True)
            if args.once:
                return 0
            time.sleep(args.refresh)
    except KeyboardInterrupt:
        return 0
