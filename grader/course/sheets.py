"""Grade sheets for staff and the import files of the LMS they use.

* the assignment sheet: one row per student with the counting submission, its
  lateness, grace days, penalty, raw and final score, the status, the team graded as
  one (each member a row of their own) and the changes by hand that count;
* the course sheet: one row per student, points per assignment and the total;
* Canvas's gradebook import CSV: ``Student, ID, SIS User ID, SIS Login ID, Section``
  then one column per assignment (named as in Canvas) and a ``Points Possible`` row
  (Canvas matches students by SIS User ID or login; empty cells leave a grade as is);
* Moodle's grade import CSV: ``First name, Last name, ID number, Email address`` then
  one column per grade item (map users by "Email address" or "ID number" on import).

A pending grade (the full suite has not run yet) is an empty cell, never a zero.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence

from grader.course.load import Course, Student
from grader.course.policy import Grade

SHEET_COLUMNS = ("student", "name", "email", "status", "submission", "submitted_at",
                 "late_hours", "grace_days", "penalty_pct", "raw_pct", "final_pct",
                 "points", "team", "changes")
CANVAS_FIXED = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_FIXED = ("First name", "Last name", "ID number", "Email address")


def _num(v: float | None, digits: int = 2) -> str:
    return "" if v is None else f"{v:.{digits}f}".rstrip("0").rstrip(".") or "0"


def _csv(rows: Sequence[Sequence[str]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerows(rows)
    return buf.getvalue()


def _student(course: Course, sid: str) -> Student:
    return course.students.get(sid) or Student(sid)


def assignment_sheet(course: Course, assignment: str, grades: Sequence[Grade]) -> str:
    rows: list[list[str]] = [list(SHEET_COLUMNS)]
    for g in (g for g in grades if g.assignment == assignment):
        s = _student(course, g.student)
        at = g.submitted_at.astimezone(course.zone).isoformat(timespec="seconds") \
            if g.submitted_at else ""
        rows.append([g.student, s.name, s.email, g.status, g.spool_id or "", at,
                     _num(g.late.total_seconds() / 3600), str(g.grace_days),
                     _num(g.penalty_pct), _num(_pct(g.raw)), _num(_pct(g.final)),
                     _num(g.points), g.team, "; ".join(g.changes)])
    return _csv(rows)


def _pct(v: float | None) -> float | None:
    return None if v is None else v * 100


def _by_student(grades: Sequence[Grade]) -> dict[str, dict[str, Grade]]:
    out: dict[str, dict[str, Grade]] = {}
    for g in grades:
        out.setdefault(g.student, {})[g.assignment] = g
    return out


def _cell(g: Grade | None) -> str:
    """Points where the assignment has points, else percent; empty while pending."""
    if g is None or g.status == "pending":
        return ""
    if g.points is not None:
        return _num(g.points)
    return _num(g.final * 100 if g.final is not None else None)


def course_sheet(course: Course, grades: Sequence[Grade],
                 possible: Mapping[str, float]) -> str:
    names = [a.name for a in course.ordered()]
    rows = [["student", "name", "email", *names, "total", "pending"]]
    for sid, mine in sorted(_by_student(grades).items()):
        s = _student(course, sid)
        cells = [_cell(mine.get(n)) for n in names]
        total = sum(float(c) for c in cells if c)
        pending = sum(1 for n in names if mine.get(n) and mine[n].status == "pending")
        rows.append([sid, s.name, s.email, *cells, _num(total), str(pending)])
    rows.append(["", "points possible", "", *(_num(possible.get(n, 100.0)) for n in names),
                 _num(sum(possible.get(n, 100.0) for n in names)), ""])
    return _csv(rows)


def canvas_csv(course: Course, grades: Sequence[Grade], possible: Mapping[str, float]
               ) -> str:
    names = [a.name for a in course.ordered()]
    rows = [[*CANVAS_FIXED, *names],
            ["Points Possible", "", "", "", "", *(_num(possible.get(n, 100.0)) for n in names)]]
    for sid, mine in sorted(_by_student(grades).items()):
        s = _student(course, sid)
        rows.append([_canvas_name(s), "", s.sis_id or sid, sid, s.section,
                     *(_cell(mine.get(n)) for n in names)])
    return _csv(rows)


def _canvas_name(s: Student) -> str:
    """Canvas writes names "Last, First"."""
    first, _, last = (s.name or s.id).rpartition(" ")
    return f"{last}, {first}" if first else last


def moodle_csv(course: Course, grades: Sequence[Grade]) -> str:
    names = [a.name for a in course.ordered()]
    rows = [[*MOODLE_FIXED, *names]]
    for sid, mine in sorted(_by_student(grades).items()):
        s = _student(course, sid)
        first, _, last = (s.name or sid).rpartition(" ")
        rows.append([first or last, last if first else "", s.sis_id or sid, s.email,
                     *(_cell(mine.get(n)) for n in names)])
    return _csv(rows)
