"""The spool-to-database run: every spooled submission ends graded (stored) or
quarantined (with its reason), exactly once, even across crashes and outages.

Theory of operation
-------------------
A run first resumes the batches an interrupted run left in ``cur/``, then claims
new entries into a fresh batch (each claim is an atomic rename: two runs never
claim the same entry). For each batch:

1. entries the store already holds (a crash came between ingest and the move to
   ``done/``) just move to ``done/``;
2. intake checks and unpacks every other entry; a bad one is quarantined with its
   reason (``pipeline.intake``);
3. the dedupe planner splits the rest: identical content of the same assignment
   version is graded once, and a result stored by an earlier batch is reused;
4. the executor grades the leaders (local workers, or one Slurm array); each
   outcome becomes a record appended to the batch's journal (``results.jsonl``,
   fsync'd) as it lands;
5. as results land they are stored within ``flush_s`` (students see their
   feedback while the rest of the batch is still grading), each group in one
   transaction (idempotent on its keys), and only then do their entries move to
   ``done/``; at the end the whole journal is ingested once more (a no-op for what
   is stored) with the counter samples of the batch's array tasks;
6. then the batch's bookkeeping moves to ``batches/``.

A crash anywhere leaves each entry in exactly one place and every finished result
in the journal; the next run grades only entries without a record. With the
store down, results wait in the journal for the next run.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader import faults
from grader.adapters.spool import Entry, Spool
from grader.core.errors import StoreError
from grader.core.fairness import fair_pick
from grader.core.jobs import JudgeFault, Outcome, now_iso
from grader.core.record import SubmissionRecord
from grader.core.samples import ShardSample
from grader.core.spoolmeta import MetaError
from grader.formats.problem import Problem
from grader.formats.scoring import fault_result
from grader.pipeline import dedupe
from grader.pipeline.intake import Rejected, prepare
from grader.pipeline.journal import Journal
from grader.pipeline.ports import (
    Executor,
    ExecutorFactory,
    Prestart,
    ResultStore,
    StoreOpener,
)

log = logging.getLogger(__name__)


@dataclass
class RunSummary:
    """What one run did."""

    graded: int = 0
    reused: int = 0
    quarantined: int = 0
    stored: int = 0
    pending_batches: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    verdicts: dict[str, dict[str, int]] = field(default_factory=dict)
    scores: dict[str, list[float]] = field(default_factory=dict)

    def count(self, assignment: str, verdict: str, score: float | None) -> None:
        """One more result (``score`` None: an outcome without one, e.g. an error)."""
        by = self.verdicts.setdefault(assignment, {})
        by[verdict] = by.get(verdict, 0) + 1
        if score is not None:
            self.scores.setdefault(assignment, []).append(score)


def entry_record(entry: Entry, batch: str, claimed_at: str) -> SubmissionRecord:
    """The record of an entry before it is graded (whatever its meta.json holds)."""
    try:
        meta = entry.meta()
    except MetaError as e:  # intake quarantines it with the reason; listed where it can be
        k = e.known
        submitted = k.get("submitted_at") or claimed_at
        return SubmissionRecord(
            spool_id=entry.id, course=k.get("course") or "unknown",
            assignment=k.get("assignment") or "unknown", student=k.get("student") or "unknown",
            submitted_at=submitted, batch_id=batch, state="graded",
            arrived_at=k.get("arrived_at") or submitted, claimed_at=claimed_at)
    return SubmissionRecord(
        spool_id=entry.id, course=meta.course, assignment=meta.assignment,
        student=meta.student, submitted_at=meta.submitted_at, batch_id=batch, state="graded",
        arrived_at=meta.arrived_at or meta.submitted_at, claimed_at=claimed_at)


class Pipeline:
    """Spool intake -> grading -> store, for one spool and a set of assignments.

    :param open_store: opens the results store (None: no database, results wait in
        the journals); a StoreError from it means the same, with an error logged.
    :param executor: the executor for a batch directory.
    """

    def __init__(self, spool: Spool, problems: Mapping[str, Problem], *,
                 open_store: StoreOpener | None, executor: ExecutorFactory,
                 dedupe: bool = True, flush_s: float = 0.25) -> None:
        self.spool = spool
        self.problems = problems
        self.open_store = open_store
        self.executor = executor
        self.dedupe = dedupe
        self.flush_s = flush_s
        self.summary = RunSummary()

    def fork(self) -> Pipeline:
        """The same pipeline with a summary of its own (one per batch in flight)."""
        return Pipeline(self.spool, self.problems, open_store=self.open_store,
                        executor=self.executor, dedupe=self.dedupe, flush_s=self.flush_s)

    def _store(self) -> ResultStore | None:
        if self.open_store is None:
            return None
        try:
            store = self.open_store()
            store.migrate()
            return store
        except StoreError as e:
            log.error("%s -- results are kept in the spool's results.jsonl and stored by "
                      "the next run", e)
            return None

    def run(self, batch_size: int | None = None) -> RunSummary:
        """Resume unfinished batches, then claim and process new submissions."""
        t0 = time.monotonic()
        store = self._store()
        try:
            for batch in self.spool.batches():
                log.info("resuming batch %s", batch.name)
                self._process(batch, store)
            name = self.claim(batch_size)
            if name is not None:
                self._process(self.spool.batch(name), store)
        finally:
            if store is not None:
                store.close()
        self.summary.elapsed_s = time.monotonic() - t0
        return self.summary

    def claim(self, batch_size: int | None = None, per_student: int | None = None
              ) -> str | None:
        """Claim new submissions into a fresh batch; its name, or None when none wait.
        With ``per_student``, fairly: round-robin over students, at most that many of
        one student (``core.fairness``)."""
        ids = None
        if per_student is not None:
            ids = fair_pick(self.spool.waiting(), batch_size, per_student)
            if not ids:
                return None
        elif not self.spool.new_entries():
            return None
        name = time.strftime("b%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)
        if not self.spool.claim(name, batch_size, ids):
            self.spool.close_batch(self.spool.batch(name))  # others took them all
            return None
        return name

    def stage(self, batch_name: str, *, ingest: bool) -> RunSummary:
        """One workflow stage for one batch: grade it (the journal), or also store it."""
        t0 = time.monotonic()
        batch = self.spool.batch(batch_name)
        if not batch.is_dir():
            log.info("batch %s is already finished", batch_name)
            return self.summary
        store = self._store()
        try:
            self._process(batch, store, ingest=ingest)
        finally:
            if store is not None:
                store.close()
        self.summary.elapsed_s = time.monotonic() - t0
        return self.summary

    def _process(self, batch: Path, store: ResultStore | None, *, ingest: bool = True) -> None:
        try:
            with self.spool.working_on(batch) as mine:
                if not mine:
                    log.info("batch %s is being processed by another gradeline; left to it",
                             batch.name)
                    return
                self._process_held(batch, store, ingest=ingest)
        except FileNotFoundError:  # finished (moved to batches/) by another gradeline
            log.info("batch %s is already finished", batch.name)

    def _process_held(self, batch: Path, store: ResultStore | None, *, ingest: bool) -> None:
        journal = Journal(batch)
        records = journal.read()
        claimed_at = self.spool.claimed_at(batch)
        entries = self.spool.batch_entries(batch)
        if store is not None:
            already = store.stored_spool_ids([e.id for e in entries])
            for e in entries:
                if e.id in already:  # stored before a crash that came before done/
                    self.spool.finish(e)
            entries = [e for e in entries if e.id not in already]
        if isinstance(self.executor, Prestart):  # its workers start while intake runs
            self.executor.expect(sum(1 for e in entries if e.id not in records))
        flush = _Flush(self, ingest and store is not None, batch, journal)
        todo: list[tuple[dedupe.Candidate, SubmissionRecord]] = []
        for e in entries:
            if e.id in records:
                continue
            base = entry_record(e, batch.name, claimed_at)
            try:
                prep = prepare(e, self.problems)
            except Rejected as r:
                rec = base.quarantined(str(r.code), r.message)
                journal.append(rec)
                records[e.id] = rec
                self.spool.quarantine(e, str(r.code), r.message)
                self.summary.quarantined += 1
                flush.add(rec)
                continue
            todo.append((prep.candidate, replace(
                base, content_hash=prep.submission.content_hash, language=prep.language_id,
                package_path=str(prep.problem.path))))
        samples = self.grade(todo, journal, records, store, batch, flush)
        if not ingest:
            return
        if store is None:
            self.summary.pending_batches.append(batch.name)
            return
        faults.point("before-ingest")
        try:
            # what the flush stored as it landed is not stored again (it was, before:
            # every result copied and merged twice)
            self.summary.stored += store.ingest(flush.unstored(records))
            store.ingest_metrics(batch.name, samples)
        except StoreError as e:
            log.error("ingest of %s failed (%s); it stays in %s for the next run",
                      batch.name, e, journal.path)
            self.summary.pending_batches.append(batch.name)
            return
        faults.point("before-done")
        for entry in self.spool.batch_entries(batch):
            if entry.id in records:
                self.spool.finish(entry)
        self.spool.close_batch(batch)

    def grade(self, todo: Sequence[tuple[dedupe.Candidate, SubmissionRecord]],
              journal: Journal, records: dict[str, SubmissionRecord],
              store: ResultStore | None, batch_dir: Path,
              flush: _Flush | None = None) -> list[ShardSample]:
        """Grade each distinct (assignment version, content) once and record every
        candidate in the journal; returns the executor's counter samples."""
        executor = self.executor(batch_dir)
        executor.wait_active()  # arrays an interrupted run left behind
        recovered = {o.key: o for o in executor.collected()}
        lookup = store.reusable if store is not None else None
        plan = dedupe.plan([c for c, _ in todo], dedupe=self.dedupe, lookup=lookup)
        base = {c.key: rec for c, rec in todo}
        dispatched = now_iso()
        for c in plan.leaders:
            base[c.key] = replace(base[c.key], dispatched_at=dispatched)
        try:
            self._record(plan, executor, recovered, base, journal, records, flush)
        finally:
            if flush is not None:
                flush.close()
        return executor.samples()

    def _record(self, plan: dedupe.Plan, executor: Executor,
                recovered: Mapping[str, Outcome], base: dict[str, SubmissionRecord],
                journal: Journal, records: dict[str, SubmissionRecord],
                flush: _Flush | None) -> None:
        """Each candidate's outcome, as it lands, into the journal (and the store)."""
        for g in dedupe.execute(plan, executor, recovered):
            c = g.candidate
            result = g.outcome.result
            if isinstance(result, JudgeFault):
                log.error("%s could not be graded (%s fault): %s", c.key, result.cause,
                          result.reason)
                result = fault_result(c.problem, c.key, c.content_hash, c.job.language, result)
            message = result.message
            if g.reused_from is not None:
                message = (f"identical to submission {g.reused_from} for this assignment "
                           "version: its result was reused, not graded again")
                self.summary.reused += 1
            else:
                self.summary.graded += 1
            result = replace(result, submission=f"spool:{c.key}", message=message)
            rec = base[c.key].graded(result, reused_from=g.reused_from,
                                     started_at=g.outcome.started_at or None,
                                     finished_at=g.outcome.finished_at or None)
            # a flush syncs the journal before it stores (grading does not wait on it)
            journal.append(rec, sync=flush is None or not flush.enabled)
            records[c.key] = rec
            self.summary.count(rec.assignment, result.verdict.value, result.score)
            if flush is not None:
                flush.add(rec)


