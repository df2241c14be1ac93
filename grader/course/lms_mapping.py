"""Whose a download's submissions are, by the course's roster, and when each was handed
in: the LMS names a student by its own id and a name, the course by its roster.

A submission maps by the evidence the download gives, in this order: the roster's
``lms_id`` (Canvas's user id; Moodle's participant id), then, for Moodle, the grading
worksheet's email address against the roster's, then the name (Canvas's sortable name
or Moodle's full name against the roster's name, written either way round). Every piece
of evidence that names a student must name the same one: when two disagree the
submission stays unmapped with both named, never given to either. Anonymous hand-ins
(Canvas's ``anon_``, Moodle's ``Participant``) map by ``lms_id`` only. A name shared
by two roster rows maps nobody; in Canvas a name whose roster row carries another user
id is another Canvas user.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, tzinfo

from grader.core.errors import ConfigError
from grader.course.lms_archive import LmsArchive, LmsSubmission
from grader.course.load import Student
from grader.course.spec import parse_time
from grader.course.staffinput import read_csv

WORKSHEET_ID = "Identifier"
WORKSHEET_TIME = "Last modified (submission)"
NOBODY = "no student has this LMS id, email or SIS id"  # Roster.member's "not on it"
_MONTHS = {m: i for i, m in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august",
     "september", "october", "november", "december"), start=1)}
#: Moodle's English date-time: ``Tuesday, 1 December 2026, 11:58 PM``
_MOODLE_TIME = re.compile(r"^(?:[^\W\d_]+,\s*)?(?P<d>\d{1,2})\s+(?P<mon>[^\W\d_]+)\s+"
                          r"(?P<y>\d{4}),?\s+(?P<h>\d{1,2}):(?P<mi>\d{2})\s*"
                          r"(?P<ampm>[AaPp][Mm])?$")


@dataclass(frozen=True, slots=True)
class WorksheetRow:
    """One row of Moodle's grading worksheet (``modified``: None when it has no time)."""

    participant: str
    name: str
    email: str
    status: str
    modified: datetime | None


def key(text: str) -> str:
    """A name as Canvas's zip writes it: lowercased, letters and digits only."""
    return "".join(c for c in text.casefold() if c.isalnum())


def name_keys(name: str) -> set[str]:
    """Every way round a roster name may be written: "Ada Lovelace King" as
    ``adalovelaceking``, ``kingadalovelace``, ``lovelacekingada`` (the sortable name
    "Last, First" splits the name somewhere)."""
    parts = name.split()
    return {key(" ".join(parts[i:] + parts[:i])) for i in range(len(parts))} - {""}


def parse_moodle_time(text: str, zone: tzinfo) -> datetime | None:
    """Moodle's ``Tuesday, 1 December 2026, 11:58 PM`` in ``zone``; None for ``-`` or
    empty (no submission). :raises ValueError: for anything else."""
    text = text.strip()
    if text in ("", "-"):
        return None
    m = _MOODLE_TIME.match(text)
    month = _MONTHS.get(m["mon"].casefold()) if m else None
    if m is None or month is None:
        raise ValueError(f"{text!r} is not Moodle's English date (Tuesday, 1 December "
                         "2026, 11:58 PM)")
    hour = int(m["h"])
    if m["ampm"]:
        hour = hour % 12 + (12 if m["ampm"].casefold() == "pm" else 0)
    return datetime(int(m["y"]), month, int(m["d"]), hour, int(m["mi"]), tzinfo=zone)


def read_worksheet(text: str, zone: tzinfo, source: str) -> dict[str, WorksheetRow]:
    """Moodle's grading worksheet CSV by participant id (``Participant 7`` -> ``7``);
    its times are read in ``zone`` (the course's: download it as a user in that zone)."""
    cols, rows = read_csv(text, source)
    missing = [c for c in (WORKSHEET_ID, WORKSHEET_TIME) if c not in cols]
    if missing:
        raise ConfigError(f"{source}: not Moodle's grading worksheet (no column "
                          f"{', '.join(repr(c) for c in missing)}); download it in English")
    out = {}
    for r in rows:
        n, row = r.line, r.values
        ident = row[WORKSHEET_ID].rpartition(" ")[2]
        if not ident.isdigit():
            raise ConfigError(f"{source}:{n}: Identifier {row[WORKSHEET_ID]!r} is not "
                              "'Participant <id>'")
        try:
            when = parse_moodle_time(row[WORKSHEET_TIME], zone)
        except ValueError as e:
            raise ConfigError(f"{source}:{n}: {WORKSHEET_TIME}: {e}") from None
        out[ident] = WorksheetRow(ident, row.get("Full name", ""),
                                  row.get("Email address", ""), row.get("Status", ""), when)
    return out


