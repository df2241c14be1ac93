"""The student desk: hand-in with a signed receipt, one's own results, a link to one's
own page, the choice of the submission that counts, a performance measurement on
demand (a token spent, the measurement made by the serving host's bulk pass), one's
team (create, join with its code, leave: ``course.teams``) and regrade requests
(``course.regrades``).

Who asks is the front end's word (the socket's peer, by the kernel:
``adapters.desk_socket``; a signed launch or link), never a request's; what they may
see is ``course.studentview``'s, given as values (``course.shown``). The desk runs as
the grading account (it writes the spool and reads the store), not as root.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import secrets
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from grader.adapters.spool import Spool
from grader.core.errors import ConfigError, GradelineError, RefusedError
from grader.core.signing import KEY_BYTES, open_token, sign, token
from grader.core.textfile import head
from grader.core.upload import MAX_UPLOAD_BYTES, Upload
from grader.course import teams as tm
from grader.course.handgrades import QuestionGrade, shown_hand
from grader.course.handin import admit, admit_measurement
from grader.course.load import Course
from grader.course.regrades import Request, check_request, shown, target_of, window
from grader.course.rubric import Rubric
from grader.course.shown import (
    HandGradeView,
    Link,
    Measuring,
    Receipt,
    RequestView,
    StudentView,
    TeamView,
)
from grader.course.studentview import SHOWN_BYTES, Submitted, student_view
from grader.course.teams import Teams
from grader.formats.problem import Problem
from grader.views.ports import CourseReads, ReadsOpener, TeamRows
from grader.views.rubric_files import RubricFiles

log = logging.getLogger(__name__)
FILE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,99}$")
LINK_TTL = timedelta(hours=1)
TEAM_ACTIONS = ("create", "join", "leave")
_CODE = "abcdefghjkmnpqrstuvwxyz23456789"  # a join code's letters: none mistaken for another


def desk_key(path: Path) -> bytes:
    """The desk's signing key (made once, readable by the grading account only)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        key = path.read_bytes()
        if len(key) != KEY_BYTES or path.stat().st_mode & 0o077:
            raise GradelineError(f"{path}: not a desk key (32 bytes, mode 0600)") from None
        return key
    with os.fdopen(fd, "wb") as f:
        f.write(os.urandom(KEY_BYTES))
    return path.read_bytes()


def case_data(problems: Mapping[str, Problem]) -> Callable[[str, str], tuple[str, str]]:
    """What ``student_view`` shows of a failed test: its input and answer, cut."""
    def data(assignment: str, test: str) -> tuple[str, str]:
        p = problems.get(assignment)
        for c in p.cases if p else ():
            if c.name == test:
                return head(c.input_path, SHOWN_BYTES), head(c.answer_path, SHOWN_BYTES)
        return "", ""
    return data


