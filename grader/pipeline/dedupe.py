"""Work avoidance: identical content for the same assignment version is graded once.

One planner for every way of grading many submissions (a spool run, a manifest
batch, a regrade): ``plan`` splits candidates into leaders (graded), followers
(identical to a leader: they get its result) and stored reuses (identical content
already has a stored result); ``execute`` grades the leaders and yields an
outcome for every candidate.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from grader.core.jobs import GradingJob, Outcome, now_iso
from grader.core.result import SubmissionResult
from grader.formats.problem import Problem
from grader.pipeline.ports import Executor

#: (assignment version, content hash) -> (key of the source, its stored result), or None.
Lookup = Callable[[str, str], tuple[str, SubmissionResult] | None]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One submission to grade, with what identifies its content.

    :param key: the caller's name for it (a spool id, or a manifest path).
    """

    key: str
    job: GradingJob
    problem: Problem
    content_hash: str

    @property
    def identity(self) -> tuple[str, str]:
        return self.problem.version, self.content_hash


@dataclass(slots=True)
class Plan:
    """Who is graded, who waits for whom, who reuses a stored result."""

    leaders: list[Candidate] = field(default_factory=list)
    followers: dict[str, list[Candidate]] = field(default_factory=dict)  # leader key -> ...
    stored: list[tuple[Candidate, str, SubmissionResult]] = field(default_factory=list)

    @property
    def reused(self) -> int:
        return len(self.stored) + sum(len(f) for f in self.followers.values())


def plan(candidates: Sequence[Candidate], *, dedupe: bool = True,
         lookup: Lookup | None = None) -> Plan:
    """Split candidates; without ``dedupe`` every candidate is a leader."""
    p = Plan()
    first: dict[tuple[str, str], Candidate] = {}
    for c in candidates:
        if not dedupe:
            p.leaders.append(c)
            continue
        hit = lookup(*c.identity) if lookup is not None else None
        if hit is not None:
            p.stored.append((c, hit[0], hit[1]))
        elif c.identity in first:
            p.followers.setdefault(first[c.identity].key, []).append(c)
        else:
            first[c.identity] = c
            p.leaders.append(c)
    return p


@dataclass(frozen=True, slots=True)
class Graded:
    """A candidate's outcome; ``reused_from`` names the key whose grading it shares."""

    candidate: Candidate
    outcome: Outcome
    reused_from: str | None = None


def execute(p: Plan, executor: Executor, recovered: Mapping[str, Outcome] | None = None
            ) -> Iterator[Graded]:
    """Every candidate's outcome: stored reuses first, then each leader as it is graded
    (or as an interrupted run already left it in ``recovered``, by job key), followed
    by its followers."""
    for c, source, result in p.stored:
        now = now_iso()  # reusing a stored result takes no time: it starts and ends now
        yield Graded(c, Outcome(c.job.key, result, now, now), source)
    recovered = recovered or {}
    by_job = {c.job.key: c for c in p.leaders}
    todo = [c.job for c in p.leaders if c.job.key not in recovered]
    done = [o for k, o in recovered.items() if k in by_job]
    for outcome in itertools.chain(done, executor.run(todo)):  # streamed, not drained
        leader = by_job[outcome.key]
        yield Graded(leader, outcome)
        for f in p.followers.get(leader.key, ()):
            yield Graded(f, outcome, leader.key)
