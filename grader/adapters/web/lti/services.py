"""LTI Advantage services, called by the tool on its own (no browser): grades to the
LMS's gradebook (Assignment and Grade Services) and the course's members from it
(Names and Role Provisioning Services), with the endpoints and line items the launches
left in ``state``. The LMS never has to reach the cluster: the tool calls out.

A grade is posted when ``course.lms_grades`` says it is due (it differs from what the
journal says the LMS took; a failed one after its wait), with the time stamp AGS asks
for and, for Canvas, its submission extension carrying the hand-in time (Canvas marks
late what it receives after the due date unless told when the work was submitted); a
post that fails is retried later, with backoff, and never twice once it went through.
Where a launch named no line item (a link added by hand, Open edX's programmatic
grading), the tool's own is found among the LMS course's line items by resource id and
tag, or made. The tool asks only for the scopes the launch offered.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.grade import Grade
from pylti1p3.lineitem import LineItem
from pylti1p3.names_roles import NamesRolesProvisioningService

from grader.adapters.web.lti.launch import CachingConnector
from grader.adapters.web.lti.registrations import Registrations
from grader.adapters.web.lti.state import LtiState
from grader.core.errors import GradelineError
from grader.course.lms_grades import Posting, due
from grader.course.lms_roster import Member

AGS = "https://purl.imsglobal.org/spec/lti-ags/scope/"
#: what posting grades needs (of what the launch offered): no results read
AGS_SCOPES = (AGS + "lineitem", AGS + "lineitem.readonly", AGS + "score")
TAG = "gradeline"  # the tag of the tool's line items (deep linking sets it too)
CANVAS_SUBMISSION = "https://canvas.instructure.com/lti/submission"
MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"
#: LIS's principal context roles (its sub-roles are ``membership/PRINCIPAL#SUB``)
PRINCIPAL_ROLES = frozenset({"Administrator", "ContentDeveloper", "Instructor", "Learner",
                             "Manager", "Member", "Mentor", "Officer"})


@dataclass
class SyncReport:
    posted: list[str] = field(default_factory=list)
    unchanged: int = 0
    waiting: list[str] = field(default_factory=list)  # failed earlier, not due again yet
    failed: list[tuple[str, str]] = field(default_factory=list)
    no_lineitem: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)  # line items the tool made


def _connector(regs: Registrations, ctx: Mapping[str, Any]) -> CachingConnector:
    reg = regs.conf.find_registration_by_params(ctx["issuer"], ctx["client_id"])
    if reg is None:
        raise GradelineError(f"no registration for {ctx['issuer']} {ctx['client_id']}")
    return CachingConnector(reg)


def _grade(p: Posting, now: datetime) -> Grade:
    g = (Grade().set_score_given(p.given).set_score_maximum(p.maximum)
         .set_timestamp(now.isoformat(timespec="milliseconds"))
         .set_activity_progress(p.activity).set_grading_progress(p.grading)
         .set_user_id(p.lms_user))
    if p.comment:  # the hand-grade's summary, plain text
        g.set_comment(p.comment)
    if p.submitted_at is not None:
        g.set_submitted_at(p.submitted_at.isoformat())
        g.set_extra_claims({CANVAS_SUBMISSION: {"submitted_at": p.submitted_at.isoformat(),
                                                "new_submission": False}})
    return g


def _lineitem(ags: AssignmentsGradesService, claim: Mapping[str, Any], p: Posting,
              link: str) -> tuple[str, bool]:
    """(the tool's line item of ``p``'s assignment in the LMS course, whether it was
    made now): one tagged ``gradeline`` with the assignment as its resource id, as deep
    linking makes them, found among the course's line items or made (AGS allows a tool
    both where the launch offered the ``lineitem`` scope).

    :raises GradelineError: the LMS offers neither, saying what staff can do.
    """
    a = p.assignment
    if not claim.get("lineitems") or not ags.can_read_lineitem():
        raise GradelineError(f"the LMS named no gradebook column for {a} and lets the tool "
                             "see none of its columns: add the assignment by deep linking")
    found = ags.find_lineitem_satisfying(
        lambda li: li.get("resourceId") == a and li.get("tag") == TAG)
    if found is not None and found.get_id():
        return str(found.get_id()), False
    if not ags.can_create_lineitem():
        raise GradelineError(
            f"the LMS course has no gradebook column for {a} and lets the tool only read "
            f"its columns (scope lineitem.readonly): add the assignment by deep linking, or "
            f"a column with resource id {a} and tag {TAG}")
    item = LineItem().set_score_maximum(p.maximum).set_label(a).set_resource_id(a).set_tag(TAG)
    if link:
        item.set_resource_link_id(link)
    made = ags.create_lineitem(item).get_id()
    if not made:
        raise GradelineError(f"the LMS made a gradebook column for {a} but gave no id of it")
    return str(made), True


def post_grades(regs: Registrations, state: LtiState, postings: Iterable[Posting],
                now: float | None = None) -> SyncReport:
    """Post what is due (``course.lms_grades.due``: changed since the journal's last
    post, a failed one after its wait), each at most once per change."""
    t = time.time() if now is None else now
    contexts, journal, report = state.contexts(), state.journal(), SyncReport()
    for p in postings:
        key = p.key
        when = due(p, journal.get(key, {}), t)
        if when == "unchanged":
            report.unchanged += 1
            continue
        if when == "waiting":
            report.waiting.append(key)
            continue
        ctx = contexts.get(p.context, {})
        lineitems, links = ctx.setdefault("lineitems", {}), ctx.get("links") or {}
        if not ctx.get("ags") or not (p.assignment in lineitems or p.assignment in links):
            report.no_lineitem.append(key)
            continue
        try:  # the scopes the launch offered, of those posting needs
            claim: Any = {**ctx["ags"], "scope": [s for s in ctx["ags"].get("scope") or []
                                                  if s in AGS_SCOPES]}
            ags = AssignmentsGradesService(_connector(regs, ctx), claim)
            if p.assignment not in lineitems:
                lineitems[p.assignment], made = _lineitem(ags, claim, p, links[p.assignment])
                state.remember_lineitem(p.context, p.assignment, lineitems[p.assignment])
                if made:
                    report.columns.append(f"{p.context}|{p.assignment}")
            ags.put_grade(_grade(p, datetime.fromtimestamp(t, UTC)),
                          LineItem({"id": lineitems[p.assignment]}))
        except (LtiException, LtiServiceException, GradelineError, OSError) as e:
            state.failed(key, str(e), t)
            report.failed.append((key, str(e)))
            continue
        state.posted(key, p.value, t)
        report.posted.append(key)
    return report


def members(regs: Registrations, ctx: Mapping[str, Any]) -> list[Member]:
    """The LMS course's members (NRPS): user id, name, email, roles, SIS id."""
    if not ctx.get("nrps"):
        raise GradelineError("no launch from this LMS course has offered its roster yet "
                             "(Names and Role Provisioning Services): launch once")
    svc = NamesRolesProvisioningService(_connector(regs, ctx), ctx["nrps"])
    try:
        return [Member(str(m["user_id"]), str(m.get("name", "")), str(m.get("email") or ""),
                       str(m.get("lis_person_sourcedid") or ""),
                       tuple(str(r) for r in m.get("roles") or ()),
                       m.get("status", "Active") == "Active") for m in svc.get_members()]
    except (LtiException, LtiServiceException, OSError) as e:
        raise GradelineError(f"the LMS's roster: {e}") from e


