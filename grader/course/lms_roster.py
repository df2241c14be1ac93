"""The roster as an LMS lists its course (Names and Role Provisioning Services): each
learner linked to their roster row by LMS id, email or SIS id (the row gets the
``lms_id``), a learner with no row added, a row the LMS does not list named; and the
roster CSV written back, as ``load.read_roster`` reads it. Pure: the LTI adapter asks
the LMS, staff decide what to write (``gradeline lti roster``)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from grader.course.lms_mapping import NOBODY, Roster
from grader.course.load import ROSTER_OPTIONAL, ROSTER_REQUIRED, Student


@dataclass(frozen=True, slots=True)
class Member:
    """One member of the LMS course as its member list names them."""

    user_id: str  # the LMS's own id (a launch's sub)
    name: str = ""
    email: str = ""
    sis_id: str = ""
    roles: tuple[str, ...] = ()
    active: bool = True


def reconcile(students: Mapping[str, Student], members: Iterable[Member],
              is_staff: Callable[[Sequence[str]], bool]
              ) -> tuple[list[str], dict[str, Student]]:
    """(what the member list changes, said for staff; the roster's rows with the
    changes): learners linked, added (id: the email's local part, else ``lms-<id>``)
    or named as not linked; rows the LMS does not list named. Staff members (by
    ``is_staff`` of their roles) are named, never added: their pages come from a launch."""
    rows = dict(students)
    roster = Roster(rows)
    changes, seen = [], set()
    for m in members:
        email = m.email.lower()
        if is_staff(m.roles):
            changes.append(f"staff in the LMS: {m.name} <{email}>")
            continue
        if not m.active:
            continue
        sid, why = roster.member(m.user_id, email, m.sis_id)
        if sid is None and why != NOBODY:
            changes.append(f"not linked: {m.name} <{email}> (LMS id {m.user_id}): {why}")
            continue
        if sid is None:
            local = email.split("@")[0]
            sid = local if email and local not in rows else f"lms-{m.user_id}"
            rows[sid] = Student(sid, m.name, email, sis_id=m.sis_id, lms_id=m.user_id)
            changes.append(f"added {sid}: {m.name} <{email}> (LMS id {m.user_id})")
        elif rows[sid].lms_id != m.user_id:
            rows[sid] = replace(rows[sid], lms_id=m.user_id)
            changes.append(f"linked {sid} to LMS id {m.user_id}")
        seen.add(sid)
    changes += [f"not in the LMS: {sid}" for sid in rows if sid not in seen]
    return changes, rows


def roster_csv(students: Iterable[Student]) -> str:
    """The roster as its CSV (every column, an extension in seconds as it reads back)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(ROSTER_REQUIRED + ROSTER_OPTIONAL)
    for s in students:
        ext = f"{int(s.extension.total_seconds())}s" if s.extension else ""
        w.writerow((s.id, s.name, s.email, ext, s.sis_id, s.section, s.lms_id))
    return out.getvalue()
