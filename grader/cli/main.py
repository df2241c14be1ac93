"""The ``gradeline`` command: parse the arguments, read the settings once, run the
command, and map every GradelineError to a message and exit status 2 (what users read
in ``--help`` is ``cli.help``'s).

Exit codes: 0 success, 1 the requested check failed (e.g. a self-check mismatch),
2 an error of gradeline or its configuration, 128 + N stopped by signal N (what the
command started has ended: see ``stopping``).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import logging
import os
import select
import sys
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path

from grader import __version__, faults
from grader.cli import (
    admin,
    course,
    dropbox,
    experiment,
    grading,
    lms,
    lti,
    measure,
    ondemand,
    plan,
    serving,
    similarity,
    status,
    stopping,
    students,
    submit,
    teams,
    trace,
)
from grader.cli import help as help_text
from grader.cli.common import options_from
from grader.cli.format import Progress
from grader.compose.context import Context
from grader.core.errors import GradelineError
from grader.settings import load


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gradeline", description=help_text.DESCRIPTION,
                                usage="gradeline [-h] [--version] [-v] [--state-dir DIR] "
                                      "COMMAND ...")
    p.add_argument("--version", action="version", version=f"gradeline {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    p.add_argument("--state-dir", type=Path, default=None, metavar="DIR",
                   help="images and scratch space (default: $GRADELINE_STATE_DIR, or "
                        "/var/lib/gradeline as root)")
    sub = p.add_subparsers(dest="command", required=True, prog="gradeline")
    for group in (grading, submit, serving, lms, status, course, similarity, dropbox, students, lti,
                  teams, ondemand, admin, measure,
                  experiment, trace, plan):
        group.register(sub)
    help_text.finish(p)
    return p


class _ReaderGone(Exception):
    """Standard output is a pipe whose reader has closed it."""


def _stdout_gone() -> bool:
    """Whether standard output is a pipe nobody reads any more (poll says POLLERR)."""
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError):
        return False
    poll = select.poll()
    poll.register(fd, select.POLLOUT)
    return any(ev & select.POLLERR for _, ev in poll.poll(0))


@contextlib.contextmanager
def _unwritable(state_dir: Path) -> Iterator[None]:
    """A permission refused under the state directory said as what to do about it, not
    as a bare errno."""
    try:
        yield
    except OSError as e:
        name = Path(os.fsdecode(e.filename)) if e.filename else None
        if e.errno not in (errno.EACCES, errno.EPERM, errno.EROFS) or name is None or \
                not name.is_relative_to(state_dir):
            raise
        raise GradelineError(
            f"state dir {state_dir}: cannot write {name} ({e.strerror}): give this account "
            f"(uid {os.geteuid()}) write access to it, or point --state-dir or "
            "GRADELINE_STATE_DIR at a directory it may write") from e


@contextlib.contextmanager
def _errors(verbose: bool, command: str) -> Iterator[None]:
    try:
        yield
    except BrokenPipeError as e:
        if _stdout_gone():
            raise _ReaderGone from e
        print(f"gradeline: error: {e}", file=sys.stderr)
        raise SystemExit(2) from e
    except GradelineError as e:
        print(f"gradeline: error: {e}", file=sys.stderr)
        raise SystemExit(2) from e
    except OSError as e:  # a file or program the environment lacks: say which
        if verbose:  # an errno without a file name (ENOSPC) says where only here
            traceback.print_exc()
        print(f"gradeline: error: {e}", file=sys.stderr)
        raise SystemExit(2) from e
    except Exception as e:  # a bug of ours: one line, the traceback with -v
        if verbose:
            traceback.print_exc()
        print(f"gradeline: internal error: {type(e).__name__}: {e}"
              + ("" if verbose else f" (for the traceback: gradeline -v {command} ...)"),
              file=sys.stderr)
        raise SystemExit(2) from e


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    stopping.install()
    try:
        return _run(args)
    except _ReaderGone:
        # the reader of our output left (``gradeline examples | head -1``): end quietly,
        # as Unix tools do; what is left to print is for nobody
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except stopping.Stopped as e:
        print(f"gradeline: stopped by {e}: what it started has ended", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(128 + e.signum)  # no exit handler may wait for a worker


def _run(args: argparse.Namespace) -> int:
    with _errors(args.verbose, args.command):
        settings = load()
        faults.arm(settings.fault, settings.fault_dir)
        ctx = Context(settings, args.state_dir or settings.state_dir, options_from(args),
                      progress=Progress)
        if not getattr(args, "reports_only", False):  # check-env reports it instead
            ctx.refuse_shared_state()
        with _unwritable(ctx.state_dir):
            status = int(args.func(args, ctx))
        sys.stdout.flush()  # a reader that left is seen here, not at interpreter exit
        return status


def entrypoint() -> None:
    raise SystemExit(main(sys.argv[1:]))
