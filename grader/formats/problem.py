"""The assignment model every package format loads into (``Problem``): limits, test
groups and cases, how output is validated, and -- for an autograder or unit tests --
what grades it instead of test data; and the content hash that names a package's
version. Pure: the formats' readers build it; the judge grades by it."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from grader.core.errors import ProblemFormatError
from grader.core.limits import Limits
from grader.core.perfspec import PerformanceSpec
from grader.core.shape import SERIAL, Shape
from grader.formats.kattis.constants import Constants
from grader.formats.kattis.package_limits import TimeMultipliers
from grader.formats.tree import (
    ON_REJECT,
    SCORINGS,
    Node,
    OnReject,
    Scoring,
    TestCase,
    TestGroup,
    full_score,
)
from grader.formats.unittests.package import UnitTests

__all__ = ["ON_REJECT", "SCORINGS", "Node", "OnReject", "Problem", "Scoring", "TestCase",
           "TestGroup", "TimeMultipliers", "package_version"]


@dataclass(frozen=True, slots=True)
class Problem:
    """A loaded, validated assignment package."""

    short_name: str
    title: str
    path: Path
    version: str  # content hash of everything that affects grading
    limits: Limits
    compile_limits: Limits
    validator_limits: Limits
    validation: Literal["default", "custom"]
    validator_flags: tuple[str, ...]
    validator_dir: Path | None
    groups: tuple[TestGroup, ...]
    languages: tuple[str, ...] | None
    compile_flags: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    format_version: str = "legacy"
    types: frozenset[str] = frozenset({"pass-fail"})
    #: where the time limit came from: gradeline.yaml, problem.yaml, .timelimit, or
    #: "unset" (only when loaded to derive it)
    time_limit_source: str = "problem.yaml"
    time_multipliers: TimeMultipliers = field(default_factory=TimeMultipliers)
    validation_passes: int = 2
    include: Mapping[str, Path] = field(default_factory=dict)
    #: problem.yaml's constants (2025-09), substituted where the spec says
    constants: Constants = field(default_factory=dict)
    code_limit_bytes: int | None = None
    allow_file_writing: bool = False
    ordered_cases: tuple[TestCase, ...] = ()
    nodes: Mapping[str, Node] = field(default_factory=dict)
    score_root: str = ""
    #: "points": gradeline.yaml course points per group; "kattis": the package's own
    #: scoring (problems of type scoring)
    scoring_model: Literal["points", "kattis"] = "points"
    validator_scores: bool = False  # legacy "validation: custom score"
    #: a Gradescope autograder (zip or directory) grades it instead of test data
    autograder: Path | None = None
    autograder_max_score: float | None = None  # the course's, else the results' own
    autograder_image: str = "assignment"  # or "base": the grading image, setup.sh not run
    #: the course's unit tests and their JUnit report grade it instead of test data
    unit_tests: UnitTests | None = None
    #: what one grading runs on: cores, nodes, MPI ranks, threads, GPUs (``core.shape``)
    shape: Shape = SERIAL
    #: a failed test is run this many times more before its verdict stands (a data
    #: race fails some runs only: ``formats.resources``)
    reruns: int = 0
    #: a Kattis package's own image: a directory with the setup.sh that makes it
    setup: Path | None = None
    #: the performance tests (``gradeline.yaml`` ``performance:``), measured in the full
    #: phase only: a problem restricted to some groups has none
    performance: PerformanceSpec | None = None

    @property
    def graded_by_autograder(self) -> bool:
        """A Gradescope autograder or unit tests grade it (no Kattis test data)."""
        return self.autograder is not None or self.unit_tests is not None

    @property
    def cases(self) -> list[TestCase]:
        """Every test case in judging order."""
        if self.ordered_cases:
            return list(self.ordered_cases)
        return [c for g in self.groups for c in g.cases]

    @property
    def is_scoring(self) -> bool:
        return "scoring" in self.types

    @property
    def is_interactive(self) -> bool:
        return "interactive" in self.types

    @property
    def is_multi_pass(self) -> bool:
        return "multi-pass" in self.types

    @property
    def legacy_data(self) -> bool:
        """The test data follows the legacy rules (a legacy package, or a 2023-07 draft
        written with legacy testdata.yaml keys, as problemtools reads it)."""
        node = self.nodes.get(self.score_root)
        return node is not None and node.legacy

    @property
    def max_score(self) -> float:
        """The points possible: the tests', and the performance tests' where there are."""
        if self.graded_by_autograder:
            return self.autograder_max_score or 0.0
        perf = self.performance.points if self.performance is not None else 0.0
        if self.scoring_model == "kattis":
            return full_score(self.nodes, self.score_root) + perf
        return sum(g.points for g in self.groups) + perf

    def group(self, name: str) -> TestGroup:
        for g in self.groups:
            if g.name == name:
                return g
        raise KeyError(name)

    def restricted(self, groups: Sequence[str]) -> Problem:
        """The problem with only these test groups run (a course's visible phase): its
        version says which, so results and reuse keep the phases apart. Course points
        count the groups kept; a package's own scoring counts cases not run as
        rejected, as when a group stops early. Performance tests belong to the full
        phase: the restricted problem has none."""
        keep = set(groups)
        unknown = keep - {g.name for g in self.groups}
        if unknown:
            raise ProblemFormatError(self.short_name, str(self.path),
                                     f"no test groups {sorted(unknown)} to run")
        tag = hashlib.sha256(",".join(sorted(keep)).encode()).hexdigest()[:12]
        return replace(self, groups=tuple(g for g in self.groups if g.name in keep),
                       ordered_cases=tuple(c for c in self.cases if c.group in keep),
                       performance=None, version=f"{self.version}/groups-{tag}")

    def performance_only(self) -> Problem:
        """The problem with its performance tests and no test groups (an on-demand
        measurement of a submission the visible tests accepted): its version says so,
        so its results are kept apart from the phases'."""
        if self.performance is None:
            raise ProblemFormatError(self.short_name, str(self.path),
                                     "no performance tests to measure (gradeline.yaml "
                                     "declares no performance:)")
        return replace(self, groups=(), ordered_cases=(), version=f"{self.version}/performance")

    @property
    def phase(self) -> str:
        """``full``; ``part`` for a problem restricted to some of its groups;
        ``performance`` for its performance tests only."""
        if "/groups-" in self.version:
            return "part"
        return "performance" if self.version.endswith("/performance") else "full"

    def included_files(self, language: str) -> Path | None:
        """The ``include/`` directory for a language (its own, else ``default``)."""
        return self.include.get(language) or self.include.get("default")


def package_version(root: Path) -> str:
    """Content hash of the package minus ``submissions/`` (which does not affect grades)
    and auxiliary dot files, but with the recorded ``.timelimit``."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if rel.parts[0] == "submissions" or (any(part.startswith(".") for part in rel.parts)
                                             and str(rel) != ".timelimit"):
            continue
        try:
            if p.is_file():
                h.update(str(rel).encode("utf-8", "surrogateescape") + b"\0")
                h.update(hashlib.sha256(p.read_bytes()).digest())
        except OSError as e:  # a dangling link: the loader names it
            h.update(f"{rel}:{type(e).__name__}".encode("utf-8", "surrogateescape"))
    return h.hexdigest()
