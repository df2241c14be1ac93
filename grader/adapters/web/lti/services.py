"""LTI Advantage services, called by the tool on its own (no browser): grades to the
LMS's gradebook (Assignment and Grade Services) and the course's members from it
(Names and Role Provisioning Services), with the endpoints and line items the launches
left in ``state``. The LMS never has to reach the cluster: the tool calls out.

A grade is posted when it differs from what the journal says the LMS took, with the
time stamp AGS asks for and, for Canvas, its submission extension carrying the hand-in
time (Canvas marks late what it receives after the due date unless told when the work
was submitted); a post that fails is retried later, with backoff, and never twice once
it went through.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
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

AGS_SCOPES = ("https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
              "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
              "https://purl.imsglobal.org/spec/lti-ags/scope/score")
CANVAS_SUBMISSION = "https://canvas.instructure.com/lti/submission"
MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"
STAFF = frozenset({"Instructor", "Administrator", "ContentDeveloper", "TeachingAssistant"})


@dataclass(frozen=True, slots=True)
class Posting:
    """One gradebook entry to post: whose (the LMS's user id), what, and when handed in."""

    context: str  # the state's context key
    assignment: str
    lms_user: str
    given: float
    maximum: float
    grading: str
    activity: str
    submitted_at: datetime | None


@dataclass
class SyncReport:
    posted: list[str] = field(default_factory=list)
    unchanged: int = 0
    waiting: list[str] = field(default_factory=list)  # failed earlier, not due again yet
    failed: list[tuple[str, str]] = field(default_factory=list)
    no_lineitem: list[str] = field(default_factory=list)


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
    if p.submitted_at is not None:
        g.set_submitted_at(p.submitted_at.isoformat())
        g.set_extra_claims({CANVAS_SUBMISSION: {"submitted_at": p.submitted_at.isoformat(),
                                                "new_submission": False}})
    return g


def post_grades(regs: Registrations, state: LtiState, postings: Iterable[Posting],
                now: float | None = None) -> SyncReport:
    """Post what changed since the journal's last post, each at most once per change."""
    t = time.time() if now is None else now
    contexts, journal, report = state.contexts(), state.journal(), SyncReport()
    for p in postings:
        key = f"{p.context}|{p.assignment}|{p.lms_user}"
        value = {"given": p.given, "maximum": p.maximum, "grading": p.grading}
        entry = journal.get(key, {})
        if entry.get("posted") == value:
            report.unchanged += 1
            continue
        if float(entry.get("retry_at", 0.0)) > t:
            report.waiting.append(key)
            continue
        ctx = contexts.get(p.context, {})
        lineitem = (ctx.get("lineitems") or {}).get(p.assignment)
        if not lineitem or not ctx.get("ags"):
            report.no_lineitem.append(key)
            continue
        try:
            claim: Any = {**ctx["ags"], "scope": list(AGS_SCOPES)}  # the launch's AGS claim
            ags = AssignmentsGradesService(_connector(regs, ctx), claim)
            ags.put_grade(_grade(p, datetime.fromtimestamp(t, UTC)),
                          LineItem({"id": lineitem}))
        except (LtiException, LtiServiceException, GradelineError, OSError) as e:
            state.failed(key, str(e), t)
            report.failed.append((key, str(e)))
            continue
        state.posted(key, value, t)
        report.posted.append(key)
    return report


def members(regs: Registrations, ctx: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The LMS course's members (NRPS): user id, name, email, roles, SIS id."""
    if not ctx.get("nrps"):
        raise GradelineError("no launch from this LMS course has offered its roster yet "
                             "(Names and Role Provisioning Services): launch once")
    svc = NamesRolesProvisioningService(_connector(regs, ctx), ctx["nrps"])
    try:
        return [dict(m) for m in svc.get_members()]
    except (LtiException, LtiServiceException, OSError) as e:
        raise GradelineError(f"the LMS's roster: {e}") from e


def is_staff_role(roles: Sequence[str]) -> bool:
    """Whether LTI roles make someone this course's staff (instructor, TA, designer).

    Only context (membership) roles count: Canvas sends institution roles such as
    ``institution/person#Instructor`` for anyone who teaches somewhere, and such a
    person enrolled here as a learner is a student of this course. A sub-role
    (``membership/Instructor#TeachingAssistant``) counts by its principal role; the
    deprecated short names (``Instructor``) are context roles too.
    """
    for r in roles:
        if r in STAFF:
            return True
        if r.startswith(MEMBERSHIP + "#"):
            if r.partition("#")[2] in STAFF:
                return True
        elif r.startswith(MEMBERSHIP + "/") and r[len(MEMBERSHIP) + 1:].partition("#")[0] in STAFF:
            return True
    return False
