"""The hand-in rule every door follows (``course.handin.admit``), as a table: who is
refused and why, what a deferring limit and the late cutoff do, and what staff's
override may take (and keeps) and may not."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from grader.core.errors import RefusedError
from grader.course.handin import admit
from grader.course.load import Course, Student, build_course, parse_spec

DUE = datetime(2026, 12, 1, 23, 59, tzinfo=UTC)


def course(tmp_path: Path, roster: bool = True, **extra: object) -> Course:
    spec = parse_spec({"course": "c", "timezone": "UTC",
                       "assignments": [{"name": "hw", "package": "hw",
                                        "deadline": DUE.isoformat(), **extra}]}, "c.yaml")
    c = build_course(spec, tmp_path, "c.yaml")
    if roster:
        c = Course(c.name, c.zone, c.assignments, {"ann": Student("ann")})
    return c


CASES = [
    # (who, assignment, hours after the deadline, earlier hand-ins, extra, refusal)
    ("ann", "hw", -1, 0, {}, None),
    ("ann", "hwx", -1, 0, {}, "course c has no assignment 'hwx' (it has: hw)"),
    ("ben", "hw", -1, 0, {}, "ben is not on the roster of course c"),
    ("../x", "hw", -1, 0, {}, "student id '../x'"),
    (".ann", "hw", -1, 0, {}, "student id '.ann'"),
    ("a b", "hw", -1, 0, {}, "student id 'a b'"),
    ("ann", "hw", 5, 0, {"late": {"max_late": "2h"}},
     "hw: hand-ins closed at 2026-12-02T01:59:00+00:00 (your deadline "
     "2026-12-01T23:59:00+00:00 and 2 h late)"),
    ("ann", "hw", 1, 0, {"late": {"max_late": "2h"}}, None),
    ("ann", "hw", -1, 2, {"limits": {"max_submissions": 2}},
     "hw: you have handed in 2 of the 2 submissions allowed; no more hand-ins of it "
     "are taken"),
]


@pytest.mark.parametrize(("who", "what", "hours", "n", "extra", "refusal"), CASES)
def test_the_rule_takes_or_refuses_with_its_reason(tmp_path: Path, who: str, what: str,
                                                   hours: int, n: int,
                                                   extra: dict[str, object],
                                                   refusal: str | None) -> None:
    c = course(tmp_path, **extra)
    at = DUE + timedelta(hours=hours)
    earlier = [DUE - timedelta(days=2, minutes=i) for i in range(n)]
    if refusal is None:
        adm = admit(c, who, what, at, earlier)
        assert (adm.student, adm.late, adm.override) == (who, hours > 0, "")
        return
    with pytest.raises(RefusedError) as e:
        admit(c, who, what, at, earlier)
    assert str(e.value).startswith(refusal)


def test_every_reason_is_given_at_once(tmp_path: Path) -> None:
    c = course(tmp_path, late={"max_late": "1h"}, limits={"max_submissions": 1})
    with pytest.raises(RefusedError) as e:
        admit(c, "ben", "hw", DUE + timedelta(hours=3), [DUE])
    assert str(e.value).count("; ") >= 2 and "roster" in str(e.value) \
        and "closed" in str(e.value) and "1 of the 1" in str(e.value)


def test_without_a_roster_anyone_with_a_safe_id_hands_in(tmp_path: Path) -> None:
    c = course(tmp_path, roster=False)
    assert admit(c, "anyone", "hw", DUE, []).student == "anyone"


def test_a_deferring_limit_takes_it_and_says_which_limit(tmp_path: Path) -> None:
    c = course(tmp_path, limits={"max_submissions": 1, "past_limit": "defer"})
    adm = admit(c, "ann", "hw", DUE, [DUE - timedelta(hours=1)])
    assert adm.deferred and "1 of the 1" in adm.limit and adm.left == 0


def test_an_override_takes_a_refusal_and_keeps_both(tmp_path: Path) -> None:
    c = course(tmp_path)
    adm = admit(c, "ben", "hw", DUE, [], override="added to the course today")
    assert adm.override == "added to the course today" and "roster" in adm.refused
    # an override where nothing was refused records nothing
    assert admit(c, "ann", "hw", DUE, [], override="why not").override == ""


@pytest.mark.parametrize(("who", "what"), [("../etc", "hw"), ("ann", "nope")])
def test_no_override_takes_an_unsafe_id_or_an_unknown_assignment(tmp_path: Path, who: str,
                                                                 what: str) -> None:
    with pytest.raises(RefusedError):
        admit(course(tmp_path), who, what, DUE, [], override="staff said so")
