"""What one student may see of their own submissions: the privacy rules in one place.

Every channel a student reaches (the desk's ``gradeline mine``, the per-student page)
shows only what :func:`student_view` returns, so what a student sees is decided here
and nowhere else:

* only their own submissions (the caller asks by the identity the kernel or a signed
  link vouched for, never by a name in the request);
* of each, the groups the course shows now: ``visible`` at once, ``after_deadline``
  once *their* deadline has passed, ``after_release`` once staff released the
  assignment, ``hidden`` never (not a name, not a count, not a verdict);
* a failed test of a shown group with its input, expected answer and the program's
  output, each cut to ``SHOWN_BYTES``;
* a total: before release, the points of the shown groups out of what they are
  worth; after it, the full score (which hidden groups count towards) and the
  verdict of the whole suite;
* of a submission taken past a hand-in limit (deferred), nothing graded until their
  deadline has passed;
* per assignment, what its hand-in limits leave: hand-ins used and left, and when the
  next one is allowed;
* of team work (``course.teams``), also the submissions of their team that
  ``Teams.sees`` lets them see (who handed each in, for which team), their team now,
  and which submission counts for them: the team's;
* their regrade requests with staff's answers, and when they may ask
  (``course.regrades``);
* per assignment that offers them, their performance measurements on demand: tokens
  used of those offered, and what each measured (``course.ondemand``).
* of an assignment graded by hand (``course.handgrades``), the rubric items applied,
  the comments at their lines and the total -- once staff released it, not before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial

from grader.core.result import SubmissionResult, TestResult
from grader.core.verdict import Verdict
from grader.course.handin_limits import allowance
from grader.course.load import Course
from grader.course.ondemand import Measured, on_demand_view
from grader.course.perfview import shown_performance
from grader.course.policy import Attempt, counting, lateness
from grader.course.regrades import Request, shown, window
from grader.course.shown import (
    AssignmentView,
    HandGradeView,
    LimitsLeft,
    ShownGroup,
    ShownTest,
    StudentView,
    SubmissionView,
    TeamView,
)
from grader.course.spec import Visibility
from grader.course.teams import Owner, Teams, lock_time
from grader.course.visibility import group_visibility

SHOWN_BYTES = 1000  # of a failed test's input, answer and output

#: (assignment, test name) -> (input, answer) of a shown test, each cut to SHOWN_BYTES
CaseData = Callable[[str, str], tuple[str, str]]


@dataclass(frozen=True, slots=True)
class Submitted:
    """One of the student's submissions as the store holds it (records unfiltered)."""

    spool_id: str
    assignment: str
    submitted_at: datetime  # aware
    state: str  # claimed | graded | quarantined (or waiting: not stored yet)
    reason: str = ""  # why it was refused, when quarantined
    visible: SubmissionResult | None = None  # the hand-in phase's record (some groups)
    full: SubmissionResult | None = None  # the whole suite's record
    chosen: bool = False
    sha256: str = ""  # of the handed-in bytes, when the desk took them
    deferred: bool = False  # taken past a hand-in limit: feedback after the deadline
    student: str = ""  # who handed it in ("" the student whose view it is)


def student_view(course: Course, student: str, submitted: Sequence[Submitted], *,
                 released: Mapping[str, datetime | None], now: datetime,
                 case_data: CaseData, measured: Sequence[Measured] = (),
                 teams: Teams | None = None, requests: Sequence[Request] = (),
                 hand: Mapping[str, HandGradeView] | None = None) -> StudentView:
    """The student's page as a value; see the module docstring.

    :param submitted: the student's submissions, and of team work their peers' too
        (``Teams.peers``): only those the student may see are shown.
    :param measured: their requests for performance measurements.
    :param requests: the student's regrade requests (``course.regrades``).
    :param hand: assignment -> the student's hand-grade (shown only once released).
    """
    teams = teams or Teams()
    by: dict[str, list[Submitted]] = {}
    for s in submitted:
        by.setdefault(s.assignment, []).append(s)
    out = []
    for a in course.ordered():
        hander = {s.spool_id: s.student or student for s in by.get(a.name, [])}
        mine = sorted((s for s in by.get(a.name, []) if hander[s.spool_id] == student or
                       (a.teams and teams.sees(a.name, student, hander[s.spool_id],
                                               s.submitted_at))),
                      key=lambda s: (s.submitted_at, s.spool_id))
        owner: Owner = teams.graded_as(a.name, student) if a.teams else ("student", student)
        ours = {s.spool_id for s in mine if owner == (
            teams.owner(a.name, hander[s.spool_id], s.submitted_at) if a.teams
            else ("student", hander[s.spool_id]))}
        due = course.deadline(student, a.name)
        rel = released.get(a.name)
        attempts = [Attempt(s.spool_id, student, a.name, s.submitted_at,
                            _fraction(s.visible or s.full), None, s.chosen)
                    for s in mine if s.state != "quarantined" and s.spool_id in ours]
        counts = counting(course, a, attempts)
        subs = [_submitted(course, student, a.name, s, hander[s.spool_id], counts, now, rel,
                           teams, case_data) for s in mine]
        allow = allowance(a.limits, [s.submitted_at for s in mine if s.spool_id in ours], now)
        asked = [r for r in requests if r.assignment == a.name]
        out.append(AssignmentView(
            a.name, due.isoformat(), rel.isoformat() if rel else None, tuple(subs),
            LimitsLeft(allow.used, allow.left,
                       allow.next_at.isoformat() if allow.next_at else None, allow.why,
                       allow.deferred),
            team=_team(course, teams, a.name, student, now),
            regrades=window(course, a.name, student, rel, now,
                            sum(1 for r in asked if r.opened_by == student)),
            requests=tuple(shown(r) for r in asked),
            on_demand=on_demand_view(a.on_demand, [m for m in measured
                                                   if m.assignment == a.name])
            if a.on_demand else None,
            hand=(hand or {}).get(a.name) if rel is not None else None))
    return StudentView(student, course.name, now.isoformat(), tuple(out))


