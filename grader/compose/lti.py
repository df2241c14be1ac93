"""The LTI tool wired to gradeline: for each course file a launch opens, its desk (a
student's view and hand-in, with the desk's semantics) and its staff pages, built when
first used; and the grades and roster that go to and come from its LMS -- which ones is
the course's to say (``course.lms_grades``, ``course.lms_roster``), this module only
fetches what those rules read and hands on what they return."""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Mapping
from pathlib import Path

from grader.adapters.store.postgres import Store
from grader.adapters.web import pages, staff_html
from grader.adapters.web.design import rebase
from grader.adapters.web.grading_routes import grading_html, grading_post
from grader.adapters.web.lti import services
from grader.adapters.web.lti.registrations import Registrations
from grader.adapters.web.lti.services import SyncReport, post_grades
from grader.adapters.web.lti.state import LtiState
from grader.adapters.web.student import measuring_said, request_said, team_said
from grader.compose import read_side
from grader.compose.context import Context
from grader.core.errors import GradelineError, RefusedError
from grader.core.upload import Upload
from grader.course.gradingview import Viewer
from grader.course.lms_grades import Posting, lms_postings
from grader.course.lms_roster import reconcile, roster_csv
from grader.course.load import Course, load_course
from grader.course.shown import Receipt, StudentView
from grader.formats.load import load_problem
from grader.formats.problem import Problem
from grader.views.grading import Grading
from grader.views.staff_pages import StaffPages
from grader.views.student_desk import Desk, desk_key

log = logging.getLogger(__name__)


def _stamp(course: Course) -> tuple[int, ...]:
    """When the course's files last changed (0: gone, which a reload then reports): the
    course file, its roster and its rubrics."""
    out = []
    rubrics = [a.rubric.source for a in course.ordered() if a.rubric is not None]
    for f in (course.source, course.roster_source, *rubrics):
        try:
            out.append(f.stat().st_mtime_ns if f else 0)
        except OSError:
            out.append(0)
    return tuple(out)


class Loaded:
    """One course file as loaded: the course, its packages and when its files last
    changed; its desk and staff pages are made when first asked for (a grades sync
    needs neither)."""

    def __init__(self, ctx: Context, course_file: str) -> None:
        self.ctx = ctx
        self.course = load_course(course_file)
        self.problems: dict[str, Problem] = {a.name: load_problem(a.package)
                                             for a in self.course.ordered()}
        self.stamp = _stamp(self.course)

    @functools.cached_property
    def desk(self) -> Desk:
        return read_side.student_desk(self.ctx, self.course, self.problems)

    @functools.cached_property
    def staff(self) -> StaffPages:
        return read_side.staff_pages(self.ctx, self.course, self.problems,
                                     spool=self.ctx.spool(create=True), usage=False)

    @functools.cached_property
    def grading(self) -> Grading | None:
        """Grading by hand (None: no assignment of the course has a rubric)."""
        return read_side.grading(self.ctx, self.staff)

    def points(self) -> dict[str, float]:
        """Each assignment's points at most, by its package."""
        return {n: p.max_score for n, p in self.problems.items()}


