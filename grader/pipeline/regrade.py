"""Regrade after an assignment package changed: only submissions whose current
result is for another package version, each distinct content once; the earlier
results stay in the database, marked superseded.

It grades through ``Pipeline.grade`` (the same planner, executor and journal as a
run), in a batch directory of its own under ``spool/regrades/``.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Iterable
from dataclasses import replace

from grader.adapters.spool import Entry
from grader.core.jobs import now_iso
from grader.core.record import SubmissionRecord
from grader.core.samples import ShardSample
from grader.formats.problem import Problem
from grader.pipeline import dedupe
from grader.pipeline.intake import Rejected, prepare
from grader.pipeline.journal import Journal
from grader.pipeline.ports import ResultStore
from grader.pipeline.run import Pipeline, entry_record

log = logging.getLogger(__name__)


def regrade(pipe: Pipeline, problem: Problem, course: str, store: ResultStore) -> int:
    """Regrade the outdated submissions of ``problem``; returns how many got a new result."""
    store.migrate()
    return grade_again(pipe, problem, store,
                       store.outdated(course, problem.short_name, problem.version))


def grade_again(pipe: Pipeline, problem: Problem, store: ResultStore,
                spool_ids: Iterable[str], prefix: str = "r") -> int:
    """Grade stored submissions again with ``problem`` (a new version, or the full
    suite after a visible phase), from the payload kept in ``spool/done``, in a batch
    of their own under ``spool/regrades``; returns how many got a new result."""
    records, name, samples = _graded(pipe, problem, store, spool_ids, prefix)
    store.ingest(records.values())
    store.ingest_metrics(name, samples)
    return len(records)


def preview(pipe: Pipeline, problem: Problem, store: ResultStore,
            spool_ids: Iterable[str]) -> dict[str, SubmissionRecord]:
    """Grade like ``grade_again`` but store nothing: what a regrade would give each
    submission (staff compare it with what they have before applying it)."""
    return _graded(pipe, problem, store, spool_ids, "p")[0]


def _graded(pipe: Pipeline, problem: Problem, store: ResultStore, spool_ids: Iterable[str],
            prefix: str) -> tuple[dict[str, SubmissionRecord], str, list[ShardSample]]:
    spool = pipe.spool
    name = time.strftime(f"{prefix}%Y%m%dT%H%M%S-") + secrets.token_hex(3)
    batch = spool.root / "regrades" / name
    batch.mkdir(parents=True, exist_ok=True)
    todo: list[tuple[dedupe.Candidate, SubmissionRecord]] = []
    claimed = now_iso()
    for spool_id in spool_ids:
        entry = Entry(spool_id, spool.dir("done") / spool_id)
        if not entry.path.is_dir():
            log.error("%s: not in %s; cannot regrade it", spool_id, spool.dir("done"))
            continue
        try:
            prep = prepare(entry, {problem.short_name: problem})
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
        Entry(c.key, spool.dir("done") / c.key).drop_src()
    return records, name, samples
