"""The handlers of ``gradeline lti`` (imported when one runs: the LTI library and the
web stack load only then)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount

from grader.adapters.web.lti.app import Tool
from grader.adapters.web.lti.registrations import (
    Registrations,
    key_files,
    load_registrations,
    new_key,
)
from grader.adapters.web.lti.state import LtiState
from grader.compose.context import Context
from grader.compose.lti import Courses, roster_sync, session_key, state_of, sync_grades
from grader.core.errors import ConfigError, GradelineError
from grader.course.load import load_course

log = logging.getLogger("gradeline")


def _tool(args: argparse.Namespace, ctx: Context
          ) -> tuple[Registrations, LtiState, Courses]:
    return load_registrations(Path(args.registrations)), state_of(ctx), Courses(ctx)


def _course_files(regs: Registrations, where: Path) -> None:
    """Every course file lti.yaml names, read before the tool starts: a missing or
    broken one is refused naming it, not found by the first student's launch."""
    for p in regs.platforms:
        for f in (p.course_file, *p.contexts.values()):
            if f is None:
                continue
            if not f.is_file():
                raise ConfigError(f"{where}: platform {p.issuer}: course_file {f}: no such "
                                  "file (a relative path is read from lti.yaml's "
                                  "directory); the tool was not started")
            try:
                load_course(f)
            except GradelineError as e:
                raise ConfigError(f"{where}: platform {p.issuer}: {e}; the tool was not "
                                  "started") from None


def cmd_serve(args: argparse.Namespace, ctx: Context) -> int:
    regs = load_registrations(Path(args.registrations))
    _course_files(regs, Path(args.registrations))  # before the database and the port
    state, courses = state_of(ctx), Courses(ctx)
    tool = Tool(regs, state, courses, session_key(ctx))
    prefix = urlparse(regs.base_url).path.rstrip("/")
    app = Starlette(routes=[Mount(prefix or "/", app=tool.app())])
    stop = threading.Event()

    def sync() -> None:
        while not stop.wait(args.sync_every):
            try:
                sync_grades(regs, state, courses)
            except Exception:  # the LMS or the database away: the next round tries again
                log.exception("grades to the LMS")

    if args.sync_every > 0:
        threading.Thread(target=sync, daemon=True, name="lti-grades").start()
    print(f"gradeline LTI tool at {regs.base_url} (listening on {args.host}:{args.port}); "
          f"platforms: {', '.join(p.issuer for p in regs.platforms)}", file=sys.stderr,
          flush=True)
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning",
                    proxy_headers=False)
    finally:
        stop.set()
    return 0


def cmd_keys(args: argparse.Namespace, ctx: Context) -> int:
    regs = load_registrations(Path(args.registrations))
    if args.rotate:
        print(f"new signing key {new_key(regs.key_dir)}; the older ones stay published "
              "until you remove them", file=sys.stderr)
    print(json.dumps({"keys": regs.jwks()["keys"] if not args.rotate else
                      load_registrations(Path(args.registrations)).jwks()["keys"]}, indent=1))
    print(f"signing with {key_files(regs.key_dir)[-1].name}", file=sys.stderr)
    return 0


def cmd_sync(args: argparse.Namespace, ctx: Context) -> int:
    regs, state, courses = _tool(args, ctx)
    r = sync_grades(regs, state, courses)
    print(f"grades to the LMS: {len(r.posted)} posted, {r.unchanged} unchanged, "
          f"{len(r.waiting)} waiting to be retried, {len(r.failed)} failed, "
          f"{len(r.no_lineitem)} without a gradebook column (link the assignment first)"
          + (f"; made {len(r.columns)} gradebook column(s)" if r.columns else ""))
    for key, why in r.failed:
        print(f"  failed {key}: {why}")
    return 1 if r.failed else 0


def cmd_roster(args: argparse.Namespace, ctx: Context) -> int:
    regs, state, _ = _tool(args, ctx)
    course = ctx.course_required(" (whose roster to fill)")
    changes, text = roster_sync(regs, state, course)
    for line in changes:
        print(line)
    if args.write and course.source is not None and changes:
        roster = course.roster_source or course.source.parent / "roster.csv"
        roster.write_text(text)
        print(f"wrote {roster}" + ("" if course.roster_source else
                                   f" (name it in {course.source.name}: roster: roster.csv)"),
              file=sys.stderr)
    elif changes:
        print("(--write puts this into the roster)", file=sys.stderr)
    return 0