@dataclass(frozen=True, slots=True)
class Mapped:
    """A submission given to a roster student, and by which evidence (lms_id, email,
    name)."""

    submission: LmsSubmission
    student: str
    how: str


@dataclass(frozen=True, slots=True)
class Unmapped:
    """A submission no roster student could be given, and why."""

    submission: LmsSubmission
    reason: str


def staff_account(lms: Mapping[str, str], lms_id: str, email: str = "",
                  sis_id: str = "") -> str | None:
    """The staff account (``staff: lms`` of the course file) an LMS user is: the one whose
    LMS identity is their LMS user id, email (any case) or SIS id; None when none is."""
    said = {x.casefold() for x in (lms_id, email, sis_id) if x}
    return next((a for a, who in sorted(lms.items()) if who.strip().casefold() in said), None)


class Roster:
    """The roster looked up the three ways a download names a student."""

    def __init__(self, students: Mapping[str, Student]) -> None:
        self.students = students
        self.by_lms = {s.lms_id: s.id for s in students.values() if s.lms_id}
        self.by_email: dict[str, list[str]] = {}
        self.by_sis: dict[str, list[str]] = {}
        self.by_key: dict[str, list[str]] = {}
        for s in students.values():
            if s.email:
                self.by_email.setdefault(s.email.casefold(), []).append(s.id)
            if s.sis_id:
                self.by_sis.setdefault(s.sis_id, []).append(s.id)
            for k in name_keys(s.name):
                self.by_key.setdefault(k, []).append(s.id)

    def member(self, lms_id: str, email: str = "", sis_id: str = "") -> tuple[str | None, str]:
        """(the one student an LMS user is, or None; why not): by ``lms_id``, then email,
        then SIS id. An email or SIS id on two rows names nobody, nor one on a row that
        carries another LMS id (another LMS user): staff set the rows' ``lms_id``."""
        if lms_id in self.by_lms:
            return self.by_lms[lms_id], ""
        for how, value, index in (("email", email.casefold(), self.by_email),
                                  ("SIS id", sis_id, self.by_sis)):
            found = index.get(value, []) if value else []
            free = [s for s in found if not self.students[s].lms_id]
            if len(free) == 1:
                return free[0], ""
            if found:
                return None, (f"the {how} {value} is that of {', '.join(sorted(found))} on "
                              "the roster, " + ("whose row has another LMS id" if not free
                                                else "more than one") + ": staff set lms_id")
        return None, NOBODY

    def by_name(self, sub: LmsSubmission) -> tuple[str | None, str]:
        """(the one student the name names, or None; why not)."""
        who = sub.who
        found = self.by_key.get(key(who.name), [])
        if who.lms == "canvas":  # a roster row with another user id is another user
            other = [s for s in found if self.students[s].lms_id not in ("", who.lms_id)]
            found = [s for s in found if s not in other]
            if not found and other:
                ids = ", ".join(f"{s} ({self.students[s].lms_id})" for s in other)
                return None, f"the name {who.name!r} is that of {ids}, another user id"
        if len(found) > 1:
            return None, f"the name {who.name!r} is that of {', '.join(sorted(found))}"
        if not found:
            return None, f"no roster name is {who.name!r}"
        return found[0], ""


def map_submission(sub: LmsSubmission, roster: Roster,
                   worksheet: Mapping[str, WorksheetRow] | None = None) -> Mapped | Unmapped:
    """The roster student ``sub`` belongs to, or why none (the module says the order)."""
    who = sub.who
    if sub.clashes:
        return Unmapped(sub, f"two of its files would both be {', '.join(sub.clashes)}")
    by_id = roster.by_lms.get(who.lms_id)
    if who.anonymous:
        if by_id is not None:
            return Mapped(sub, by_id, "lms_id")
        return Unmapped(sub, f"anonymous {who.label}: only a roster lms_id maps it, and "
                             f"none is {who.lms_id!r} (reveal identities in the LMS and "
                             "download again)")
    evidence: list[tuple[str, str]] = [("lms_id", by_id)] if by_id is not None else []
    why = [f"no roster lms_id is {who.lms_id}"] if by_id is None else []
    row = worksheet.get(who.lms_id) if worksheet is not None and who.lms == "moodle" \
        else None
    if row is not None and row.email:
        emails = roster.by_email.get(row.email.casefold(), [])
        if len(emails) == 1:
            evidence.append(("email", emails[0]))
        else:
            why.append(f"the worksheet's email {row.email} is "
                       + (f"that of {', '.join(emails)}" if emails else "on no roster row"))
    named, not_named = roster.by_name(sub)
    if named is not None:
        evidence.append(("name", named))
    else:
        why.append(not_named)
    students = {s for _, s in evidence}
    if len(students) > 1:
        return Unmapped(sub, "the evidence disagrees: " + ", ".join(
            f"{how} says {s}" for how, s in evidence))
    if not evidence:
        return Unmapped(sub, "; ".join(why))
    how, student = evidence[0]
    return Mapped(sub, student, how)


