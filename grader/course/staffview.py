"""What staff see of a course: per assignment, every student's attempts and grade; per
student, their history; per submission, every result with every test (hidden ones
too, marked as such). Pure: the store's rows and the policy's grades in, plain data
(JSON-ready) out, for the staff pages and their JSON twins."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from grader.core.record import SubmissionRecord
from grader.core.result import SubmissionResult
from grader.course.load import Course
from grader.course.policy import Attempt, Grade, lateness
from grader.course.visibility import group_visibility


@dataclass(frozen=True, slots=True)
class Row:
    """One submission with its current verdict (the full suite's, else the visible
    phase's; None while ungraded or refused)."""

    spool_id: str
    student: str
    assignment: str
    submitted_at: datetime
    state: str
    reason: str = ""
    verdict: str | None = None
    score: float | None = None
    max_score: float | None = None
    phase: str | None = None  # visible | full


@dataclass(frozen=True, slots=True)
class Detail:
    """One submission and every result it had: (version, made, superseded, record)."""

    spool_id: str
    student: str
    assignment: str
    submitted_at: datetime
    state: str
    reason: str
    language: str | None
    arrived_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    stored_at: datetime | None
    results: list[tuple[str, datetime, datetime | None, SubmissionResult]] = \
        field(default_factory=list)


def _late_hours(course: Course, r: Row) -> float:
    a = course.assignments.get(r.assignment)
    if a is None:
        return 0.0
    late = lateness(course, a, Attempt(r.spool_id, r.student, r.assignment, r.submitted_at))
    return round(late.total_seconds() / 3600, 2)


def _pct(v: float | None) -> float | None:
    return None if v is None else round(v * 100, 2)


def _grade(g: Grade | None) -> dict[str, Any]:
    if g is None:
        return {"status": "", "counting": None}
    return {"status": g.status, "counting": g.spool_id,
            "late_hours": round(g.late.total_seconds() / 3600, 2),
            "grace_days": g.grace_days, "penalty_pct": g.penalty_pct,
            "raw_pct": _pct(g.raw), "final_pct": _pct(g.final), "points": g.points}


def _attempt(course: Course, r: Row, counting: str | None) -> dict[str, Any]:
    return {"id": r.spool_id, "submitted_at": r.submitted_at.isoformat(timespec="seconds"),
            "late_hours": _late_hours(course, r), "state": r.state, "reason": r.reason,
            "verdict": r.verdict, "score": r.score, "max_score": r.max_score,
            "phase": r.phase, "counts": r.spool_id == counting}


def assignment_table(course: Course, assignment: str, rows: Sequence[Row],
                     grades: Sequence[Grade]) -> list[dict[str, Any]]:
    """One line per student (the roster's and anyone who handed in): attempts, the
    latest verdict, the grade."""
    mine = [r for r in rows if r.assignment == assignment]
    by_grade = {g.student: g for g in grades if g.assignment == assignment}
    out = []
    for student in sorted(set(course.students) | {r.student for r in mine}):
        theirs = [r for r in mine if r.student == student]
        last = theirs[-1] if theirs else None
        s = course.students.get(student)
        out.append({"student": student, "name": s.name if s else "",
                    "attempts": len(theirs), "last": last.spool_id if last else None,
                    "last_verdict": last.verdict if last else None,
                    **_grade(by_grade.get(student))})
    return out


def student_history(course: Course, student: str, rows: Sequence[Row],
                    grades: Sequence[Grade]) -> list[dict[str, Any]]:
    """Per assignment: the student's own deadline, grade and every attempt."""
    out = []
    for a in course.ordered():
        g = next((g for g in grades if g.student == student and g.assignment == a.name), None)
        counting = g.spool_id if g else None
        out.append({"assignment": a.name,
                    "deadline": course.deadline(student, a.name).isoformat(),
                    "grade": _grade(g),
                    "attempts": [_attempt(course, r, counting) for r in rows
                                 if r.student == student and r.assignment == a.name]})
    return out


def submission_page(course: Course, d: Detail, files: Sequence[tuple[str, str]]
                    ) -> dict[str, Any]:
    """One submission: who, when, its stamps, its files, and each result with every
    test and the visibility of its group."""
    a = course.assignments.get(d.assignment)
    rules = a.visibility if a else {}

    def stamp(t: datetime | None) -> str | None:
        return t.isoformat(timespec="seconds") if t else None

    results = []
    for version, made, gone, rec in d.results:
        vis = group_visibility({t.group for t in rec.tests} | {g.name for g in rec.groups},
                               rules)
        results.append({
            "version": version, "phase": "visible" if "/groups-" in version else "full",
            "made": stamp(made), "superseded": stamp(gone), "verdict": rec.verdict.value,
            "score": rec.score, "max_score": rec.max_score, "message": rec.message,
            "compile_output": rec.compile.output if rec.compile else "",
            "runtime": dict(rec.runtime),
            "tests": [{"name": t.name, "group": t.group, "shown": vis.get(t.group, ""),
                       "verdict": t.verdict.value, "cpu_s": t.cpu_time_s,
                       "memory_bytes": t.memory_bytes, "feedback": t.feedback,
                       "output": t.output} for t in rec.tests]})
    return {"id": d.spool_id, "student": d.student, "assignment": d.assignment,
            "submitted_at": stamp(d.submitted_at), "state": d.state, "reason": d.reason,
            "language": d.language,
            "late_hours": _late_hours(course, Row(d.spool_id, d.student, d.assignment,
                                                  d.submitted_at, d.state)),
            "stamps": {"arrived": stamp(d.arrived_at), "started": stamp(d.started_at),
                       "finished": stamp(d.finished_at), "stored": stamp(d.stored_at)},
            "files": [{"name": n, "text": t} for n, t in files], "results": results}


def regrade_changes(rows: Sequence[Row], new: Mapping[str, SubmissionRecord]
                    ) -> list[dict[str, Any]]:
    """Per regraded submission: its verdict and score now and what the regrade would
    give (``changed`` when either differs): the regrade preview."""
    out = []
    for r in rows:
        rec = new.get(r.spool_id)
        if rec is None or rec.result is None:
            continue
        v, score = rec.result.verdict.value, rec.result.score
        out.append({"student": r.student, "id": r.spool_id, "phase": r.phase,
                    "old_verdict": r.verdict, "new_verdict": v, "old_score": r.score,
                    "new_score": score,
                    "changed": v != r.verdict or abs(score - (r.score or 0.0)) > 1e-9})
    return out
