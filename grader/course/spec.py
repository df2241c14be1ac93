"""The course file (``course.yaml``) as a schema: what staff write, checked field by field.

pydantic validates it (and gives the JSON schema the docs print), so a wrong key, a
deadline without a date or a penalty over 100 % is an error naming its place in the
file, never a course graded under a policy nobody wrote. Times without an offset are
in the course's time zone; durations are written ``3d``, ``36h``, ``90m`` or seconds.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

Counts = Literal["last", "best", "chosen"]
Visibility = Literal["visible", "after_deadline", "after_release", "hidden"]
#: which groups a phase grades: at hand-in only the visible ones, after the deadline all
VISIBILITIES: tuple[Visibility, ...] = ("visible", "after_deadline", "after_release",
                                        "hidden")

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([dhms]?)\s*$")
_UNIT_S = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0, "": 1.0}
_CLOCK = re.compile(r"^\s*\d{1,2}:\d{2}(?::\d{2})?\s*$")  # 1:30, 23:59
_DATE = re.compile(r"^\s*\d{4}-\d{1,2}-\d{1,2}\s*$")
_TIME = re.compile(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[Tt]|[ \t]+)(\d{1,2}):(\d{2})"
                   r"(?::(\d{2})(?:\.(\d{1,6}))?)?[ \t]*"
                   r"(?:(?P<z>[Zz])|(?P<sign>[+-])(?P<oh>\d{1,2})(?::?(?P<om>\d{2}))?)?\s*$")
#: the longest duration a course may name (a late window, an extension): a year
MAX_DURATION = timedelta(days=366)
#: deadlines before or after these years are typos (and past 9999 no date adds a day)
YEARS = (2000, 2999)
#: the offsets time zones have (UTC-12:00 to UTC+14:00)
_OFFSET_H = (-12, 14)
_EXAMPLE = "'2026-12-01 23:59'"


def parse_duration(value: object) -> timedelta:
    """``3d``, ``36h``, ``90m``, ``45s`` or a number of seconds, at most a year.

    ``1:30`` is refused: it could be hours and minutes or minutes and seconds."""
    if isinstance(value, timedelta):
        return _bounded(value, value)
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"a duration is written 3d, 36h, 90m or in seconds, not {value!r}")
    m = _DURATION.match(str(value))
    if m is None:
        why = (f"{value} could be hours:minutes or minutes:seconds: write 90m or 90s"
               if _CLOCK.match(str(value)) else
               f"a duration is written 3d, 36h, 90m or in seconds, not {value!r}")
        raise ValueError(why)
    try:
        span = timedelta(seconds=float(m.group(1)) * _UNIT_S[m.group(2)])
    except OverflowError:
        span = timedelta.max
    return _bounded(span, value)


def _bounded(span: timedelta, value: object) -> timedelta:
    if not timedelta(0) <= span <= MAX_DURATION:
        raise ValueError(f"{value!r} is longer than a year (366d): a typo?")
    return span


Duration = Annotated[timedelta, BeforeValidator(parse_duration)]


def _offset(m: re.Match[str], text: str) -> tzinfo | None:
    if m["z"]:
        return UTC
    if not m["sign"]:
        return None
    hours, minutes = int(m["oh"]), int(m["om"] or 0)
    sign = -1 if m["sign"] == "-" else 1
    if minutes > 59 or not _OFFSET_H[0] <= sign * hours <= _OFFSET_H[1]:
        raise ValueError(f"the offset {m['sign']}{m['oh']}:{m['om'] or '00'} of {text!r} is "
                         "no time zone's (they run from -12:00 to +14:00)")
    return timezone(sign * timedelta(hours=hours, minutes=minutes))


def parse_time(value: str, key: str = "deadline") -> datetime:
    """A time as the course file writes it: ``2026-12-01 23:59`` (in the course's zone),
    or with seconds and an offset, ``2026-12-01T23:59:00+01:00``. A time without a date
    or a date without a time is refused, not guessed at.

    :raises ValueError: saying what is wrong with it and how to write it.
    """
    text = value.strip()
    m = _TIME.match(text)
    if m is None:
        if _CLOCK.match(text):
            raise ValueError(f"{text!r} is a time without a date: write the date too, "
                             f"{key}: {_EXAMPLE}")
        if _DATE.match(text):
            raise ValueError(f"{text!r} has no time of day: write it, {key}: {_EXAMPLE} "
                             "(a date alone would be its first minute, 00:00)")
        raise ValueError(f"a time is written 2026-12-01 23:59 (or with an offset, "
                         f"2026-12-01T23:59+01:00), not {text!r}")
    year, month, day, hour, minute, second, frac = m.groups()[:7]
    if not YEARS[0] <= int(year) <= YEARS[1]:
        raise ValueError(f"{text!r}: the year {year} is out of range ({YEARS[0]} to "
                         f"{YEARS[1]})")
    zone = _offset(m, text)
    try:
        return datetime(int(year), int(month), int(day), int(hour), int(minute),
                        int(second or 0), int((frac or "0").ljust(6, "0")), tzinfo=zone)
    except ValueError as e:
        raise ValueError(f"{text!r} is not a time: {e}") from None


def _stamp(value: object, info: ValidationInfo) -> datetime:
    """What YAML gave for a time: text (``course.courseyaml`` keeps times as written),
    or a datetime from Python; a number (``23:59`` as YAML 1.1 reads it) is refused."""
    key = info.field_name or "deadline"
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        return parse_time(value, key)
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(f"{value!r} is a number, not a time: write {key}: {_EXAMPLE} "
                         "(in quotes, so that no YAML reader takes 23:59 for a number)")
    raise ValueError(f"a time is written {key}: {_EXAMPLE}, not {value!r}")


Stamp = Annotated[datetime, BeforeValidator(_stamp)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class LatePolicy(_Strict):
    """What lateness costs once the student's grace days are used up."""

    #: percent of the score deducted per late day begun (after grace days)
    penalty_per_day: float = Field(0.0, ge=0, le=100)
    #: percent deducted per late hour begun (after grace days); adds to the daily one
    penalty_per_hour: float = Field(0.0, ge=0, le=100)
    #: the most percent lateness may cost
    cap: float = Field(100.0, ge=0, le=100)
    #: nothing is accepted later than the student's deadline plus this (none: no limit)
    max_late: Duration | None = None


_ROLE = re.compile(r"^(?:https?://purl\.imsglobal\.org/vocab/lis/v2/membership[#/])?"
                   r"([A-Za-z]+(?:#[A-Za-z]+)?)$")


def _lti_role(value: object) -> str:
    """``Instructor``, ``TeachingAssistant``, ``Instructor#TeachingAssistant``, or the
    role's full LIS name (``http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor``)."""
    m = _ROLE.match(str(value).strip())
    if m is None:
        raise ValueError(f"an LTI context role is written Instructor, TeachingAssistant or "
                         f"Instructor#TeachingAssistant, not {value!r}")
    return m.group(1)


#: an LTI context role as a course names it: ``Instructor`` (``membership#Instructor``),
#: a sub-role ``TeachingAssistant`` or in full ``Instructor#TeachingAssistant``
LtiRole = Annotated[str, BeforeValidator(_lti_role)]


class LmsSpec(_Strict):
    """What goes back to the course's LMS (an LTI launch's gradebook), and whom its
    launches make staff.

    ``grades: released`` posts each student's final grade (late policy applied) once
    staff released the assignment; ``visible`` also posts the hand-in phase's score as
    it changes, marked pending, until then. ``staff_roles``: the LTI context roles that
    open the staff pages (every student's work); anyone else is a student, who sees only
    their own page. A sub-role speaks for its principal: a TA (Canvas sends
    ``Instructor`` beside ``Instructor#TeachingAssistant``; Open edX its "Community TA"
    and "Group Moderator", learners, ``Learner`` beside it) is staff only where
    ``TeachingAssistant`` is listed."""

    grades: Literal["released", "visible"] = "released"
    #: the context roles that make a launch staff, e.g. [Instructor, Administrator]
    staff_roles: tuple[LtiRole, ...] = ("Instructor", "Administrator", "ContentDeveloper",
                                        "TeachingAssistant")


#: who a launch from the LMS makes staff, unless the course says otherwise
STAFF_ROLES = LmsSpec().staff_roles


class StaffSpec(_Strict):
    """Who may see the course's staff pages (every student's work): accounts, and Unix
    groups whose members may. The account that runs gradeline always may."""

    accounts: list[str] = Field(default_factory=list)  # login names, e.g. [ta1, prof]
    groups: list[str] = Field(default_factory=list)  # e.g. [cs101-staff]
    #: staff who may also reveal names of an anonymously graded assignment (accounts;
    #: staff themselves): graders otherwise
    instructors: list[str] = Field(default_factory=list)
    #: account -> who it is in the LMS (email, LMS user id or SIS id): a staff launch
    #: from the LMS is that account (its grading queue, its name on the grades it
    #: saves); one not named is its LMS user id and sees every student's queue
    lms: dict[str, str] = Field(default_factory=dict)

    @field_validator("lms")
    @classmethod
    def _one_each(cls, v: dict[str, str]) -> dict[str, str]:
        seen = [x.strip().casefold() for x in v.values()]
        if dup := sorted({x for x in seen if seen.count(x) > 1 or not x}):
            raise ValueError("each account's LMS identity is its own and not empty: "
                             + ", ".join(repr(x) for x in dup))
        return v


PastLimit = Literal["refuse", "defer"]


class LimitsSpec(_Strict):
    """How much a student may hand in of an assignment, and what happens past it.

    ``per_hour`` and ``burst`` are a token bucket: ``burst`` hand-ins at once, then one
    more each ``1/per_hour`` hours. ``min_interval``: the least time between two hand-ins
    that get feedback. Past a limit a hand-in is refused with the time of the next one
    allowed, or (``defer``) taken and graded only after everyone else's, its feedback
    shown after the deadline.
    """

    max_submissions: int | None = Field(None, ge=1)
    per_hour: float | None = Field(None, gt=0)
    burst: int | None = Field(None, ge=1)  # default: per_hour, at least 1
    min_interval: Duration | None = None
    past_limit: PastLimit = "refuse"

    @property
    def any(self) -> bool:
        """Whether any limit is set (else a hand-in needs no history to be judged)."""
        return any(v is not None for v in (self.max_submissions, self.per_hour,
                                           self.min_interval))


Formation = Literal["staff", "self"]
Charge = Literal["every_member", "poorest_member"]


class TeamsSpec(_Strict):
    """Group work: an assignment handed in once per team and graded once for every
    member (``course.teams``).

    ``formation: staff`` -- staff name the teams (``gradeline teams import``); ``self`` --
    students create a team, join one with its code and leave it, until ``lock`` (none:
    their deadline). ``charge``: whose lateness a late team hand-in costs -- each member
    their own (``every_member``: their own deadline and grace days), or the team as one
    (``poorest_member``: the earliest deadline of its members, at most the grace days
    the member with fewest left has, charged to every member)."""

    min: int = Field(1, ge=1, le=100)  # members a team needs to hand in
    max: int = Field(ge=1, le=100)  # members a team may have
    formation: Formation = "staff"
    lock: Stamp | None = None  # self-formed teams change until then (none: the deadline)
    charge: Charge = "every_member"

    @model_validator(mode="after")
    def _sizes(self) -> TeamsSpec:
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) is more than max ({self.max})")
        return self


