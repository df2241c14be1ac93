"""The read side wired, one call each: a course's student desk and its staff pages over
the store's read connections (``Context.reads``) and the spool -- what ``gradeline
desk``, ``gradeline web`` and the LTI tool serve (the live snapshot's source:
``snapshots``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import timedelta

from grader.adapters.scheduler.accounting import Usage
from grader.adapters.spool import Spool
from grader.compose.context import Context
from grader.course.load import Course
from grader.formats.problem import Problem
from grader.views.grading import Grading
from grader.views.regrade_queue import RegradeQueue
from grader.views.staff_pages import StaffPages
from grader.views.student_desk import LINK_TTL, Desk, desk_key


def key(ctx: Context) -> bytes:
    """The desk's signing key (receipts, students' links): ``gradeline receipt verify``
    and ``gradeline web`` check with the same one."""
    return desk_key(ctx.state_dir / "desk.key")


def student_desk(ctx: Context, course: Course, problems: Mapping[str, Problem] | None = None,
                 *, page_url: str | None = None, link_ttl: timedelta = LINK_TTL) -> Desk:
    """The course's desk: hand-ins to the spool (made where there is none: a hand-in
    door makes it), results from the store; ``problems``: the course file's packages."""
    return Desk(course, ctx.spool(create=True), ctx.reads(),
                problems if problems is not None else ctx.problems(), key(ctx),
                page_url=page_url, link_ttl=link_ttl)


def staff_pages(ctx: Context, course: Course, problems: Mapping[str, Problem] | None = None,
                *, spool: Spool | None = None, usage: bool = True) -> StaffPages:
    """The course's staff pages; ``usage``: with the cluster use of the course's Slurm
    account, where Slurm's accounting answers."""
    return StaffPages(course, spool or ctx.spool(), ctx.reads(),
                      problems if problems is not None else ctx.problems(),
                      usage=_usage(ctx, course.slurm.account) if usage else None)


def regrade_queue(ctx: Context, course: Course, problems: Mapping[str, Problem] | None = None,
                  *, spool: Spool | None = None) -> RegradeQueue:
    """The course's regrade requests and grade changes for staff (the spool's files of
    a submission only where there is a spool)."""
    root = ctx.spool_path()
    return RegradeQueue(course, spool or (Spool(root) if root.exists() else None),
                        ctx.reads(), problems if problems is not None else ctx.problems())


def _usage(ctx: Context, account: str | None) -> Callable[[str], list[Usage]] | None:
    """The course account's core-hours from Slurm's accounting, where both exist."""
    sched = ctx.scheduler() if account else None
    if sched is None or account is None:
        return None
    return lambda since: sched.usage(since, [account])


def grading(ctx: Context, staff: StaffPages) -> Grading | None:
    """Grading by hand for the course of ``staff`` (None: no assignment has a rubric);
    pseudonyms and form tokens are keyed by the desk's key."""
    if all(a.rubric is None for a in staff.course.assignments.values()):
        return None
    return Grading(staff, key(ctx))
