"""``gradeline status | web | results``: where a course's submissions are, the live and
staff pages, and the current results exported (the web stack loads only for ``web``
and ``status --watch``: ``cli.web``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from grader.cli.common import Commands, lazy, spool_options
from grader.cli.format import state_table
from grader.compose.context import Context
from grader.core.errors import GradelineError
from grader.core.export import csv_rows, gradescope, junit_xml
from grader.pipeline.slurm.tickets import SickReports
from grader.views.status import STATES, course_status


def cmd_status(args: argparse.Namespace, ctx: Context) -> int:
    if args.watch or args.once:
        return lazy("grader.cli.web", "cmd_watch")(args, ctx)
    spool = ctx.spool()
    course = ctx.course()
    note = ""
    stored = None
    try:
        with ctx.store(start=False) as store:
            stored = store.status(course)
    except GradelineError as e:
        note = f"(database unavailable: {e})"
    st = course_status(spool, stored)
    print(f"course {course}, spool {spool.root} {note}")
    print(state_table(st.counts, STATES))
    if st.reasons:
        print("quarantined:")
        for a, sid, code, msg in st.reasons:
            print(f"  {a:<12} {sid}: {code}: {msg}")
    for h in SickReports(spool.pilots).handled():
        done = "drained" if h.get("drained") else f"NOT drained ({h.get('error')}): ask an admin"
        print(f"sick node {h['node']}: {done}; {h['reason']} -- its judge errors: "
              "gradeline regrade --judge-errors")
    return 0


def cmd_results(args: argparse.Namespace, ctx: Context) -> int:
    with ctx.store() as store:
        rows = store.current_results(ctx.course(), args.assignment)
    if args.format == "csv":
        print(csv_rows(rows), end="")
    elif args.format == "junit":
        print(junit_xml(rows), end="")
    else:
        print(json.dumps({st: gradescope(r) for st, r in rows}, indent=2))
    return 0


def live_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--window", type=float, default=600.0,
                   help="seconds of history shown (default %(default)s)")
    p.add_argument("--refresh", type=int, default=5, help="seconds between refreshes")


def register(sub: Commands) -> None:
    """What staff look at: status, the live page and the staff pages, results."""
    st = sub.add_parser("status", help="per assignment: new, claimed, graded, quarantined; "
                                       "--watch: the live view in the terminal")
    spool_options(st)
    live_options(st)
    st.add_argument("--watch", action="store_true",
                    help="backlog, throughput, latency, verdicts, nodes, failures; refreshed")
    st.add_argument("--once", action="store_true", help="the --watch view once")
    st.set_defaults(func=cmd_status)

    w = sub.add_parser("web", help="students' own pages (HTTP, by signed link) and, on a "
                                   "socket for the course's staff only, the live and staff "
                                   "pages")
    spool_options(w)
    live_options(w)
    w.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default %(default)s: this machine only)")
    w.add_argument("--port", type=int, default=8470)
    w.add_argument("--staff-socket", type=Path, metavar="PATH",
                   help="where the live and staff pages answer the course's staff (the "
                        "course file's staff: accounts, groups), by the kernel's word on "
                        "who connects (default <state>/web/staff.sock)")
    w.set_defaults(func=lazy("grader.cli.web", "cmd_web"))

    rs = sub.add_parser("results", help="export the current results of an assignment")
    spool_options(rs)
    rs.add_argument("--assignment", required=True)
    rs.add_argument("--format", choices=["csv", "gradescope", "junit"], default="csv")
    rs.set_defaults(func=cmd_results)