class RegradesSpec(_Strict):
    """Regrade requests: when a student may ask about a test group of a graded result
    (``course.regrades``), and how many times per assignment.

    The window ``opens`` at the assignment's release (``release``) or at the student's
    deadline (``deadline``) and ``closes`` that long after; ``per_assignment`` requests
    at most per student and assignment (none: any number). Staff may open one on a
    student's behalf at any time."""

    opens: Literal["release", "deadline"] = "release"
    closes: Duration = timedelta(days=7)
    per_assignment: int | None = Field(None, ge=1, le=1000)
class OnDemandSpec(_Strict):
    """Performance measurements a student may ask for before their deadline
    (``gradeline measure``): of their latest submission the visible tests accepted,
    its performance tests only, at the course's bulk priority. Each takes one of
    ``on_demand`` tokens; one on our side's failure is given back."""

    on_demand: int = Field(0, ge=0, le=100)  # tokens per student (0: none offered)


class AssignmentSpec(_Strict):
    """One assignment: its package, its deadline and its rules."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")  # as submissions name it
    package: str  # the problem package's directory, relative to course.yaml
    deadline: Stamp  # 2026-12-01 23:59 (the course's zone) or with an offset
    counts: Counts | None = None  # default: the course's
    late: LatePolicy | None = None  # default: the course's
    #: the most grace days of the student's pool this assignment may take (none: any)
    late_days: int | None = Field(None, ge=0, le=366)
    #: test group (or a prefix of groups: ``secret``) -> when it is graded and shown;
    #: default for Kattis packages: sample visible, everything else after_release
    visibility: dict[str, Visibility] = Field(default_factory=dict)
    points: float | None = Field(None, gt=0)  # scale the package's maximum to this
    #: starter code handed out (a file or directory, relative to course.yaml): what the
    #: similarity report does not count as shared between students
    starter: str | None = None
    limits: LimitsSpec | None = None  # default: the course's
    teams: TeamsSpec | None = None  # group work (none: each student hands in alone)
    regrades: RegradesSpec | None = None  # default: the course's
    #: measurements of its performance tests on demand before the deadline
    performance: OnDemandSpec | None = None
    #: the rubric for grading by hand (a YAML file relative to course.yaml: ``course.rubric``)
    rubric: str | None = None


class ExtensionSpec(_Strict):
    """A student's own deadline for one assignment (or for all, without one)."""

    student: str  # the student's id, as on the roster
    assignment: str | None = None  # none: every assignment
    until: Stamp | None = None  # a new deadline ...
    extra: Duration | None = None  # ... or time added to the assignment's

    @field_validator("extra")
    @classmethod
    def _positive(cls, v: timedelta | None) -> timedelta | None:
        if v is not None and v <= timedelta(0):
            raise ValueError("an extension adds time: it must be positive")
        return v