class Courses:
    """``adapters.web.lti.app.CourseSide`` for the courses a tool serves (loaded on
    their first launch, again when their files change)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._lock = threading.Lock()
        self._loaded: dict[str, Loaded] = {}

    def _get(self, course_file: str) -> Loaded:
        """The course as its files say now: loaded again when the course file or its
        roster changed (``lti roster --write``, an extension), not only at start."""
        with self._lock:
            found = self._loaded.get(course_file)
            if found is None or _stamp(found.course) != found.stamp:
                found = self._loaded[course_file] = Loaded(self.ctx, course_file)
            return found

    def course(self, course_file: str) -> Course:
        return self._get(course_file).course

    def view(self, course_file: str, student: str) -> StudentView:
        return self._get(course_file).desk.view(student)

    def hand_in(self, course_file: str, student: str, assignment: str, name: str,
                body: Upload) -> Receipt:
        return self._get(course_file).desk.hand_in(student, assignment, name, body)

    def change(self, course_file: str, student: str, what: str, fields: Mapping[str, str]
               ) -> str:
        """A team's change, a regrade request or a measurement on demand through the
        course's desk (the rules are the desk's, whichever door); what it did, in words."""
        desk, a = self._get(course_file).desk, fields.get("assignment", "")
        if what == "team":
            team = desk.team(student, a, fields.get("action", ""), fields.get("value"))
            return team_said(team, a)
        if what == "ask":
            r = desk.ask(student, a, fields.get("group", ""), fields.get("reason", ""),
                         fields.get("submission") or None)
            return request_said(r)
        if what == "measure":
            return measuring_said(desk.measure(student, a))
        raise RefusedError(f"no such change {what!r}")

    def max_points(self, course_file: str, assignment: str) -> float:
        loaded = self._get(course_file)
        return float(loaded.course.assignments[assignment].points or
                     loaded.points()[assignment])

    def staff_page(self, course_file: str, path: str, base: str, user: str = "",
                   instructor: bool = False) -> str | None:
        """The staff page at ``path`` (the web's) as ``user`` may see it (an anonymous
        assignment's students by pseudonym), its links under ``base``."""
        loaded = self._get(course_file)
        g = loaded.grading
        if g is None:
            html = staff_html(loaded.staff, path)
        else:
            viewer = Viewer(user, instructor)
            html = grading_html(g, viewer, path, self._nav(loaded, path)) or \
                staff_html(g.staff_for(viewer), path)
        return rebase(html, base) if html is not None else None

    def evaluations(self, course_file: str, assignment: str, user: str, instructor: bool
                    ) -> str | None:
        """The evaluations CSV of the grading page, as ``user`` may see it."""
        g = self._get(course_file).grading
        return None if g is None else g.evaluations(Viewer(user, instructor), assignment)

    def staff_post(self, course_file: str, path: str, fields: Mapping[str, list[str]],
                   base: str, user: str, instructor: bool) -> tuple[int, str, str]:
        """A grading form posted at ``path``: (status, its page under ``base``, where to
        go next)."""
        loaded = self._get(course_file)
        if loaded.grading is None:
            return 404, "", ""
        status, html, where = grading_post(loaded.grading, Viewer(user, instructor), path,
                                           fields, self._nav(loaded, path))
        return status, rebase(html, base), where

    @staticmethod
    def _nav(loaded: Loaded, path: str) -> str:
        g = loaded.grading
        return pages.staff_nav(loaded.staff.assignments(), path.partition("?")[0],
                               graded=g.graded() if g else ())

    def postings(self, state: LtiState) -> list[Posting]:
        """What each LMS course's gradebook should hold now (``course.lms_grades``)."""
        out = []
        with Store(self.ctx.db_url()) as store:
            for key, ctx in state.contexts().items():
                if "course_file" not in ctx:
                    continue
                loaded = self._get(ctx["course_file"])
                name = loaded.course.name
                graded = any(a.rubric for a in loaded.course.assignments.values())
                out += lms_postings(loaded.course, key, store.attempts(name),
                                    {a: store.released(name, a)
                                     for a in loaded.course.assignments},
                                    loaded.points(), ctx.get("users") or {},
                                    hand=store.hand_grades(name) if graded else None,
                                    teams=store.teams(name),
                                    changes=store.grade_changes(name))
        return out


def sync_grades(regs: Registrations, state: LtiState, courses: Courses) -> SyncReport:
    """Post what changed (see ``adapters.web.lti.services.post_grades``)."""
    report = post_grades(regs, state, courses.postings(state))
    if report.posted or report.failed:
        log.info("grades to the LMS: %d posted, %d failed, %d unchanged", len(report.posted),
                 len(report.failed), report.unchanged)
    return report


def state_of(ctx: Context) -> LtiState:
    return LtiState(ctx.state_dir / "lti")


def session_key(ctx: Context) -> bytes:
    """The key the tool signs its pages' tokens with (its own, beside the desk's)."""
    return desk_key(ctx.state_dir / "lti" / "session.key")


def roster_sync(regs: Registrations, state: LtiState, course: Course) -> tuple[list[str], str]:
    """What the LMS's member list (NRPS) of every LMS course launched into this course
    file changes in the roster (``course.lms_roster.reconcile``), and the roster CSV
    with those changes."""
    members = []
    for ctx in state.contexts().values():
        if course.source is not None and ctx.get("course_file") and \
                Path(ctx["course_file"]).resolve() == course.source.resolve():
            members += services.members(regs, ctx)
    if not members:
        raise GradelineError(f"no launch from an LMS course of {course.name} yet: launch "
                             "gradeline from the LMS once, then sync its roster")
    changes, rows = reconcile(course.students, members, functools.partial(
        services.is_staff_role, staff=course.lms.staff_roles))
    return changes, roster_csv(rows.values())