def map_archive(archive: LmsArchive, students: Mapping[str, Student],
                worksheet: Mapping[str, WorksheetRow] | None = None
                ) -> tuple[list[Mapped], list[Unmapped]]:
    """Every submission of ``archive`` mapped, or unmapped with the reason; two
    submissions that map to one student both stay unmapped (which one counts is not
    ours to guess)."""
    roster = Roster(students)
    done = [map_submission(s, roster, worksheet) for s in archive.submissions]
    mapped = [m for m in done if isinstance(m, Mapped)]
    unmapped = [m for m in done if isinstance(m, Unmapped)]
    twice = {m.student for m in mapped if sum(o.student == m.student for o in mapped) > 1}
    for m in [m for m in mapped if m.student in twice]:
        mapped.remove(m)
        others = [o.submission.who.label for o in done
                  if isinstance(o, Mapped) and o.student == m.student and o is not m]
        unmapped.append(Unmapped(m.submission, f"{m.student} is also {', '.join(others)}"))
    return mapped, unmapped


@dataclass(frozen=True, slots=True)
class Times:
    """Hand-in times staff give (``--times``): by roster student or by LMS id."""

    by_student: Mapping[str, datetime]
    by_lms_id: Mapping[str, datetime]


def read_times(text: str, zone: tzinfo, source: str) -> Times:
    """A CSV of ``submitted_at`` and ``student`` (the roster's id) or ``lms_id``; a time
    without an offset is in ``zone`` (the course's)."""
    header, rows = read_csv(text, source)
    cols = set(header)
    if "submitted_at" not in cols or not cols & {"student", "lms_id"}:
        raise ConfigError(f"{source}: the header must name submitted_at and student or "
                          "lms_id (or both)")
    by_student: dict[str, datetime] = {}
    by_lms: dict[str, datetime] = {}
    for r in rows:
        n, row = r.line, r.values
        try:
            at = parse_time(row["submitted_at"], "submitted_at")
        except ValueError as e:
            raise ConfigError(f"{source}:{n}: submitted_at: {e}") from None
        at = at if at.tzinfo is not None else at.replace(tzinfo=zone)
        if row.get("student"):
            by_student[row["student"]] = at
        if row.get("lms_id"):
            by_lms[row["lms_id"]] = at
    return Times(by_student, by_lms)


@dataclass(frozen=True, slots=True)
class HandIn:
    """When a submission was handed in (None: nothing says) and what says so."""

    at: datetime | None
    source: str


def hand_in_time(m: Mapped, deadline: datetime, *,
                 worksheet: Mapping[str, WorksheetRow] | None = None,
                 times: Times | None = None, late_at: datetime | None = None) -> HandIn:
    """A time staff gave (``times``) first, else what the LMS implies: Moodle's worksheet;
    for Canvas, whose zip has no times, the assignment's ``deadline`` for a hand-in it
    did not mark late (the latest time that is still on time: no penalty it did not
    earn) and ``late_at`` for one it did. A late one without ``late_at`` has no time:
    how late it was decides its penalty, and the zip does not say."""
    who = m.submission.who
    if times is not None:
        given = times.by_student.get(m.student) or times.by_lms_id.get(who.lms_id)
        if given is not None:
            return HandIn(given, "--times")
    if who.lms == "moodle":
        row = worksheet.get(who.lms_id) if worksheet is not None else None
        if row is not None and row.modified is not None:
            return HandIn(row.modified, "worksheet")
        return HandIn(None, "no time: give --worksheet" if worksheet is None else
                      f"no time: the worksheet has none for participant {who.lms_id}")
    if not m.submission.late:
        return HandIn(deadline, "deadline (not marked late)")
    if late_at is not None:
        return HandIn(late_at, "--late-at")
    return HandIn(None, "no time: marked late, and Canvas's zip has no times")
