"""The spool-to-database run: every spooled submission ends graded (stored) or
quarantined (with its reason), exactly once, even across crashes and outages.

Per batch, the durable record is ``spool/cur/<batch>/results.jsonl``: one line per
finished entry (result or quarantine reason), appended and fsync'd as it
happens. A re-run resumes unfinished batches first: it grades only entries
without a line, ingests the file (idempotent), and only then moves entries to
``done/``. When the database is down, results wait in that file for the next run.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import secrets
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from grader.errors import StoreError
from grader.intake import Prepared, Rejected, prepare
from grader.pool import Graded, LocalExecutor
from grader.problem import Problem
from grader.result import judge_error_result
from grader.spool import Entry, Spool, now_iso
from grader.store import Store

log = logging.getLogger(__name__)
RESULTS = "results.jsonl"


class Executor(Protocol):
    """Where grading jobs run: this machine's CPUs, or a Slurm array."""

    def run(self, jobs: Sequence[tuple[Path, Path, str | None]]) -> Iterator[Graded]: ...

    def collected(self) -> Iterator[Graded]: ...

    def wait_active(self) -> None: ...


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


def append_record(path: Path, record: Mapping[str, Any]) -> None:
    """Append one JSON line and fsync it: once this returns, the line survives a crash."""
    line = (json.dumps(record, separators=(",", ":")) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def read_records(path: Path) -> dict[str, dict[str, Any]]:
    """The records of a batch by spool id; a torn last line (crash mid-write) is ignored."""
    out: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return out
    for line in path.read_bytes().split(b"\n"):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            log.warning("%s: ignoring a torn line (crash while writing)", path)
            continue
        out[rec["spool_id"]] = rec
    return out


def base_record(entry: Entry, meta: Mapping[str, Any], batch: str, claimed_at: str
                 ) -> dict[str, Any]:
    return {
        "spool_id": entry.id, "course": meta.get("course") or "unknown",
        "assignment": meta.get("assignment") or "unknown",
        "student": meta.get("student") or "unknown",
        "submitted_at": meta.get("submitted_at") or claimed_at,
        "arrived_at": meta.get("arrived_at") or meta.get("submitted_at") or claimed_at,
        "claimed_at": claimed_at, "batch_id": batch,
    }


def safe_meta(entry: Entry) -> dict[str, Any]:
    try:
        meta = entry.meta()
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return {k: v for k, v in meta.items() if isinstance(v, str)}


class Pipeline:
    """Spool intake -> grading -> store, for one spool and a set of assignments."""

    def __init__(self, spool: Spool, problems: Mapping[str, Problem], *, db_url: str | None,
                 cpus: Sequence[int], workroot: Path,
                 progress: Callable[[int, int], None] | None = None,
                 fault: str | None = None,
                 executor: Callable[[Path], Executor] | None = None,
                 dedupe: bool = True) -> None:
        self.spool = spool
        self.problems = problems
        self.db_url = db_url
        self.cpus = cpus
        self.workroot = workroot
        self.progress = progress
        self.fault = fault or os.environ.get("GRADELINE_FAULT")
        self.summary = RunSummary()
        self.dedupe = dedupe
        self.executor = executor or (lambda _batch: LocalExecutor(cpus, workroot, progress))

    def _store(self) -> Store | None:
        if self.db_url is None:
            return None
        try:
            store = Store(self.db_url)
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
                self._process(self.spool.dir("cur") / name, store)
        finally:
            if store is not None:
                store.close()
        self.summary.elapsed_s = time.monotonic() - t0
        return self.summary

    def claim(self, batch_size: int | None = None) -> str | None:
        """Claim new submissions into a fresh batch; its name, or None when none wait."""
        if not self.spool.new_entries():
            return None
        name = time.strftime("b%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)
        self.spool.claim(name, batch_size)
        return name

    def stage(self, batch_name: str, *, ingest: bool) -> RunSummary:
        """One workflow stage for one batch: grade it (results.jsonl), or also store it."""
        t0 = time.monotonic()
        batch = self.spool.dir("cur") / batch_name
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

    def _process(self, batch: Path, store: Store | None, *, ingest: bool = True) -> None:
        results_file = batch / RESULTS
        records = read_records(results_file)
        claimed_at = now_iso()
        entries = self.spool.batch_entries(batch)
        if store is not None:
            # Stored before a crash that came before the move to done/: just move.
            already = store.stored_spool_ids([e.id for e in entries])
            for e in entries:
                if e.id in already:
                    self._finish(e)
            entries = [e for e in entries if e.id not in already]
        todo: list[tuple[Prepared, dict[str, Any]]] = []
        for e in entries:
            if e.id in records:
                continue
            base = base_record(e, safe_meta(e), batch.name, claimed_at)
            try:
                prep = prepare(e, self.problems)
            except Rejected as r:
                rec = {**base, "state": "quarantined", "quarantine_code": str(r.code),
                       "quarantine_reason": r.message}
                append_record(results_file, rec)
                records[e.id] = rec
                self.spool.quarantine(e, str(r.code), r.message)
                self.summary.quarantined += 1
                continue
            todo.append((prep, {**base, "content_hash": prep.submission.content_hash,
                                "language": prep.language.id,
                                "package_path": str(prep.problem.path)}))
        self.grade_prepared(todo, records, results_file, store)
        if not ingest:
            return
        if store is None:
            self.summary.pending_batches.append(batch.name)
            return
        if self.fault == "stop-db-before-ingest":  # test hook: the server goes away here
            from grader.pgserver import LocalServer
            LocalServer(Path(os.environ["GRADELINE_FAULT_STOP_DIR"])).stop("immediate")
        try:
            self.summary.stored += store.ingest(records.values(), fault=self._fault("ingest"))
        except StoreError as e:
            log.error("ingest of %s failed (%s); it stays in %s for the next run",
                      batch.name, e, results_file)
            self.summary.pending_batches.append(batch.name)
            return
        if self.fault == "before-done":
            os._exit(137)
        for entry in self.spool.batch_entries(batch):
            if entry.id in records:
                self._finish(entry)
        self.spool.close_batch(batch)

    def _fault(self, stage: str) -> str | None:
        return "after-copy" if self.fault == f"{stage}-after-copy" else None

    def _finish(self, e: Entry) -> None:
        shutil.rmtree(e.path / "src", ignore_errors=True)  # payload/ stays: regrades need it
        (e.path / ".src-ok").unlink(missing_ok=True)
        self.spool.finish(e)

    def grade_prepared(self, todo: list[tuple[Prepared, dict[str, Any]]],
               records: dict[str, dict[str, Any]], results_file: Path,
               store: Store | None) -> None:
        """Grade each distinct (assignment version, content) once; reuse for the rest."""
        executor = self.executor(results_file.parent)
        executor.wait_active()  # arrays an interrupted run left behind
        recovered = {g.submission: g for g in executor.collected()}
        first: dict[tuple[str, str, str], str] = {}
        jobs: list[tuple[Path, Path, str | None]] = []
        waiting: dict[str, tuple[Prepared, dict[str, Any]]] = {}
        reuse: list[tuple[dict[str, Any], str, dict[str, Any]]] = []
        for prep, base in todo:
            # Without dedupe every entry is its own key, so nothing is shared.
            key = (prep.problem.version, prep.submission.content_hash,
                   "" if self.dedupe else prep.entry.id)
            hit = store.reusable(key[0], key[1]) if store is not None and self.dedupe else None
            if hit is not None:
                reuse.append((base, hit[0], hit[1]))
                continue
            if key in first:
                waiting[prep.entry.id] = (prep, base)
                base["reused_from_spool"] = first[key]
                continue
            first[key] = prep.entry.id
            base["dispatched_at"] = now_iso()
            waiting[prep.entry.id] = (prep, base)
            if str(prep.entry.path / "src") not in recovered:
                jobs.append((prep.problem.path, prep.entry.path / "src", prep.language.id))
        for base, src_id, record in reuse:
            self._record(records, results_file, base, record, reused_from=src_id)
        by_src = {str(p.entry.path / "src"): p.entry.id for p, _ in waiting.values()}
        graded: dict[str, dict[str, Any]] = {}
        outcomes = [g for g in recovered.values() if g.submission in by_src]
        for g in itertools.chain(outcomes, executor.run(jobs)):
            sid = by_src[g.submission]
            prep, base = waiting[sid]
            if isinstance(g.result, str):
                log.error("%s could not be graded: %s -- recorded as JE", sid, g.result)
                rec = judge_error_result(prep.problem, f"spool:{sid}",
                                         prep.submission.content_hash, prep.language.id,
                                         g.result).to_dict()
            else:
                rec = g.result.to_dict()
            graded[sid] = rec
            self._record(records, results_file, {**base, "started_at": g.started_at or None,
                                                 "finished_at": g.finished_at or None}, rec)
            self.summary.graded += 1
        for _prep, base in waiting.values():
            src = base.get("reused_from_spool")
            if src is not None and src in graded:
                self._record(records, results_file, base, graded[src], reused_from=src)

    def _record(self, records: dict[str, dict[str, Any]], results_file: Path,
                base: dict[str, Any], result: dict[str, Any], reused_from: str | None = None
                ) -> None:
        result = {**result, "submission": f"spool:{base['spool_id']}"}
        if reused_from is not None:
            result["message"] = f"identical to submission {reused_from} for this assignment " \
                                "version: its result was reused, not graded again"
            self.summary.reused += 1
        rec = {**base, "state": "graded", "result": result,
               "reused_from_spool": reused_from}
        append_record(results_file, rec)
        records[base["spool_id"]] = rec
        a = base["assignment"]
        self.summary.verdicts.setdefault(a, {})
        self.summary.verdicts[a][result["verdict"]] = \
            self.summary.verdicts[a].get(result["verdict"], 0) + 1
        self.summary.scores.setdefault(a, []).append(float(result["score"]))