class _Flush:
    """Stores a batch's records within ``flush_s`` of their landing (a thread of its
    own, so a record never waits for the next one) and moves their entries to
    done/. Without a store it keeps nothing: the journal has them."""

    def __init__(self, pipe: Pipeline, enabled: bool, batch: Path, journal: Journal) -> None:
        self.pipe, self.enabled, self.batch, self.journal = pipe, enabled, batch, journal
        self.store: ResultStore | None = None  # its own connection, opened when needed
        self.pending: list[SubmissionRecord] = []
        self.stored: dict[str, SubmissionRecord] = {}  # spool id -> the record stored
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.thread: threading.Thread | None = None

    def add(self, rec: SubmissionRecord) -> None:
        if not self.enabled:
            return
        with self.lock:
            self.pending.append(rec)
        if self.thread is None:
            self.thread = threading.Thread(target=self._loop, daemon=True,
                                           name=f"store-{self.batch.name}")
            self.thread.start()

    def _loop(self) -> None:
        while not self.done.wait(self.pipe.flush_s):
            self.flush()

    def close(self) -> None:
        """Store what is pending and stop the thread (before the batch's final ingest)."""
        self.done.set()
        if self.thread is not None:
            self.thread.join()
        self.flush()
        if self.store is not None:
            self.store.close()
            self.store = None

    def _drop_store(self) -> None:
        if self.store is not None:
            with contextlib.suppress(StoreError, OSError):
                self.store.close()
            self.store = None

    def flush(self) -> None:
        """Store what landed since the last flush. One thread at a time calls it (the
        loop, then ``close`` after joining it); the lock guards only ``pending``, so
        grading never waits for the database."""
        with self.lock:
            recs, self.pending = self.pending, []
        if not recs:
            return
        self.journal.sync()  # their lines are durable before anything depends on them
        try:
            if self.store is None:
                self.store = self.pipe._store()
            if self.store is None:
                return  # logged; the batch's end retries
            self.pipe.summary.stored += self.store.ingest(recs)
            self.stored.update((r.spool_id, r) for r in recs)
        except StoreError as e:  # the journal keeps them: the batch's end retries
            log.warning("storing %d results of %s failed (%s); retried at the end of "
                        "the batch", len(recs), self.batch.name, e)
            self._drop_store()  # the server may be back by the next flush
            return
        for entry in self.pipe.spool.entries_of(
                self.batch, [r.spool_id for r in recs if r.state == "graded"]):
            self.pipe.spool.finish(entry)

    def unstored(self, records: dict[str, SubmissionRecord]) -> list[SubmissionRecord]:
        """The batch's records this flush has not stored as they are now (all of them
        for a batch resumed from its journal, or when the store was away)."""
        return [r for r in records.values() if self.stored.get(r.spool_id) is not r]
