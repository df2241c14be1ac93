"""What the command modules share: the options every course command takes, the typed
``Options`` of an invocation read from its flags, and handlers imported only when their
command runs. The wiring itself is a library: ``grader.compose``."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar

from grader.compose.context import Context
from grader.compose.options import PILOT, Options

T = TypeVar("T")


class Commands(Protocol):
    """Where a command group adds its commands (``argparse``'s sub-parsers, as used)."""

    def add_parser(self, name: str, *, help: str = ..., description: str = ...,
                   formatter_class: type[argparse.HelpFormatter] = ...
                   ) -> argparse.ArgumentParser: ...


def options_from(args: argparse.Namespace) -> Options:
    """The flags of any command as ``Options`` (a command without a flag leaves its
    default: the settings or the course file decide)."""
    a = vars(args)

    def path(name: str) -> Path | None:
        return Path(a[name]) if a.get(name) else None

    def given(name: str, default: T) -> T:
        value: T = default if a.get(name) is None else a[name]
        return value

    return Options(
        spool=path("spool"), course=a.get("course") or None, course_file=path("course_file"),
        assignments=tuple(Path(d) for d in a.get("assignments") or ()),
        executor=a.get("executor"), dispatch=given("dispatch", "arrays"),
        pilots=a.get("pilots"), pilot_idle_s=given("pilot_idle", PILOT.idle_s),
        pilot_minutes=given("pilot_minutes", PILOT.minutes),
        cpus_per_task=given("cpus_per_task", 1), shard_size=a.get("shard_size"),
        throttle=a.get("throttle"), partition=a.get("partition"),
        retries=given("retries", 2))


def spool_options(sp: argparse.ArgumentParser) -> None:
    """--spool, --course, --assignments (the options of every course command)."""
    sp.add_argument("--spool", help="spool directory (default $GRADELINE_SPOOL or ./spool)")
    sp.add_argument("--course", help="course name (default $GRADELINE_COURSE or 'default')")
    sp.add_argument("--assignments", action="append", default=[],
                    help="directory of assignment packages (default "
                         "$GRADELINE_ASSIGNMENTS or the bundled examples)")
    sp.add_argument("--course-file", type=Path, metavar="COURSE_YAML",
                    help="the course file (default $GRADELINE_COURSE_FILE): its course, "
                         "its packages, and at hand-in only their visible groups")


Handler = Callable[[argparse.Namespace, Context], int]


def lazy(module: str, name: str) -> Handler:
    """A command handler imported only when its command runs, so that heavy
    dependencies of one command (the campaign's scipy, pandas, matplotlib: seconds)
    do not slow down every other ``gradeline`` call."""

    def run(args: argparse.Namespace, ctx: Context) -> int:
        handler: Handler = getattr(importlib.import_module(module), name)
        return handler(args, ctx)

    return run


