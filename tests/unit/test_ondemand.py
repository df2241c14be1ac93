"""Performance measured on demand, the pure part: the rule a request passes
(``course.handin.admit_measurement``: the hand-in door's checks, then tokens, the
deadline, a request still waiting and the latest submission accepted on the visible
tests) as a table; the tokens a refund gives back; what the page shows of them; and the
job and problem a measurement grades (its performance tests only)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from grader.cli.students import render
from grader.core.errors import ProblemFormatError, RefusedError
from grader.core.jobs import GradingJob
from grader.core.perfresult import Performance
from grader.core.result import SubmissionResult
from grader.core.verdict import Verdict
from grader.course.handin import admit_measurement
from grader.course.load import Course, Student, build_course, parse_spec
from grader.course.ondemand import Measured, on_demand_view, used
from grader.course.shown import AssignmentView, StudentView
from grader.course.studentview import Submitted
from grader.formats.load import load_problem

from ..support import EXAMPLES

DUE = datetime(2026, 12, 1, 23, 59, tzinfo=UTC)
BEFORE = DUE - timedelta(hours=1)


def course(tmp_path: Path, tokens: int | None = 1) -> Course:
    perf = {} if tokens is None else {"performance": {"on_demand": tokens}}
    spec = parse_spec({"course": "c", "timezone": "UTC",
                       "assignments": [{"name": "hw", "package": "hw",
                                        "deadline": DUE.isoformat(), **perf}]}, "c.yaml")
    c = build_course(spec, tmp_path, "c.yaml")
    return Course(c.name, c.zone, c.assignments, {"ann": Student("ann")})


def result(verdict: Verdict) -> SubmissionResult:
    return SubmissionResult("hw", "v/groups-1", "s", "h", "c", verdict, 0.0, 10.0, None, (),
                            ())


def sub(spool_id: str, hours: int, verdict: Verdict | None = Verdict.AC, *,
        state: str = "graded", deferred: bool = False) -> Submitted:
    return Submitted(spool_id, "hw", BEFORE - timedelta(hours=hours), state,
                     visible=None if verdict is None else result(verdict), deferred=deferred)


def asked(token: int, state: str = "measured") -> Measured:
    return Measured(token, "hw", "ann", token, "s1", BEFORE - timedelta(minutes=10 - token),
                    state)  # type: ignore[arg-type]


ACCEPTED = [sub("s1", 3)]
CASES = [
    # (who, assignment, at, submissions, earlier requests, tokens, timed, refusal)
    ("ann", "hw", BEFORE, ACCEPTED, [], 1, True, None),
    ("ann", "hw", BEFORE, ACCEPTED, [asked(1, "refunded")], 1, True, None),
    ("ann", "hwx", BEFORE, ACCEPTED, [], 1, True, "course c has no assignment 'hwx'"),
    ("../x", "hw", BEFORE, ACCEPTED, [], 1, True, "student id '../x'"),
    ("ben", "hw", BEFORE, ACCEPTED, [], 1, True, "ben is not on the roster of course c"),
    ("ann", "hw", BEFORE, ACCEPTED, [], 1, False, "hw has no performance tests to measure"),
    ("ann", "hw", BEFORE, ACCEPTED, [], None, True,
     "course c offers no performance measurements on demand for hw"),
    ("ann", "hw", BEFORE, ACCEPTED, [asked(1)], 1, True,
     "hw: you have used 1 of the 1 performance measurements on demand"),
    ("ann", "hw", DUE + timedelta(minutes=1), ACCEPTED, [], 1, True,
     "hw: measurements on demand closed at your deadline 2026-12-01T23:59:00+00:00; after "
     "it the performance of the submission that counts is measured for everyone"),
    ("ann", "hw", BEFORE, ACCEPTED, [asked(1, "waiting")], 3, True,
     "hw: your measurement of s1 is still waiting; its curve appears on your page"),
    ("ann", "hw", BEFORE, [], [], 1, True, "hw: you have handed in nothing to measure yet"),
    ("ann", "hw", BEFORE, [sub("s1", 3), sub("s2", 1, Verdict.WA)], [], 1, True,
     "hw: your latest submission s2 is not accepted on the visible tests (WA): "
     "performance is measured for correct programs only"),
    ("ann", "hw", BEFORE, [sub("s1", 3), sub("s2", 1, None, state="waiting")], [], 1, True,
     "hw: your latest submission s2 is not graded yet"),
    ("ann", "hw", BEFORE, [sub("s1", 3), sub("s2", 1, deferred=True)], [], 1, True,
     "hw: your latest submission s2 was taken past the hand-in limit"),
]


@pytest.mark.parametrize(("who", "what", "at", "subs", "requests", "tokens", "timed",
                          "refusal"), CASES)
def test_a_request_is_taken_or_refused_with_its_reason(
        tmp_path: Path, who: str, what: str, at: datetime, subs: list[Submitted],
        requests: list[Measured], tokens: int | None, timed: bool, refusal: str | None
) -> None:
    c = course(tmp_path, tokens)
    if refusal is None:
        adm = admit_measurement(c, who, what, at, subs, requests, timed=timed)
        assert (adm.submission, adm.used, adm.tokens) == ("s1", used(requests) + 1, tokens)
        return
    with pytest.raises(RefusedError) as e:
        admit_measurement(c, who, what, at, subs, requests, timed=timed)
    assert refusal in str(e.value)


def test_every_reason_that_refuses_a_request_is_said_at_once(tmp_path: Path) -> None:
    with pytest.raises(RefusedError) as e:
        admit_measurement(course(tmp_path), "ann", "hw", DUE + timedelta(days=1),
                          [sub("s2", 1, Verdict.TLE)], [asked(1)], timed=True)
    said = str(e.value).split("; ")
    assert [s.split(" ")[1] for s in said if s.startswith("hw: ")] == [
        "measurements", "you", "your"]  # closed, no token left, not accepted
    # a quarantined latest is no submission: the one before it is measured
    adm = admit_measurement(course(tmp_path), "ann", "hw", BEFORE,
                            [sub("s1", 3), sub("s9", 1, None, state="quarantined")], [],
                            timed=True)
    assert adm.submission == "s1"


def test_the_page_counts_used_tokens_newest_first_with_each_curve() -> None:
    perf = Performance((), (), 40.0, 100.0)
    requests = [asked(1, "refunded"), asked(2),
                Measured(3, "hw", "ann", 3, "s2", BEFORE, "measured", performance=perf)]
    view = on_demand_view(3, requests)
    assert (view.used, view.tokens) == (2, 3)
    assert [m.token for m in view.measurements] == [3, 2, 1]
    newest = view.measurements[0]
    assert newest.performance is not None and newest.performance.points == 40.0
    assert view.measurements[1].performance is None
    assert type(view).from_json(view.to_json()) == view
    said = render(StudentView("ann", "c", "now", (AssignmentView("hw", "d", None, (),
                                                                 on_demand=view),)))
    assert "  performance measurements on demand: 2 of 3 used" in said
    assert "    #3 of s2 at " in said and "      performance 40/100: " in said
    assert "    #1 of s1 at " in said and "not measured, and the token is yours again" in said


def test_a_measurement_grades_the_performance_tests_only(tmp_path: Path) -> None:
    p = load_problem(EXAMPLES / "primecount")
    only = p.performance_only()
    assert only.phase == "performance" and only.groups == () and only.cases == []
    assert only.version == f"{p.version}/performance" and only.performance == p.performance
    assert p.phase == "full" and p.restricted(["sample"]).phase == "part"
    job = GradingJob(p.path, tmp_path / "s.c", performance_only=True)
    assert GradingJob.from_json(job.to_json()) == job
    assert "performance_only" not in GradingJob(p.path, tmp_path).to_json()
    with pytest.raises(ProblemFormatError, match="no performance tests to measure"):
        load_problem(EXAMPLES / "bigsum").performance_only()