#: a Slurm account, QOS or partition name: it goes into ``#SBATCH`` lines verbatim
SlurmName = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=64)]


class BulkSpec(_Strict):
    """How the after-deadline grading is queued behind live feedback on Slurm."""

    nice: int = Field(1000, ge=0, le=2147483645)  # sbatch --nice for the bulk job
    qos: SlurmName | None = None  # sbatch --qos, where the site has one for bulk work
    partition: SlurmName | None = None  # a partition of its own for bulk work, if any


class SlurmSpec(_Strict):
    """Where the course's grading is charged on Slurm, and live feedback's priority:
    the account makes fair share between courses work, the QOS puts a student waiting
    for feedback before the bulk grading (``bulk``) of any course."""

    account: SlurmName | None = None  # sbatch --account for every job of the course
    qos: SlurmName | None = None  # sbatch --qos for live feedback, where the site has one


class CourseSpec(_Strict):
    """The whole course file."""

    course: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")  # the store's course name
    timezone: str = "UTC"  # an IANA zone, e.g. Europe/Berlin
    roster: str | None = None  # CSV: student,name,email[,extension][,sis_id][,section][,lms_id]
    counts: Counts = "last"  # which submission counts: last, best or chosen
    late: LatePolicy = Field(default_factory=LatePolicy)  # every assignment's, unless its own
    late_days: int = Field(0, ge=0, le=366)  # each student's pool of grace days for the course
    bulk: BulkSpec = Field(default_factory=BulkSpec)  # after-deadline grading on Slurm
    slurm: SlurmSpec = Field(default_factory=SlurmSpec)  # the course's account, live QOS
    assignments: list[AssignmentSpec] = Field(min_length=1)  # at least one
    extensions: list[ExtensionSpec] = Field(default_factory=list)  # students' own deadlines
    staff: StaffSpec = Field(default_factory=StaffSpec)  # who sees the staff pages
    limits: LimitsSpec = Field(default_factory=LimitsSpec)  # hand-in limits, unless its own
    lms: LmsSpec = Field(default_factory=LmsSpec)  # the LMS (LTI): grades back, staff roles
    #: regrade requests, unless an assignment has its own (none: not taken here)
    regrades: RegradesSpec | None = None

    @field_validator("timezone")
    @classmethod
    def _zone(cls, v: str) -> str:
        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError) as e:
            raise ValueError(f"unknown time zone {v!r} (e.g. Europe/Berlin, UTC)") from e
        return v

    @field_validator("assignments")
    @classmethod
    def _unique(cls, v: list[AssignmentSpec]) -> list[AssignmentSpec]:
        names = [a.name for a in v]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"assignment names must be unique: {', '.join(twice)}")
        return v
