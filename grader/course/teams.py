"""Teams: who is in which team of an assignment at any moment, from the log of every
change (append-only: a join or a leave, by whom, when), and what that decides.

* A submission belongs to the team its hander was in when handing it in (in none: to
  the hander alone) -- its *owner*. The hand-in limits count the owner's hand-ins
  together, and which submission counts is chosen among the owner's.
* It is seen by the hander, by the members its team had at that moment and by the
  members it has now; by nobody else.
* A student is graded on the team they are in at the end (its counting submission,
  ``course.policy``), or, in none, on what they handed in alone. Leaving a team keeps
  one's history: the earlier submissions stay on one's page, marked with their team.

Self-formed teams change at the students' word until the lock (``teams: lock:``, else
the assignment's deadline): create one (its join code is the team's to share), join one
with its code, leave one. Staff-formed teams change at staff's word only, from a CSV
(``team,student``, or Canvas's group export: ``group_name,login_id``). Every change is a
row of the log; nothing is overwritten.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from grader.core.errors import ConfigError, RefusedError
from grader.course.load import Assignment, Course
from grader.course.spec import TeamsSpec
from grader.course.staffinput import read_csv

#: what a team name may look like: shown on pages and in sheets, written in a command
TEAM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.+-]{0,39}$")
Action = Literal["join", "leave"]
#: who a submission belongs to: ("team", name) or ("student", id)
Owner = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Team:
    """A team of an assignment (it stays once made: a team left by all is empty)."""

    assignment: str
    name: str
    code: str  # its join code ("" for a staff-formed team)
    created_at: datetime
    created_by: str


@dataclass(frozen=True, slots=True)
class TeamEvent:
    """One change of one team: a member joined or left (the store's log, in order)."""

    assignment: str
    team: str
    student: str
    action: Action
    at: datetime  # aware
    by: str  # the student, or the staff account that made it
    reason: str = ""


class Teams:
    """The teams of a course from their log (``events`` in the order they were made)."""

    def __init__(self, teams: Iterable[Team] = (), events: Iterable[TeamEvent] = ()) -> None:
        self.teams = {(t.assignment, t.name): t for t in teams}
        self.events = sorted(events, key=lambda e: e.at)  # stable: equal times keep order
        #: (assignment, student) -> ([when], [team or None from then on])
        self._spans: dict[tuple[str, str], tuple[list[datetime], list[str | None]]] = {}
        for e in self.events:
            times, now_in = self._spans.setdefault((e.assignment, e.student), ([], []))
            times.append(e.at)
            now_in.append(e.team if e.action == "join" else None)

    def team_at(self, assignment: str, student: str, at: datetime | None = None
                ) -> str | None:
        """The student's team of the assignment at ``at`` (None: now, after every
        change), or None when in none."""
        times, teams = self._spans.get((assignment, student), ([], []))
        i = len(times) if at is None else bisect.bisect_right(times, at)
        return teams[i - 1] if i else None

    def members(self, assignment: str, team: str, at: datetime | None = None
                ) -> tuple[str, ...]:
        """The team's members at ``at`` (None: now), sorted."""
        return tuple(sorted(s for (a, s) in self._spans
                            if a == assignment and self.team_at(a, s, at) == team))

    def ever(self, assignment: str, student: str) -> set[str]:
        """Every team the student has been in for the assignment."""
        return {t for t in self._spans.get((assignment, student), ([], []))[1] if t}

    def owner(self, assignment: str, hander: str, at: datetime) -> Owner:
        """Whom a hand-in at ``at`` belongs to (see the module docstring)."""
        team = self.team_at(assignment, hander, at)
        return ("team", team) if team else ("student", hander)

    def graded_as(self, assignment: str, student: str) -> Owner:
        """Whose submissions the student is graded on: their team now, else their own."""
        team = self.team_at(assignment, student)
        return ("team", team) if team else ("student", student)

    def sees(self, assignment: str, student: str, hander: str, at: datetime) -> bool:
        """Whether ``student`` may see a submission ``hander`` handed in at ``at``."""
        if student == hander:
            return True
        team = self.team_at(assignment, hander, at)
        return team is not None and team in (self.team_at(assignment, student, at),
                                             self.team_at(assignment, student))

    def peers(self, assignment: str, student: str) -> set[str]:
        """Everyone whose submissions the student might see: members, then or now, of
        every team the student has been in (``sees`` decides each submission)."""
        teams = self.ever(assignment, student)
        return {s for (a, s), (_, ts) in self._spans.items()
                if a == assignment and not teams.isdisjoint(ts)} | {student}

    def students(self, assignment: str) -> set[str]:
        """Everyone who has ever been in a team of the assignment."""
        return {s for (a, s) in self._spans if a == assignment}

    def by_code(self, assignment: str, code: str) -> Team | None:
        return next((t for t in self.teams.values() if t.assignment == assignment
                     and t.code and t.code == code), None)

    def of(self, assignment: str) -> list[Team]:
        """The assignment's teams, by name."""
        return sorted((t for t in self.teams.values() if t.assignment == assignment),
                      key=lambda t: t.name)


def lock_time(a: Assignment) -> datetime:
    """Until when self-formed teams of ``a`` change: its lock, else its deadline."""
    assert a.teams is not None
    return a.teams.lock or a.deadline


def _spec(course: Course, assignment: str) -> tuple[Assignment, TeamsSpec]:
    a = course.assignments.get(assignment)
    if a is None:
        raise RefusedError(f"course {course.name} has no assignment {assignment!r}")
    if a.teams is None:
        raise RefusedError(f"{assignment} is not team work: everyone hands in alone")
    return a, a.teams


def _self_formed(course: Course, assignment: str, now: datetime) -> TeamsSpec:
    """:raises RefusedError: when students may not change the teams now."""
    a, spec = _spec(course, assignment)
    if spec.formation != "self":
        raise RefusedError(f"the teams of {assignment} are formed by staff: ask them to "
                           "change yours")
    if now >= lock_time(a):
        raise RefusedError(f"the teams of {assignment} locked at "
                           f"{lock_time(a).isoformat(timespec='minutes')}: ask staff to "
                           "change yours")
    return spec


def create(course: Course, teams: Teams, assignment: str, student: str, name: str,
           code: str, now: datetime) -> tuple[Team, TeamEvent]:
    """A new self-formed team named ``name`` (joined by its maker), with ``code``.

    :raises RefusedError: past the lock, in a team already, or a name taken or unfit.
    """
    _self_formed(course, assignment, now)
    current = teams.team_at(assignment, student)
    if current:
        raise RefusedError(f"you are in team {current} of {assignment}: leave it first")
    if not TEAM_NAME.match(name):
        raise RefusedError(f"team name {name!r}: use letters, digits, spaces and . _ + - "
                           "(at most 40, starting with a letter or digit)")
    if (assignment, name) in teams.teams:
        raise RefusedError(f"{assignment} has a team {name} already: choose another name")
    return (Team(assignment, name, code, now, student),
            TeamEvent(assignment, name, student, "join", now, student))


def join(course: Course, teams: Teams, assignment: str, student: str, code: str,
         now: datetime) -> TeamEvent:
    """``student`` joins the team whose code is ``code``.

    :raises RefusedError: past the lock, in a team already, no such code, or full.
    """
    spec = _self_formed(course, assignment, now)
    current = teams.team_at(assignment, student)
    if current:
        raise RefusedError(f"you are in team {current} of {assignment}: leave it first")
    team = teams.by_code(assignment, code.strip())
    if team is None:
        raise RefusedError(f"no team of {assignment} has the code {code.strip()!r}: ask "
                           "your team for theirs")
    if len(teams.members(assignment, team.name)) >= spec.max:
        raise RefusedError(f"team {team.name} is full ({spec.max} members)")
    return TeamEvent(assignment, team.name, student, "join", now, student)


def leave(course: Course, teams: Teams, assignment: str, student: str, now: datetime
          ) -> TeamEvent:
    """``student`` leaves their team (their submissions so far stay theirs to see).

    :raises RefusedError: past the lock, or in no team.
    """
    _self_formed(course, assignment, now)
    current = teams.team_at(assignment, student)
    if not current:
        raise RefusedError(f"you are in no team of {assignment}")
    return TeamEvent(assignment, current, student, "leave", now, student)


def handin_refusal(course: Course, teams: Teams, assignment: str, student: str,
                   at: datetime) -> str:
    """Why a team assignment refuses ``student``'s hand-in at ``at`` ("" when it does
    not): a team of fewer members than ``min`` hands nothing in."""
    a = course.assignments.get(assignment)
    if a is None or a.teams is None:
        return ""
    spec, team = a.teams, teams.team_at(assignment, student, at)
    if team is None:
        if spec.min <= 1:
            return ""
        how = "create a team or join one with its code (gradeline team)" \
            if spec.formation == "self" else "staff put you in one"
        return (f"{assignment} is team work ({spec.min} to {spec.max} members) and you are "
                f"in no team: {how}")
    size = len(teams.members(assignment, team, at))
    if size < spec.min:
        return (f"your team {team} has {size} member{'s' if size != 1 else ''}; "
                f"{assignment} takes hand-ins from teams of {spec.min} to {spec.max}")
    return ""


@dataclass(frozen=True, slots=True)
class Plan:
    """What a staff import changes: teams to make, then leaves and joins (in order)."""

    new: tuple[Team, ...]
    events: tuple[TeamEvent, ...]

    def describe(self) -> list[str]:
        out = [f"new team {t.name}" for t in self.new]
        out += [f"{e.student} {'joins' if e.action == 'join' else 'leaves'} {e.team}"
                for e in self.events]
        return out


def read_teams(text: str, source: str, course: Course, assignment: str
               ) -> dict[str, list[str]]:
    """A staff CSV of teams: ``team,student`` (or Canvas's group export,
    ``group_name`` and ``login_id``) -> {team: [students]}.

    :raises ConfigError: naming the line of a student not on the roster, a student in
        two teams, a name unfit for a team, or a team over or under the course's sizes.
    """
    _, spec = _spec_config(course, assignment)
    cols, rows = read_csv(text, source)
    team_col = "team" if "team" in cols else "group_name" if "group_name" in cols else ""
    who_col = "student" if "student" in cols else "login_id" if "login_id" in cols else ""
    if not team_col or not who_col:
        raise ConfigError(f"{source}:1: the header must name team and student (or "
                          "Canvas's group_name and login_id)")
    out: dict[str, list[str]] = {}
    line: dict[str, int] = {}
    for r in rows:
        team, sid = r.values[team_col].strip(), r.values[who_col].strip()
        if not team and not sid:
            continue
        if not TEAM_NAME.match(team):
            raise ConfigError(f"{source}:{r.line}: team name {team!r}: use letters, "
                              "digits, spaces and . _ + - (at most 40)")
        if course.students and sid not in course.students:
            raise ConfigError(f"{source}:{r.line}: {sid!r} is not on the roster")
        if sid in line:
            raise ConfigError(f"{source}:{r.line}: {sid} is in a team already (line "
                              f"{line[sid]})")
        line[sid] = r.line
        out.setdefault(team, []).append(sid)
    for team, members in out.items():
        if not spec.min <= len(members) <= spec.max:
            raise ConfigError(f"{source}: team {team} has {len(members)} members; "
                              f"{assignment}'s teams have {spec.min} to {spec.max}")
    return out


def _spec_config(course: Course, assignment: str) -> tuple[Assignment, TeamsSpec]:
    try:
        return _spec(course, assignment)
    except RefusedError as e:
        raise ConfigError(str(e)) from None


def plan_import(teams: Teams, assignment: str, wanted: Mapping[str, Sequence[str]],
                by: str, now: datetime, reason: str = "") -> Plan:
    """The changes that make the assignment's teams ``wanted`` (every student not in
    it leaves their team): the least of them, each logged as ``by``'s."""
    new = tuple(Team(assignment, name, "", now, by) for name in sorted(wanted)
                if (assignment, name) not in teams.teams)
    target = {s: team for team, members in wanted.items() for s in members}
    leaves, joins = [], []
    for s in sorted(teams.students(assignment) | set(target)):
        now_in, want = teams.team_at(assignment, s), target.get(s)
        if now_in == want:
            continue
        if now_in:
            leaves.append(TeamEvent(assignment, now_in, s, "leave", now, by, reason))
        if want:
            joins.append(TeamEvent(assignment, want, s, "join", now, by, reason))
    return Plan(new, tuple(leaves + joins))
