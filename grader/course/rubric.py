"""An assignment's rubric for grading by hand, as staff keep it beside the course file
(``rubric: rubrics/NAME.yaml`` on the assignment) and version it with the course.

The model is PrairieLearn's (``rubrics``/``rubric_items``) with Submitty's clamps and
"select one" components: an assignment has questions, each worth ``points``; a
question starts at ``start`` (0: items add points; ``points``: items take them off),
its applied items' points (positive or negative) are added, the sum is clamped to
``[min, max]`` (``max`` above ``points`` is extra credit), and a grader's adjustment
(with its reason) is added last. ``select: one`` lets at most one item of a question
apply. Items and questions have ids that never change meaning (a grade stores the ids
it applied, so editing an item's points changes every grade that used it, and a
regrade request names an item by its id).

Who grades a question is the rubric's too: ``graders`` (accounts, or accounts with
weights) and, per roster section, ``sections``; each student's question goes to one
grader by rendezvous hashing (stable: the same grader every time, and a grader added
later takes only their share). Pure: the file's data in, values out.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: an id as the rubric writes it: kept in grades, named by regrade requests and CSVs
ID = r"^[a-z0-9][a-z0-9_-]{0,39}$"
#: a key binding: one letter or digit (the grading page's access key)
KEY = r"^[a-z0-9]$"
Select = Literal["any", "one"]
Combine = Literal["add", "replace"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class ItemSpec(_Strict):
    """One rubric item: points given (positive) or taken (negative) when it applies."""

    id: str = Field(pattern=ID)  # never reused for another meaning
    points: float = Field(ge=-1000, le=1000)  # given (positive) or taken (negative)
    title: str = Field(min_length=1, max_length=100)  # what graders and students read
    explanation: str = ""  # shown to students with the item
    note: str = ""  # shown to graders only (when to apply it)
    key: str | None = Field(None, pattern=KEY)  # its key on the grading page
    always_show: bool = False  # shown to students even where it did not apply


class QuestionSpec(_Strict):
    """A part of the assignment graded by hand (PrairieLearn's question, Submitty's
    component), with its items and its graders."""

    id: str = Field(pattern=ID)  # never reused for another meaning
    title: str = Field(min_length=1, max_length=100)  # what graders and students read
    points: float = Field(gt=0, le=1000)  # what the question is worth
    start: float = 0.0  # the points before any item (points: grade by deduction)
    min: float = 0.0  # the least a question's items can leave
    max: float | None = None  # the most they can give (default: points)
    select: Select = "any"  # one: at most one item applies
    items: list[ItemSpec] = Field(min_length=1)  # at least one
    #: who grades it: accounts, or account -> weight (a share of the students)
    graders: list[str] | dict[str, float] = Field(default_factory=list)
    #: a roster section -> its graders (students of that section go to them)
    sections: dict[str, list[str]] = Field(default_factory=dict)

    @property
    def ceiling(self) -> float:
        return self.points if self.max is None else self.max

    @property
    def weights(self) -> dict[str, float]:
        """The graders with their weights (a list: each 1)."""
        return dict(self.graders) if isinstance(self.graders, dict) else \
            dict.fromkeys(self.graders, 1.0)

    @field_validator("graders")
    @classmethod
    def _weights(cls, v: list[str] | dict[str, float]) -> list[str] | dict[str, float]:
        if isinstance(v, dict) and any(not (w > 0 and math.isfinite(w)) for w in v.values()):
            raise ValueError("a grader's weight is a positive number")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> QuestionSpec:
        if self.min > self.ceiling:
            raise ValueError(f"min {self.min:g} is above max {self.ceiling:g}")
        if not self.min <= self.start <= self.ceiling:
            raise ValueError(f"start {self.start:g} is outside min..max "
                             f"({self.min:g}..{self.ceiling:g})")
        twice(self.items, "id", "item ids")
        twice([i for i in self.items if i.key], "key", "keys")
        return self


class RubricSpec(_Strict):
    """The rubric file: how the hand-grade joins the autograder's score, whether graders
    see names, and the questions."""

    #: add: the hand-grade's points add to the autograder's; replace: they replace as
    #: many of the assignment's points (the autograder's score is scaled to the rest)
    combine: Combine = "add"
    anonymous: bool = False  # graders see a pseudonym per student, not a name
    questions: list[QuestionSpec] = Field(min_length=1)  # at least one

    @model_validator(mode="after")
    def _unique(self) -> RubricSpec:
        twice(self.questions, "id", "question ids")
        twice([i for q in self.questions for i in q.items], "id",
              "item ids (across questions: a regrade request names one)")
        return self


def twice(things: list[ItemSpec] | list[QuestionSpec], attr: str, what: str) -> None:
    """:raises ValueError: naming the values given more than once."""
    values = [getattr(t, attr) for t in things]
    dup = sorted({v for v in values if values.count(v) > 1})
    if dup:
        raise ValueError(f"{what} must be unique: {', '.join(dup)} given twice")


@dataclass(frozen=True, slots=True)
class Rubric:
    """A rubric as loaded: its spec, where it came from and its content's hash (which
    version a grade was given under)."""

    spec: RubricSpec
    source: Path | None = None
    sha256: str = ""

    @property
    def questions(self) -> list[QuestionSpec]:
        return self.spec.questions

    @property
    def max_points(self) -> float:
        """What the hand-grade is worth (extra credit above it possible)."""
        return sum(q.points for q in self.spec.questions)

    @property
    def graders(self) -> set[str]:
        """Every account the rubric names to grade (by question and by section)."""
        return {g for q in self.spec.questions
                for g in [*q.weights, *(x for xs in q.sections.values() for x in xs)]}

    def question(self, qid: str) -> QuestionSpec | None:
        return next((q for q in self.spec.questions if q.id == qid), None)

    def item(self, iid: str) -> ItemSpec | None:
        return next((i for q in self.spec.questions for i in q.items if i.id == iid), None)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def question_points(q: QuestionSpec, items: tuple[str, ...] | list[str],
                    adjustment: float = 0.0) -> float:
    """A question's points: its start plus the applied items (ids the rubric no longer
    has count nothing), clamped to min..max, plus the adjustment."""
    known = {i.id: i.points for i in q.items}
    raw = q.start + sum(known.get(i, 0.0) for i in items)
    return round(min(max(raw, q.min), q.ceiling) + adjustment, 6)


def _unit(*parts: str) -> float:
    """A number in (0, 1) from the parts' hash: the same parts, the same number."""
    h = hashlib.sha256("\0".join(parts).encode()).digest()
    return (int.from_bytes(h[:8], "big") + 1) / (2 ** 64 + 2)


