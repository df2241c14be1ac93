"""The shape a problem's test data takes once loaded, whatever its format version: the
test cases, the groups gradeline runs, and the scoring tree above them, with the pure
functions that walk it (aggregation, full score, case maxima, order)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Scoring = Literal["all_or_nothing", "proportional"]
SCORINGS: tuple[Scoring, ...] = ("all_or_nothing", "proportional")
OnReject = Literal["continue", "break"]
ON_REJECT: tuple[OnReject, ...] = ("continue", "break")
#: how a scoring node combines its items (legacy graders add avg and max)
Aggregation = Literal["pass-fail", "sum", "min", "avg", "max"]
VerdictMode = Literal["worst_error", "first_error", "always_accept"]


@dataclass(frozen=True, slots=True)
class TestCase:
    """One test: input and judge answer (the answer never enters the student's sandbox).

    :param args: command-line arguments for the submission (``args``).
    :param files: a ``.files`` directory copied into the working directory before the run.
    :param ancestors: the scoring nodes holding this case, innermost first.
    """

    __test__ = False  # not a pytest class

    name: str  # e.g. "secret/group1/03"
    group: str  # the TestGroup it runs in, e.g. "secret/group1"
    input_path: Path
    answer_path: Path
    args: tuple[str, ...] = ()
    files: Path | None = None
    validator_flags: tuple[str, ...] = ()
    ancestors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TestGroup:
    """A directory of tests that is run (and, for course points, scored) together."""

    __test__ = False  # not a pytest class

    name: str
    points: float
    scoring: Scoring
    validator_flags: tuple[str, ...]
    cases: tuple[TestCase, ...]
    #: Kattis ``on_reject``: "break" stops the group at its first rejected test (the
    #: rest are not run and count as failed); "continue" runs every test
    on_reject: OnReject = "continue"

    @property
    def is_sample(self) -> bool:
        return self.name == "sample" or self.name.startswith("sample/")


@dataclass(frozen=True, slots=True)
class Node:
    """A node of the scoring tree (``secret``, a test data group, a legacy group).

    :param items: child node names and case names, in judging order.
    :param max_score: None when unbounded (scores come from the validator).
    :param case_max: the maximum score of each of its own cases (sum/min nodes).
    """

    name: str
    items: tuple[str, ...]
    aggregation: Aggregation
    max_score: float | None
    on_reject: OnReject = "continue"
    require_pass: tuple[str, ...] = ()
    case_max: Mapping[str, float | None] = field(default_factory=dict)
    # legacy default grader
    legacy: bool = False
    verdict_mode: VerdictMode = "worst_error"
    accept_score: float = 1.0
    reject_score: float = 0.0
    score_range: tuple[float, float] = (-math.inf, math.inf)
    ignore_sample: bool = False
    accept_if_any_accepted: bool = False


@dataclass(frozen=True, slots=True)
class TestData:
    """What ``load_testdata`` found."""

    groups: tuple[TestGroup, ...]  # with placeholder points; the caller sets points
    cases: tuple[TestCase, ...]  # in judging order
    nodes: Mapping[str, Node]  # scoring tree (keys: node names; "" is the legacy root)
    root: str  # the node whose score is the submission's


def aggregate(how: str, scores: Sequence[float]) -> float:
    """Scores combined as the default grader and the 2023-07/2025-09 aggregations do."""
    if not scores:
        return 0.0
    if how == "min":
        return min(scores)
    if how == "max":
        return max(scores)
    if how == "avg":
        return sum(scores) / len(scores)
    return float(sum(scores))


def full_score(nodes: Mapping[str, Node], root: str) -> float:
    """The score of a submission that passes every case without validator scores: the
    problem's maximum (0 for an unbounded one, whose scores only a validator gives)."""

    def walk(name: str) -> float:
        n = nodes[name]
        if not n.legacy:
            return n.max_score or 0.0
        parts = [walk(it) if it in nodes else n.accept_score for it in n.items]
        if n.ignore_sample:
            parts = [walk(it) if it in nodes else n.accept_score for it in n.items
                     if it != "sample"]
        if not parts:
            return 0.0
        total = aggregate(n.aggregation, parts)
        lo, hi = n.score_range
        return min(max(total, lo), hi)

    return walk(root) if root in nodes else 0.0


def case_maxima(nodes: Mapping[str, Node]) -> dict[str, float | None]:
    """Every case's maximum score (2023-07/2025-09 sum/min groups)."""
    out: dict[str, float | None] = {}
    for n in nodes.values():
        out.update(n.case_max)
    return out


def node_order(nodes: Mapping[str, Node], root: str) -> Sequence[str]:
    """Node names, parents before children."""
    out: list[str] = []

    def walk(n: str) -> None:
        out.append(n)
        for it in nodes[n].items:
            if it in nodes:
                walk(it)

    walk(root)
    return out
