"""Who a launch is: staff only by the course's own staff roles among its context
(membership) roles, a sub-role speaking for its principal; a student by the roster's LMS
id, email or SIS id, never by a guess between two rows."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from grader.adapters.web.lti.services import context_roles, is_staff_role
from grader.course.lms_mapping import NOBODY, Roster
from grader.course.load import Student
from grader.course.spec import STAFF_ROLES, LmsSpec

LIS = "http://purl.imsglobal.org/vocab/lis/v2/"
TA = LIS + "membership/Instructor#TeachingAssistant"
ONLY_TEACHERS = ("Instructor", "Administrator")


@pytest.mark.parametrize("roles", [
    [LIS + "membership#Instructor"],
    [LIS + "membership#ContentDeveloper"],
    [LIS + "membership#Administrator"],
    [LIS + "membership/Administrator#Administrator"],
    [TA],
    [LIS + "membership#Instructor", TA],  # Canvas's TA
    [LIS + "membership#Learner", TA],  # Open edX's Community TA, Group Moderator
    [LIS + "institution/person#Student", LIS + "membership#Instructor"],
    ["Instructor"],
])
def test_a_course_role_of_staff_is_staff(roles: list[str]) -> None:
    assert is_staff_role(roles, STAFF_ROLES)


@pytest.mark.parametrize("roles", [
    # Canvas: teaches elsewhere at the institution, a learner in this course
    [LIS + "institution/person#Instructor", LIS + "membership#Learner"],
    [LIS + "institution/person#Administrator", LIS + "membership#Learner"],
    [LIS + "system/person#Administrator"],
    [LIS + "membership#Learner"],
    [LIS + "membership/Learner#Learner"],
    [LIS + "membership/Learner#Instructor"],  # a learner's sub-role, no instructor
    [LIS + "membership/Instructor#Grader"],  # a sub-role the course does not name
    [LIS + "membership#Mentor"],
    ["http://example.edu/roles#Instructor"],
    [],
])
def test_an_institution_or_learner_role_is_not(roles: list[str]) -> None:
    assert not is_staff_role(roles, STAFF_ROLES)


@pytest.mark.parametrize(("roles", "staff"), [
    ([LIS + "membership#Instructor"], True),
    ([LIS + "membership#Administrator", LIS + "membership#Instructor"], True),  # Open edX
    ([LIS + "membership#Instructor", TA], False),  # Canvas's TA: judged as TA
    ([LIS + "membership#Learner", TA], False),  # Open edX's forum moderator
    ([TA], False),
])
def test_a_course_that_names_no_teaching_assistant_makes_tas_students(
        roles: list[str], staff: bool) -> None:
    assert is_staff_role(roles, ONLY_TEACHERS) is staff


def test_a_sub_role_answers_to_its_own_names() -> None:
    assert context_roles([LIS + "membership#Instructor", TA]) == {
        "TeachingAssistant", "Instructor#TeachingAssistant"}
    assert is_staff_role([LIS + "membership#Learner", TA], ["Instructor#TeachingAssistant"])


def test_the_course_file_names_roles_short_or_in_full() -> None:
    spec = LmsSpec(staff_roles=["Instructor", LIS + "membership/Instructor#TeachingAssistant",
                                LIS + "membership#Administrator"])
    assert spec.staff_roles == ("Instructor", "Instructor#TeachingAssistant", "Administrator")
    assert LmsSpec().staff_roles == STAFF_ROLES
    with pytest.raises(ValidationError, match="written Instructor, TeachingAssistant"):
        LmsSpec(staff_roles=[LIS + "institution/person#Instructor"])


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


def test_a_staff_launch_is_the_account_staff_lms_names_by_id_email_or_sis_id() -> None:
    from grader.course.lms_mapping import staff_account
    from grader.course.spec import StaffSpec

    lms = StaffSpec(lms={"tom": "Tom@Example.edu", "tina": "u-tina", "ta3": "S-3"}).lms
    assert staff_account(lms, "u-9", "tom@example.EDU") == "tom"  # email, any case
    assert staff_account(lms, "u-tina", "other@example.edu") == "tina"  # LMS user id
    assert staff_account(lms, "u-7", "", "S-3") == "ta3"  # SIS id
    assert staff_account(lms, "u-7", "tina@example.edu", "") is None  # nobody named
    with pytest.raises(ValidationError, match=r"its own and not empty: 'tom@example\.edu'"):
        StaffSpec(lms={"tom": "tom@example.edu", "ta2": "TOM@example.edu "})
