"""Regrade after an assignment package changed: only submissions whose current
result is for another package version, each distinct content once; the earlier
results stay in the database, marked superseded.

It grades through ``Pipeline.grade`` (the same planner, executor and journal as a
run), in a batch directory of its own under ``spool/regrades/``. With a course file a
regrade runs per phase (the visible groups' results with the live package, the full
results with the whole suite; one phase where every group is visible): ``regrade_course``
and ``preview_course`` walk them.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace

from grader.core.jobs import now_iso
from grader.core.record import SubmissionRecord
from grader.core.samples import ShardSample
from grader.course.staffview import RegradeChange, RegradePreview, regrade_changes
from grader.formats.problem import Problem
from grader.pipeline import dedupe
from grader.pipeline.intake import Rejected, prepare
from grader.pipeline.journal import Journal
from grader.pipeline.ports import RegradeStore, ResultStore
from grader.pipeline.run import Pipeline, entry_record

log = logging.getLogger(__name__)


def regrade(pipe: Pipeline, problem: Problem, course: str, store: ResultStore,
            assignment: str | None = None) -> int:
    """Regrade the outdated submissions of ``problem`` (the package of ``assignment``,
    by default its own name); returns how many got a new result."""
    store.migrate()
    name = assignment or problem.short_name
    return grade_again(pipe, problem, store, store.outdated(course, name, problem.version),
                       assignment=name)


def grade_again(pipe: Pipeline, problem: Problem, store: ResultStore,
                spool_ids: Iterable[str], prefix: str = "r", *,
                assignment: str | None = None) -> int:
    """Grade stored submissions again with ``problem`` (a new version, or the full
    suite after a visible phase), from the payload kept in ``spool/done``, in a batch
    of their own under ``spool/regrades``; returns how many got a new result.

    :param assignment: the name the submissions give it (a course file may name an
        assignment otherwise than its package's directory; default: the package's)."""
    records, name, samples = _graded(pipe, problem, store, spool_ids, prefix, assignment)
    store.ingest(records.values())
    store.ingest_metrics(name, samples)
    return len(records)


def preview(pipe: Pipeline, problem: Problem, store: ResultStore,
            spool_ids: Iterable[str], assignment: str | None = None
            ) -> dict[str, SubmissionRecord]:
    """Grade like ``grade_again`` but store nothing: what a regrade would give each
    submission (staff compare it with what they have before applying it)."""
    return _graded(pipe, problem, store, spool_ids, "p", assignment)[0]


def _graded(pipe: Pipeline, problem: Problem, store: ResultStore, spool_ids: Iterable[str],
            prefix: str, assignment: str | None = None
            ) -> tuple[dict[str, SubmissionRecord], str, list[ShardSample]]:
    spool = pipe.spool
    name = time.strftime(f"{prefix}%Y%m%dT%H%M%S-") + secrets.token_hex(3)
    batch = spool.regrade_batch(name)
    batch.mkdir(parents=True, exist_ok=True)
    todo: list[tuple[dedupe.Candidate, SubmissionRecord]] = []
    claimed = now_iso()
    for spool_id in spool_ids:
        entry = spool.done(spool_id)
        if not entry.path.is_dir():
            log.error("%s: not in %s; cannot regrade it", spool_id, entry.path.parent)
            continue
        try:
            prep = prepare(entry, {assignment or problem.short_name: problem})
        except Rejected as r:
            log.error("%s no longer passes intake (%s); left as it was", entry.id, r)
            continue
        todo.append((prep.candidate, replace(
            entry_record(entry, name, claimed), content_hash=prep.submission.content_hash,
            language=prep.language_id, package_path=str(problem.path))))
    records: dict[str, SubmissionRecord] = {}
    journal = Journal(batch)
    samples = pipe.grade(todo, journal, records, store, batch)
    for c, _ in todo:
        spool.done(c.key).drop_src()
    return records, name, samples


def _phases(phases: Sequence[Mapping[str, Problem]], assignment: str
            ) -> Iterator[tuple[Mapping[str, Problem], Problem]]:
    """Each phase's packages and the assignment's package in it, once per version."""
    seen: set[str] = set()
    for problems in phases:
        problem = problems[assignment]
        if problem.version not in seen:  # every group visible: one phase
            seen.add(problem.version)
            yield problems, problem


def regrade_course(pipes: Callable[[Mapping[str, Problem]], Pipeline],
                   phases: Sequence[Mapping[str, Problem]], names: Sequence[str],
                   course: str, store: RegradeStore, *, judge_errors: bool = False) -> int:
    """Regrade ``names`` in every phase: what a changed package affects, or what ended in
    a judge error (graded again with the same package, its result replacing the JE);
    returns how many got a new result."""
    n = 0
    for assignment in names:
        for problems, problem in _phases(phases, assignment):
            pipe = pipes(problems)
            if judge_errors:
                n += grade_again(pipe, problem, store, store.judge_errors(
                    course, assignment, problem.version), prefix="je", assignment=assignment)
            else:
                n += regrade(pipe, problem, course, store, assignment)
    return n


def preview_course(pipes: Callable[[Mapping[str, Problem]], Pipeline],
                   phases: Sequence[Mapping[str, Problem]], assignment: str, course: str,
                   store: RegradeStore) -> RegradePreview:
    """What a regrade of ``assignment`` would change in every phase, nothing stored; kept
    where the staff page reads it (``Spool.regrade_preview``)."""
    changes: list[RegradeChange] = []
    spool = None
    for problems, problem in _phases(phases, assignment):
        pipe = pipes(problems)
        spool = pipe.spool
        ids = store.outdated(course, assignment, problem.version)
        changes += regrade_changes(store.rows(course, assignment=assignment),
                                   preview(pipe, problem, store, ids, assignment))
    out = RegradePreview(assignment, phases[-1][assignment].version, now_iso(),
                         tuple(changes))
    if spool is not None:
        path = spool.regrade_preview(assignment)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(out.to_json(), indent=1))
    return out
