"""The staff side's hand-in doors (a drop directory collected, an LMS's download
imported, ``gradeline submit``) under the one rule every door follows
(``course.handin.admit``): each hand-in is admitted with the student's earlier hand-ins
of the assignment, the store's and those this command took itself, or refused with
the reason the desk would give; staff may take a refused one with a reason, recorded
in its spool entry.

The store is asked only where the assignment has a hand-in limit or is team work, so
a course without either hands in without a database (as ``gradeline submit`` always
could). Of team work, the limits count the team's hand-ins (``course.teams``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol

from grader.core.errors import GradelineError
from grader.course.handin import Admission, admit
from grader.course.load import Course
from grader.course.teams import Teams

log = logging.getLogger(__name__)


class HandinHistory(Protocol):
    """The store's record of hand-ins (receipts and graded submissions)."""

    def handins(self, course: str, student: str, assignment: str
                ) -> list[tuple[str, datetime]]: ...

    def teams(self, course: str) -> Teams: ...


class Door:
    """One staff command's hand-ins to ``course`` (see the module docstring).

    :param history: opens the store, or None where there is none (then only this
        command's own hand-ins count toward the limits, and that is said once).
    :param override: staff's reason to take what the rule refuses ("" takes nothing
        refused).
    """

    def __init__(self, course: Course,
                 history: Callable[[], AbstractContextManager[HandinHistory]] | None,
                 *, override: str = "", by: str = "staff") -> None:
        self.course, self.history = course, history
        self.override = f"{by}: {override.strip()}" if override.strip() else ""
        self._taken: dict[tuple[str, str], list[datetime]] = {}
        self._warned = False
        self._teams: Teams | None = None

    def admit(self, student: str, assignment: str, at: datetime) -> Admission:
        """:raises RefusedError: with the rule's reason (``course.handin.admit``)."""
        a = self.course.assignments.get(assignment)
        teams = self.teams() if a is not None and a.teams else Teams()
        adm = admit(self.course, student, assignment, at,
                    self._earlier(student, assignment, teams, at), override=self.override,
                    teams=teams)
        self._taken.setdefault((student, assignment), []).append(at)
        return adm

    def teams(self) -> Teams:
        """The course's teams (read once per command; none without a store)."""
        if self._teams is None:
            self._teams = Teams()
            if self.history is not None:
                try:
                    with self.history() as store:
                        self._teams = store.teams(self.course.name)
                except GradelineError as e:
                    self._say(f"teams unavailable ({e}): every student hands in alone")
        return self._teams

    def _earlier(self, student: str, assignment: str, teams: Teams, at: datetime
                 ) -> list[datetime]:
        """The earlier hand-ins the limits count: the student's, or their team's."""
        a = self.course.assignments.get(assignment)
        handers = sorted(teams.peers(assignment, student)) if a and a.teams else [student]
        seen = [(h, t) for h in handers for t in self._taken.get((h, assignment), [])]
        if a is None or not a.limits.any:
            return [t for _, t in seen]
        if self.history is None:
            self._say("no results database: the hand-in limits count only this "
                      "command's own hand-ins")
        else:
            try:
                with self.history() as store:
                    seen += [(h, t) for h in handers for _, t in
                             store.handins(self.course.name, h, assignment)]
            except GradelineError as e:
                self._say(f"hand-in history unavailable ({e}): the hand-in limits count "
                          "only this command's own hand-ins")
        if not a.teams:
            return [t for _, t in seen]
        ours = teams.owner(assignment, student, at)
        return [t for h, t in seen if teams.owner(assignment, h, t) == ours]

    def _say(self, text: str) -> None:
        if not self._warned:
            log.warning("%s", text)
            self._warned = True
