"""Which LTI roles make a launch staff: only this course's (context) roles."""
from __future__ import annotations

import pytest

from grader.adapters.web.lti.services import is_staff_role

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
