"""Which grades go to the LMS (``course.lms_grades``: for whom, how much, whether now)
and what its member list changes in the roster (``course.lms_roster``): the course's
rules, pure, apart from the LTI adapter that asks the LMS and posts."""

from __future__ import annotations

from pathlib import Path

from grader.course.lms_grades import BACKOFF_S, Posting, due, lms_postings, retry_at
from grader.course.lms_roster import Member, reconcile, roster_csv
from grader.course.load import Student, load_course, read_roster
from grader.course.policy import Attempt

from ..support import course_at, course_yaml


def _postings(tmp_path: Path, grades: str, released: bool) -> list[Posting]:
    course = load_course(course_yaml(tmp_path, lms={"grades": grades}, late_days=0, late={},
                                     assignments=[{"name": "hw1", "package": "pk/hw1",
                                                   "deadline": "2026-12-01 23:59",
                                                   "points": 20}]))
    tries = [Attempt("a1", "alice", "hw1", course_at(1, 10), 0.5, 1.0 if released else None),
             Attempt("b1", "bob", "hw1", course_at(1, 11), 0.25, 0.75 if released else None)]
    return lms_postings(course, "lms-course", tries,
                        {"hw1": course_at(2, 9) if released else None}, {"hw1": 100.0},
                        {"alice": "u-alice"})


def test_only_students_the_lms_knows_get_a_grade_and_only_once_released(tmp_path) -> None:
    assert _postings(tmp_path, "released", released=False) == []
    [p] = _postings(tmp_path, "released", released=True)  # bob: no lms_id, no launch
    assert (p.lms_user, p.given, p.maximum, p.grading, p.activity) == \
        ("u-alice", 20.0, 20.0, "FullyGraded", "Completed")
    assert p.key == "lms-course|hw1|u-alice" and p.submitted_at == course_at(1, 10)


def test_a_course_that_shows_visible_scores_posts_them_as_pending(tmp_path) -> None:
    [p] = _postings(tmp_path, "visible", released=False)
    assert (p.given, p.grading, p.activity) == (10.0, "Pending", "Submitted")


def test_a_grade_goes_when_it_changed_and_a_failed_post_waits_longer_each_time() -> None:
    p = Posting("c", "hw1", "u", 10.0, 20.0, "FullyGraded", "Completed", None)
    assert due(p, {}, 100.0) == "post"
    assert due(p, {"posted": p.value}, 100.0) == "unchanged"
    assert due(p, {"posted": {**p.value, "given": 9.0}}, 100.0) == "post"
    assert due(p, {"retry_at": retry_at(1, 100.0)}, 110.0) == "waiting"
    assert due(p, {"retry_at": retry_at(1, 100.0)}, 100.0 + BACKOFF_S[0]) == "post"
    waits = [retry_at(n, 0.0) for n in range(1, 8)]
    assert waits == sorted(waits) and waits[-1] == BACKOFF_S[-1]


def test_the_member_list_links_adds_and_names_what_it_cannot() -> None:
    roster = {"alice": Student("alice", "Alice", "alice@x.org"),
              "bob": Student("bob", "Bob", "bob@x.org", lms_id="u-bob"),
              "carol": Student("carol", "Carol", "c@x.org")}
    members = [Member("u-alice", "Alice", "ALICE@x.org"), Member("u-bob", "Bob"),
               Member("u-new", "Neo", "neo@x.org"), Member("u-t", "Tina", "t@x.org",
                                                          roles=("Instructor",)),
               Member("u-gone", "Gone", "gone@x.org", active=False)]
    changes, rows = reconcile(roster, members, lambda roles: "Instructor" in roles)
    assert changes == ["linked alice to LMS id u-alice", "added neo: Neo <neo@x.org> (LMS id "
                       "u-new)", "staff in the LMS: Tina <t@x.org>", "not in the LMS: carol"]
    assert rows["alice"].lms_id == "u-alice" and rows["neo"].lms_id == "u-new"
    assert "gone" not in rows and "t" not in rows and roster["alice"].lms_id == ""
    assert read_roster(roster_csv(rows.values()), "r.csv") == rows  # it reads back whole
