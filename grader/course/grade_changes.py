"""Grades changed by hand, as the audit keeps them: a test group's points (or, with
hand-grading, a rubric question's) adjusted on one submission, or one student's whole grade
overridden -- each with who, when, before, after and why, never overwritten (the latest
row for a target counts; the earlier ones stay as history).

A submission's adjustment counts for everyone graded on that submission (every member of
its team); an override for one student only (a member who did not take part). Pure:
``course.policy`` applies them, the store keeps them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

#: what a change is of: a test group's points, a rubric question's, a student's whole grade
Kind = Literal["group", "rubric", "grade"]
KINDS: tuple[Kind, ...] = ("group", "rubric", "grade")


@dataclass(frozen=True, slots=True)
class Target:
    """What a regrade request or an adjustment is about: one test group of a result, or
    one question of a hand-grade (``kind`` rubric), by ``name``."""

    kind: Kind
    name: str

    def label(self) -> str:
        return {"group": "test group", "rubric": "rubric question", "grade": "grade"}[self.kind] \
            + (f" {self.name}" if self.name else "")


@dataclass(frozen=True, slots=True)
class GradeChange:
    """One change of a grade by hand.

    :param spool_id: the submission whose ``target`` it adjusts ("" for a whole grade).
    :param student: whose grade it overrides (kind ``grade``); else who asked, if anyone.
    :param before: the points the target had (the result's, not an earlier change's).
    :param after: the points it has now.
    :param out_of: what ``before`` and ``after`` are points of: the result's maximum
        (a group or item), or the assignment's points (a whole grade).
    :param request: the regrade request it answers, if any.
    """

    assignment: str
    target: Target
    spool_id: str
    student: str
    before: float
    after: float
    out_of: float
    reason: str
    by: str
    at: datetime
    request: int | None = None

    def note(self) -> str:
        """How a sheet and a page say it."""
        return (f"{self.target.label()}: {self.before:g} -> {self.after:g} "
                f"({self.reason}; {self.by})")


def latest(changes: Iterable[GradeChange]) -> list[GradeChange]:
    """The change that counts for each target (the latest; ``changes`` in the order they
    were made), in that order."""
    out: dict[tuple[str, str, str, str, str], GradeChange] = {}
    for c in changes:
        key = (c.assignment, c.spool_id, c.target.kind, c.target.name,
               c.student if c.target.kind == "grade" else "")
        out.pop(key, None)
        out[key] = c
    return list(out.values())


def adjusted(raw: float, spool_id: str, changes: Sequence[GradeChange]
             ) -> tuple[float, tuple[GradeChange, ...]]:
    """``raw`` (a fraction of the full suite) with the adjustments of its test groups
    made on the submission ``spool_id`` (``changes``: those that count), kept within 0
    and 1 (a rubric question's go to the hand-grade: ``hand_adjusted``)."""
    mine = tuple(c for c in changes if c.spool_id == spool_id and c.target.kind == "group"
                 and c.out_of > 0)
    value = raw + sum((c.after - c.before) / c.out_of for c in mine)
    return min(1.0, max(0.0, value)), mine


def hand_adjusted(spool_id: str, changes: Sequence[GradeChange]
                  ) -> tuple[float, tuple[GradeChange, ...]]:
    """The points the rubric questions of the submission ``spool_id`` gained (or lost)
    by hand (``changes``: those that count), and those changes."""
    mine = tuple(c for c in changes if c.spool_id == spool_id and c.target.kind == "rubric")
    return sum(c.after - c.before for c in mine), mine


def override(assignment: str, student: str, changes: Sequence[GradeChange]
             ) -> GradeChange | None:
    """The override of ``student``'s whole grade of ``assignment`` that counts, if any."""
    return next((c for c in reversed(changes) if c.target.kind == "grade"
                 and c.assignment == assignment and c.student == student), None)
