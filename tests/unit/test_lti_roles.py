"""Who a launch is: staff only by this course's (context) roles; a student by the
roster's LMS id, email or SIS id, never by a guess between two rows."""
from __future__ import annotations

import pytest

from grader.adapters.web.lti.services import is_staff_role
from grader.course.lms_mapping import NOBODY, Roster
from grader.course.load import Student

LIS = "http://purl.imsglobal.org/vocab/lis/v2/"


@pytest.mark.parametrize("roles", [
    [LIS + "membership#Instructor"],
    [LIS + "membership#ContentDeveloper"],
    [LIS + "membership#Administrator"],
    [LIS + "membership/Instructor#TeachingAssistant"],
    [LIS + "institution/person#Student", LIS + "membership#Instructor"],
    ["Instructor"],
])
def test_a_course_role_of_staff_is_staff(roles: list[str]) -> None:
    assert is_staff_role(roles)


@pytest.mark.parametrize("roles", [
    # Canvas: teaches elsewhere at the institution, a learner in this course
    [LIS + "institution/person#Instructor", LIS + "membership#Learner"],
    [LIS + "institution/person#Administrator", LIS + "membership#Learner"],
    [LIS + "system/person#Administrator"],
    [LIS + "membership#Learner"],
    [LIS + "membership/Learner#Learner"],
    [LIS + "membership#Mentor"],
    ["http://example.edu/roles#Instructor"],
    [],
])
def test_an_institution_or_learner_role_is_not(roles: list[str]) -> None:
    assert not is_staff_role(roles)


def _roster() -> Roster:
    rows = [Student("ann", "Ann", "ann@x.edu", sis_id="S1"),
            Student("bea", "Bea", "bea@x.edu", lms_id="u-bea"),
            Student("cy", "Cy", "twin@x.edu"), Student("cy2", "Cy Two", "TWIN@x.edu"),
            Student("dee", "Dee", "dee@x.edu", sis_id="S4", lms_id="u-dee")]
    return Roster({s.id: s for s in rows})


@pytest.mark.parametrize(("who", "want"), [
    (("u-bea", "", ""), ("bea", "")),
    (("u-new", "Ann@X.edu", ""), ("ann", "")),             # email, any case
    (("u-new", "", "S1"), ("ann", "")),                    # SIS id
    (("u-new", "twin@x.edu", ""), (None, "more than one")),  # two rows: nobody
    (("u-other", "dee@x.edu", ""), (None, "another LMS id")),  # another LMS user
    (("u-other", "", "S4"), (None, "another LMS id")),
    (("u-new", "who@x.edu", "S9"), (None, NOBODY)),
])
def test_an_lms_user_is_one_roster_student_or_nobody_with_the_reason(
        who: tuple[str, str, str], want: tuple[str | None, str]) -> None:
    sid, why = _roster().member(*who)
    assert sid == want[0] and want[1] in why and (why == "") == (sid is not None)