def _submitted(course: Course, student: str, assignment: str, s: Submitted, hander: str,
               counts: Attempt | None, now: datetime, rel: datetime | None,
               teams: Teams, case_data: CaseData) -> SubmissionView:
    """One submission as ``student`` sees it."""
    a = course.assignments[assignment]
    due = course.deadline(student, assignment)
    late = lateness(course, a, Attempt(s.spool_id, student, a.name, s.submitted_at))
    item = SubmissionView(s.spool_id, s.submitted_at.isoformat(),
                          round(late.total_seconds() / 3600, 2),
                          counts is not None and counts.spool_id == s.spool_id,
                          s.state, s.sha256, by="" if hander == student else hander,
                          team=(teams.team_at(assignment, hander, s.submitted_at) or "")
                          if a.teams else "")
    if s.state == "quarantined":
        return replace(item, reason=s.reason)
    if s.deferred and now < due:
        return replace(item, deferred=True, message="taken past the assignment's "
                       "hand-in limit: its feedback comes after your deadline")
    shown_groups = _shown_groups(s, a.visibility, past_due=now >= due, released=rel is not None)
    return _result(item, s, shown_groups, rel is not None, partial(case_data, a.name))


def _team(course: Course, teams: Teams, assignment: str, student: str, now: datetime
          ) -> TeamView | None:
    a = course.assignments[assignment]
    if a.teams is None:
        return None
    name = teams.team_at(assignment, student) or ""
    team = teams.teams.get((assignment, name))
    lock = lock_time(a)
    return TeamView(name, teams.members(assignment, name) if name else (),
                    team.code if team else "", lock.isoformat(),
                    a.teams.formation == "self" and now < lock, a.teams.min, a.teams.max)


def _fraction(r: SubmissionResult | None) -> float | None:
    return r.score / r.max_score if r is not None and r.max_score else None


def _shown_groups(s: Submitted, rules: Mapping[str, Visibility], *, past_due: bool,
                  released: bool) -> frozenset[str]:
    groups = {g.name for r in (s.visible, s.full) if r for g in r.groups} | \
             {t.group for r in (s.visible, s.full) if r for t in r.tests}
    show = {"visible": True, "after_deadline": past_due, "after_release": released,
            "hidden": False}
    return frozenset(g for g, v in group_visibility(groups, rules).items() if show[v])


def _result(item: SubmissionView, s: Submitted, shown: frozenset[str], released: bool,
            case_data: Callable[[str], tuple[str, str]]) -> SubmissionView:
    """Verdict, score, compile output and the shown tests of one graded submission."""
    first = s.visible or s.full
    if first is None:
        return replace(item, message="not graded yet")
    out = replace(item, verdict=first.verdict.value, score=0.0, max_score=first.max_score)
    if first.verdict is Verdict.CE:
        return replace(out, compile_output=first.compile.output if first.compile else "")
    if first.verdict is Verdict.JE and not first.tests:
        return replace(out, score=None, message="grading failed on our side; staff are "
                                                "told and will grade it again")
    tests: list[TestResult] = []
    groups: list[ShownGroup] = []
    for r, phase in ((s.visible, "visible"), (s.full, "full")):
        if r is None:
            continue
        for g in r.groups:
            if g.name in shown and g.name not in {x.name for x in groups}:
                groups.append(ShownGroup(g.name, g.verdict.value, g.score, g.points,
                                         g.passed, g.total, phase))
        have = {t.name for t in tests}
        tests += [t for t in r.tests if t.group in shown and t.name not in have]
    out = replace(out, groups=tuple(groups), tests=tuple(_test(t, case_data) for t in tests))
    if released and s.full is not None:
        perf = s.full.performance
        return replace(out, verdict=s.full.verdict.value, score=s.full.score,
                       max_score=s.full.max_score, complete=True,
                       performance=shown_performance(perf) if perf is not None else None)
    bad = [t.verdict for t in tests if t.verdict is not Verdict.AC]
    verdict = first.verdict if first.verdict in (Verdict.CE, Verdict.JE) else \
        (bad[0] if bad else Verdict.AC)
    return replace(out, verdict=verdict.value, score=sum(g.points for g in groups),
                   max_score=sum(g.max_points for g in groups))


def _test(t: TestResult, case_data: Callable[[str], tuple[str, str]]) -> ShownTest:
    if t.verdict is Verdict.AC:
        return ShownTest(t.name, t.group, t.verdict.value, t.cpu_time_s, t.feedback)
    given, expected = case_data(t.name)
    return ShownTest(t.name, t.group, t.verdict.value, t.cpu_time_s, t.feedback,
                     given[:SHOWN_BYTES], expected[:SHOWN_BYTES], t.output[:SHOWN_BYTES])