def context_roles(roles: Sequence[str]) -> set[str]:
    """The names a launch's context (membership) roles answer to, as a course's
    ``lms: staff_roles`` lists them: ``Instructor`` for ``membership#Instructor`` (and the
    deprecated short name), ``TeachingAssistant`` and ``Instructor#TeachingAssistant`` for
    the sub-role ``membership/Instructor#TeachingAssistant``.

    A sub-role speaks for its principal role: Canvas sends a TA ``membership#Instructor``
    beside ``membership/Instructor#TeachingAssistant``, Open edX its forum roles
    ("Community TA", "Group Moderator") ``membership#Learner`` beside it; either is
    named by the sub-role alone, so a course can leave TAs out of its staff. A sub-role
    named like a principal role answers to its full name only (``Learner#Instructor``
    is no instructor). Institution and system roles (``institution/person#Instructor``:
    Canvas sends it for anyone who teaches anywhere) are never context roles.
    """
    principal, sub = set(), set()
    for r in roles:
        if r.startswith(MEMBERSHIP + "#"):
            principal.add(r.partition("#")[2])
        elif r.startswith(MEMBERSHIP + "/") and "#" in r:
            p, _, s = r[len(MEMBERSHIP) + 1:].partition("#")
            sub.add((p, s))
        elif r.isalpha():  # a deprecated short name: a context role
            principal.add(r)
    names = {f"{p}#{s}" for p, s in sub} | {s for p, s in sub if s not in PRINCIPAL_ROLES}
    names |= {p for p, s in sub if s == p}  # Administrator#Administrator: the principal
    narrowed = {p for p, s in sub if s != p}
    return names | {p for p in principal if p not in narrowed}


def is_staff_role(roles: Sequence[str], staff: Collection[str]) -> bool:
    """Whether a launch's roles make someone this course's staff: one of its context
    roles (``context_roles``) is among the course's ``staff`` roles."""
    return not context_roles(roles).isdisjoint(staff)
