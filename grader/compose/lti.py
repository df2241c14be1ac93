"""The LTI tool wired to gradeline: for each course file a launch opens, its desk (a
student's view and hand-in, with the desk's semantics), its staff pages, and the grades
and roster that go to and come from its LMS."""

from __future__ import annotations

import csv
import io
import logging
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from grader.adapters.store.postgres import Store
from grader.adapters.web import staff_html
from grader.adapters.web.design import rebase
from grader.adapters.web.lti import services
from grader.adapters.web.lti.registrations import Registrations
from grader.adapters.web.lti.services import Posting, SyncReport, post_grades
from grader.adapters.web.lti.state import LtiState
from grader.compose.context import Context
from grader.core.errors import GradelineError
from grader.core.upload import Upload
from grader.course.lms_mapping import NOBODY, Roster
from grader.course.lms_scores import lms_scores
from grader.course.load import ROSTER_OPTIONAL, ROSTER_REQUIRED, Course, Student, load_course
from grader.course.policy import grade_course
from grader.course.shown import Receipt, StudentView
from grader.formats.load import load_problem
from grader.formats.problem import Problem
from grader.views.staff_pages import StaffPages
from grader.views.student_desk import Desk, desk_key

log = logging.getLogger(__name__)


def _stamp(course: Course) -> tuple[int, ...]:
    """When the course's files last changed (0: gone, which a reload then reports)."""
    out = []
    for f in (course.source, course.roster_source):
        try:
            out.append(f.stat().st_mtime_ns if f else 0)
        except OSError:
            out.append(0)
    return tuple(out)


class Courses:
    """``adapters.web.lti.app.CourseSide`` for the courses a tool serves (loaded on
    their first launch, again when their files change)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.key = desk_key(ctx.state_dir / "desk.key")  # receipts: `receipt verify` checks
        self._lock = threading.Lock()
        self._loaded: dict[str, tuple[Course, Desk, StaffPages, dict[str, Problem],
                                      tuple[int, ...]]] = {}

    def _get(self, course_file: str) -> tuple[Course, Desk, StaffPages, dict[str, Problem]]:
        """The course as its files say now: loaded again when the course file or its
        roster changed (``lti roster --write``, an extension), not only at start."""
        with self._lock:
            found = self._loaded.get(course_file)
            if found is None or _stamp(found[0]) != found[4]:
                course = load_course(course_file)
                problems = {a.name: load_problem(a.package) for a in course.ordered()}
                spool = self.ctx.spool(create=True)  # a hand-in door makes it
                found = self._loaded[course_file] = (
                    course, Desk(course, spool, self.ctx.reads(), problems, self.key),
                    StaffPages(course, spool, self.ctx.reads(), problems), problems,
                    _stamp(course))
            return found[:4]

    def course(self, course_file: str) -> Course:
        return self._get(course_file)[0]

    def view(self, course_file: str, student: str) -> StudentView:
        return self._get(course_file)[1].view(student)

    def hand_in(self, course_file: str, student: str, assignment: str, name: str,
                body: Upload) -> Receipt:
        return self._get(course_file)[1].hand_in(student, assignment, name, body)

    def max_points(self, course_file: str, assignment: str) -> float:
        course, _, _, problems = self._get(course_file)
        a = course.assignments[assignment]
        return float(a.points or problems[assignment].max_score)

    def staff_page(self, course_file: str, path: str, base: str) -> str | None:
        """The staff page at ``path`` (the web's), its links under ``base``."""
        html = staff_html(self._get(course_file)[2], path)
        return rebase(html, base) if html is not None else None

    def postings(self, state: LtiState) -> list[Posting]:
        """What each LMS course's gradebook should hold now (``course.lms_scores``), for
        the students whose LMS ids are known (the roster's lms_id, or a launch's)."""
        out = []
        with Store(self.ctx.db_url()) as store:
            for key, ctx in state.contexts().items():
                if "course_file" not in ctx:
                    continue
                course, _, _, problems = self._get(ctx["course_file"])
                attempts = store.attempts(course.name)
                released = {a: store.released(course.name, a) for a in course.assignments}
                points = {n: p.max_score for n, p in problems.items()}
                users = {**{s.id: s.lms_id for s in course.students.values() if s.lms_id},
                         **(ctx.get("users") or {})}
                for s in lms_scores(course, grade_course(course, attempts, points), attempts,
                                    released, points):
                    if s.student in users:
                        out.append(Posting(key, s.assignment, users[s.student], s.given,
                                           s.maximum, s.grading, s.activity, s.submitted_at))
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
    """What the LMS's member list (NRPS) changes in the course's roster, and the roster
    CSV with those changes: each learner linked to their row by LMS id, email or SIS id
    (the row gets the ``lms_id``), a learner with no row added, a row the LMS does not
    list named. Instructors and TAs are listed: their staff pages come from a launch."""
    members: list[dict[str, Any]] = []
    for ctx in state.contexts().values():
        if course.source is not None and ctx.get("course_file") and \
                Path(ctx["course_file"]).resolve() == course.source.resolve():
            members += services.members(regs, ctx)
    if not members:
        raise GradelineError(f"no launch from an LMS course of {course.name} yet: launch "
                             "gradeline from the LMS once, then sync its roster")
    rows = dict(course.students)
    roster = Roster(rows)
    changes, seen = [], set()
    for m in members:
        name, email = str(m.get("name", "")), str(m.get("email") or "").lower()
        if services.is_staff_role(m.get("roles") or [], course.lms.staff_roles):
            changes.append(f"staff in the LMS: {name} <{email}>")
            continue
        if m.get("status", "Active") != "Active":
            continue
        sub, sis = str(m["user_id"]), str(m.get("lis_person_sourcedid") or "")
        sid, why = roster.member(sub, email, sis)
        if sid is None and why != NOBODY:
            changes.append(f"not linked: {name} <{email}> (LMS id {sub}): {why}")
            continue
        if sid is None:
            sid = email.split("@")[0] if email and email.split("@")[0] not in rows else \
                f"lms-{sub}"
            rows[sid] = Student(sid, name, email, sis_id=sis, lms_id=sub)
            changes.append(f"added {sid}: {name} <{email}> (LMS id {sub})")
        elif rows[sid].lms_id != sub:
            rows[sid] = replace(rows[sid], lms_id=sub)
            changes.append(f"linked {sid} to LMS id {sub}")
        seen.add(sid)
    changes += [f"not in the LMS: {sid}" for sid in rows if sid not in seen]
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(ROSTER_REQUIRED + ROSTER_OPTIONAL)
    for s in rows.values():
        ext = f"{int(s.extension.total_seconds())}s" if s.extension else ""  # as read
        w.writerow((s.id, s.name, s.email, ext, s.sis_id, s.section, s.lms_id))
    return changes, out.getvalue()