def grader_of(q: QuestionSpec, assignment: str, student: str, section: str = "") -> str | None:
    """Who grades ``student``'s ``q`` (None: nobody is named; anyone may). Rendezvous
    hashing with weights: the grader whose ``weight / -ln(u)`` is highest, ``u`` the
    hash of the assignment, question, student and grader."""
    pool = dict.fromkeys(q.sections[section], 1.0) if section in q.sections else q.weights
    if not pool:
        return None
    return max(sorted(pool), key=lambda g: pool[g] / -math.log(_unit(assignment, q.id,
                                                                       student, g)))


def queue_order(assignment: str, question: str, student: str) -> float:
    """Where a student's question stands in the stable pseudo-random grading order."""
    return _unit("order", assignment, question, student)


_PSEUDONYM = re.compile(r"^anon-[a-z2-7]{8}$")


def pseudonym(key: bytes, course: str, assignment: str, student: str) -> str:
    """The stable per-assignment name graders see for a student in anonymous mode:
    keyed, so knowing the roster does not give it away, and different per assignment,
    so two assignments' grades cannot be joined by it."""
    mac = hmac.new(key, f"{course}\0{assignment}\0{student}".encode(), hashlib.sha256)
    alphabet = "abcdefghijklmnopqrstuvwxyz234567"
    n = int.from_bytes(mac.digest()[:5], "big")
    return "anon-" + "".join(alphabet[(n >> (5 * i)) & 31] for i in range(8))


def is_pseudonym(text: str) -> bool:
    return bool(_PSEUDONYM.match(text))


def pseudonyms(key: bytes, course: str, assignment: str, students: Mapping[str, object] |
               list[str] | set[str]) -> dict[str, str]:
    """pseudonym -> student, for the students given."""
    return {pseudonym(key, course, assignment, s): s for s in students}