class Desk:
    """Answers one student's request (see the module docstring)."""

    def __init__(self, course: Course, spool: Spool, store: ReadsOpener,
                 problems: Mapping[str, Problem], key: bytes, *,
                 page_url: str | None = None, link_ttl: timedelta = LINK_TTL,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.course, self.spool, self.store, self.key = course, spool, store, key
        self.page_url, self.link_ttl, self.clock = page_url, link_ttl, clock
        self.case_data = case_data(problems)
        #: the assignments whose packages have performance tests (what may be measured)
        self.timed = frozenset(n for n, p in problems.items() if p.performance is not None)
        self._locks: dict[str, threading.Lock] = {}  # a student's hand-ins, one at a time
        self._lock = threading.Lock()
        #: assignment -> {spool id: (hander, when)} of hand-ins taken here: the limits
        #: count them even where the store missed their receipts (it was down)
        self._taken: dict[tuple[str, str], dict[str, datetime]] = {}
        self.rubrics = RubricFiles()  # grading by hand: the rubric files as they read now
        self._handers: dict[str, dict[str, tuple[str, datetime]]] = {}

    def on_roster(self, student: str) -> None:
        """:raises RefusedError: when the course has a roster without ``student``."""
        if self.course.students and student not in self.course.students:
            raise RefusedError(f"{student} is not on the roster of course "
                               f"{self.course.name}")

    def _assignment(self, name: object) -> str:
        try:
            return self.course.assignment(str(name)).name
        except ConfigError as e:
            raise RefusedError(str(e)) from None

    def hand_in(self, student: str, assignment_name: object, name: object,
                body: Upload | None) -> Receipt:
        """Take ``body`` (a file the caller received) as ``student``'s hand-in: the desk's
        semantics for every front end (limits, a signed receipt, the late flag).

        :raises RefusedError: with the reason (a bad name, too large, past a limit).
        """
        assignment = self._assignment(assignment_name)
        if not isinstance(name, str) or not FILE_NAME.match(name):
            raise RefusedError(f"file name {name!r}: use letters, digits and . _ + - "
                               "(at most 100)")
        if body is None:
            raise RefusedError("a hand-in carries its file (gradeline hand-in sends it)")
        if body.size > MAX_UPLOAD_BYTES:
            raise RefusedError(f"{name} is larger than {MAX_UPLOAD_BYTES >> 20} MiB")
        digest = hashlib.sha256()
        with body.path.open("rb") as f:
            while chunk := f.read(1 << 16):
                digest.update(chunk)
        with self._student_lock(self._owner_key(student, assignment)):
            when = self.clock().replace(microsecond=0)
            teams = self._teams()
            adm = admit(self.course, student, assignment, when,
                        self._earlier(student, assignment, teams, when), teams=teams)
            with tempfile.TemporaryDirectory(prefix="named-", dir=body.path.parent) as tmp:
                path = Path(tmp) / name
                os.link(body.path, path)
                entry = self.spool.submit(course=self.course.name, assignment=assignment,
                                          student=student, path=path,
                                          submitted_at=when.isoformat(),
                                          deferred=adm.deferred,
                                          team=teams.members(assignment, adm.team, when)
                                          if adm.team else ())
            self._handers.setdefault(assignment, {})[entry.id] = (student, when)
        receipt = Receipt(entry.id, self.course.name, assignment, student, name,
                          when.isoformat(), body.size, digest.hexdigest(),
                          adm.deadline.isoformat(), adm.late, adm.deferred,
                          adm.limit if adm.deferred else "", adm.left)
        receipt = replace(receipt, signature=sign(self.key, receipt.fields()))
        try:
            with self.store() as store:
                store.add_receipt(receipt)
        except GradelineError as e:  # the spool has it: nothing is lost, only listed later
            log.warning("receipt %s not stored: %s", entry.id, e)
        return receipt

    def _student_lock(self, key: str) -> threading.Lock:
        with self._lock:
            return self._locks.setdefault(key, threading.Lock())

    def _teams(self) -> Teams:
        """The course's teams (none where the store is down, or no assignment has any:
        a team's hand-in is then refused by the rule where it needs a team)."""
        if not any(a.teams for a in self.course.assignments.values()):
            return Teams()
        try:
            with self.store() as store:
                return store.teams(self.course.name)
        except GradelineError as e:
            log.warning("teams unavailable: %s", e)
            return Teams()

    def _owner_key(self, student: str, assignment: str) -> str:
        """What one hand-in at a time is per: the student's team now, else the student."""
        if self.course.assignments[assignment].teams is None:
            return student
        kind, name = self._teams().graded_as(assignment, student)
        return f"{assignment}|{kind}|{name}"

    def _earlier(self, student: str, assignment: str, teams: Teams, now: datetime
                 ) -> list[datetime]:
        """The earlier hand-ins of the assignment by the student, or by their team now
        (every member's for it): the store's, and the ones this desk took (a receipt
        the store missed still counts)."""
        if self.course.assignments[assignment].teams is None:
            handers = [student]
        else:
            handers = sorted(teams.peers(assignment, student))
        seen = {sid: (h, t) for sid, (h, t) in self._handers.get(assignment, {}).items()
                if h in handers}
        try:
            with self.store() as store:
                for h in handers:
                    seen.update({sid: (h, t) for sid, t in
                                 store.handins(self.course.name, h, assignment)})
        except GradelineError as e:
            log.warning("hand-in history of %s unavailable: %s", student, e)
        if self.course.assignments[assignment].teams is None:
            return sorted(t for _, t in seen.values())
        ours = teams.owner(assignment, student, now)
        return sorted(t for h, t in seen.values() if teams.owner(assignment, h, t) == ours)

    def _gather(self, store: CourseReads, student: str
                ) -> tuple[list[Submitted], dict[str, datetime | None], Teams, list[Request]]:
        """What the student's view is made of: their submissions (and their teams'),
        the releases, the teams and their regrade requests."""
        name = self.course.name
        teams = store.teams(name) if any(a.teams for a in self.course.assignments.values()) \
            else Teams()
        peers = {p for a in self.course.assignments.values() if a.teams
                 for p in teams.peers(a.name, student)} - {student}
        subs = store.student_submissions(name, student)
        for p in sorted(peers):
            subs += [s for s in store.student_submissions(name, p)
                     if self.course.assignments.get(s.assignment) is not None
                     and self.course.assignments[s.assignment].teams is not None]
        released = {a: store.released(name, a) for a in self.course.assignments}
        requests = store.regrade_requests(name, student=student) \
            if any(a.regrades for a in self.course.assignments.values()) else []
        return subs, released, teams, requests

    def view(self, student: str, assignment: object = None) -> StudentView:
        """The student's own page as a value (one assignment, or all)."""
        only = None if assignment is None else self._assignment(assignment)
        view = self._read(student, self.clock())[0]
        return view if only is None else view.only(only)

    def _read(self, student: str, now: datetime
              ) -> tuple[StudentView, list[Submitted], Mapping[str, datetime | None]]:
        """The student's view as of ``now``, with the records and releases it is of."""
        graded = [(a.name, a.rubric) for a in self.course.ordered() if a.rubric is not None]
        with self.store() as store:
            mine, released, teams, requests = self._gather(store, student)
            measured = store.measurements(self.course.name, student) \
                if any(a.on_demand for a in self.course.assignments.values()) else []
            hand = self._hand_grades(store, student, {s.spool_id for s in mine}) \
                if graded else {}
        view = student_view(self.course, student, mine, released=released, now=now,
                            case_data=self.case_data, measured=measured, teams=teams,
                            requests=requests,
                            hand={name: self._hand(rubric, hand[name])
                                  for name, rubric in graded if released.get(name) and
                                  name in hand})
        return view, list(mine), released

    def _hand_grades(self, store: CourseReads, student: str, seen: set[str]
                     ) -> dict[str, list[QuestionGrade]]:
        """The student's hand-grades; of team work the team's (graded on the submission
        of a member the student sees)."""
        if not any(a.teams and a.rubric for a in self.course.assignments.values()):
            return store.hand_grades(self.course.name, student=student)
        out = {}
        for name, grades in store.hand_grades(self.course.name).items():
            mine = [g for g in grades if g.student == student] or \
                [g for g in grades if g.spool_id in seen and self.course.assignments[name].teams]
            if mine:
                out[name] = mine
        return out

    def _hand(self, rubric: Rubric, grades: list[QuestionGrade]) -> HandGradeView:
        """A student's hand-grade with the lines of the submission graded (its files as
        the spool keeps them) that comments are at."""
        current = self.rubrics.rubric(rubric) or rubric
        graded = next((g.spool_id for g in grades if g.spool_id), None)
        files = {name: text.splitlines()
                 for name, text in (self.spool.payload_files(graded) if graded else [])}
        return shown_hand(current, {g.question: g for g in grades}, files)

    def measure(self, student: str, assignment_name: object) -> Measuring:
        """Spend one of ``student``'s tokens on a measurement of the performance tests of
        their latest submission of the assignment (``course.handin.admit_measurement``);
        the serving host's bulk pass measures it, their page shows the curve after.

        :raises RefusedError: with every reason that refuses it.
        """
        assignment = self._assignment(assignment_name)
        with self._student_lock(student), self.store() as store:
            at = self.clock().replace(microsecond=0)
            mine = [s for s in store.student_submissions(self.course.name, student)
                    if s.assignment == assignment]
            asked = [m for m in store.measurements(self.course.name, student)
                     if m.assignment == assignment]
            adm = admit_measurement(self.course, student, assignment, at, mine, asked,
                                    timed=assignment in self.timed)
            token = store.add_measurement(self.course.name, assignment, student,
                                          adm.submission, at, adm.tokens)
        if token is None:  # another request took the last token meanwhile
            raise RefusedError(f"{assignment}: you have used {adm.tokens} of the "
                               f"{adm.tokens} performance measurements on demand")
        return Measuring(self.course.name, assignment, student, adm.submission,
                         at.isoformat(), adm.used, adm.tokens)

    def page_for(self, link_token: str) -> StudentView:
        """The view a student's link opens (``adapters.web.StudentSource``).

        :raises RefusedError: a forged, edited or expired link, or another course's.
        """
        fields = open_token(self.key, link_token, self.clock())
        student = fields.get("student")
        if fields.get("course") != self.course.name or not isinstance(student, str):
            raise RefusedError("not a link to this course's pages")
        return self.view(student)

    def link(self, student: str) -> Link:
        """A link to the student's own page, valid for ``link_ttl``."""
        if not self.page_url:
            raise RefusedError("this desk has no results page to link to (staff start it "
                               "with --page-url); 'gradeline mine' shows the same")
        expires = (self.clock() + self.link_ttl).replace(microsecond=0)
        t = token(self.key, {"student": student, "course": self.course.name,
                             "expires": expires.isoformat()})
        return Link(f"{self.page_url.rstrip('/')}/me/{t}", expires.isoformat())

    def choose(self, student: str, assignment_name: object, submission: object) -> str:
        """Make ``submission`` the one that counts for ``student`` (courses that let
        students choose, until their deadline); the submission chosen."""
        assignment = self._assignment(assignment_name)
        a = self.course.assignments[assignment]
        if a.counts != "chosen":
            raise RefusedError(f"{assignment} counts your {a.counts} submission; there is "
                               "nothing to choose")
        due = self.course.deadline(student, assignment)
        if self.clock() > due:
            raise RefusedError(f"the choice for {assignment} closed at {due.isoformat()}")
        with self.store() as store:
            store.choose(self.course.name, assignment, student, str(submission), by=student)
        return str(submission)

    def team(self, student: str, assignment_name: object, action: object,
             value: object = None) -> TeamView | None:
        """Create a team named ``value``, join the one whose code is ``value``, or leave
        one's team (self-formed teams, until their lock); the student's team after it.

        :raises RefusedError: with the rule's reason (``course.teams``).
        """
        assignment = self._assignment(assignment_name)
        if action not in TEAM_ACTIONS:
            raise RefusedError(f"a team is created, joined or left ({', '.join(TEAM_ACTIONS)}),"
                               f" not {action!r}")
        now, text = self.clock(), str(value or "").strip()

        def decide(teams: Teams) -> TeamRows:
            if action == "create":
                code = "".join(secrets.choice(_CODE) for _ in range(8))
                made, joined = tm.create(self.course, teams, assignment, student, text, code,
                                         now)
                return (made,), (joined,)
            if action == "join":
                return (), (tm.join(self.course, teams, assignment, student, text, now),)
            return (), (tm.leave(self.course, teams, assignment, student, now),)
        with self.store() as store:
            store.change_teams(self.course.name, decide)
        return self.view(student, assignment).assignments[0].team

    def ask(self, student: str, assignment_name: object, group: object, reason: object,
            submission: object = None, *, by: str | None = None) -> RequestView:
        """A regrade request about test group ``group`` of ``submission`` (default: the
        one that counts for the student), or a question of their released hand-grade
        (``course.regrades.target_of``), with ``reason``; ``by``: the staff account
        that opens it on the student's behalf (no window, no count).

        :raises RefusedError: outside the window, or not a question it takes
            (``course.regrades.check_request``), with the reason.
        """
        assignment = self._assignment(assignment_name)
        now, why = self.clock(), str(reason or "")
        whole, subs, released = self._read(student, now)
        view = whole.only(assignment).assignments[0]
        sub = next((s for s in view.submissions if (s.id == submission if submission
                                                    else s.counts)), None)
        record = next((s for s in subs if sub is not None and s.spool_id == sub.id), None)
        full = record.full or record.visible if record else None
        target = target_of(str(group or ""), sub, view.hand)

        def decide(earlier: list[Request]) -> Request:
            mine = [r for r in earlier if r.assignment == assignment]
            win = window(self.course, assignment, student, released.get(assignment), now,
                         sum(1 for r in mine if r.opened_by == student))
            before, most = check_request(self.course, assignment, sub, target, why, win, mine,
                                         staff=by is not None, hand=view.hand)
            assert sub is not None
            out_of = most if target.kind == "rubric" else \
                full.max_score if full and full.max_score else 1.0
            return Request(0, assignment, sub.id, student, target, why.strip(), now,
                           by or student, before, most, out_of)
        with self.store() as store:
            return shown(store.open_request(self.course.name, student, decide))
