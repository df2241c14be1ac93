"""Regrade after an assignment package changed: only submissions whose current
result is for another package version, each distinct content once; the earlier
results stay in the database, marked superseded."""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from grader.intake import Prepared, Rejected, prepare
from grader.pipeline import Pipeline, base_record, safe_meta
from grader.problem import Problem
from grader.spool import Entry, Spool, now_iso
from grader.store import Store

log = logging.getLogger(__name__)


def regrade(problem: Problem, course: str, spool_root: Path, db_url: str,
            cpus: Sequence[int], workroot: Path,
            progress: Callable[[int, int], None] | None = None) -> int:
    """Regrade the outdated submissions of ``problem``; returns how many got a new result."""
    spool = Spool(spool_root)
    name = time.strftime("r%Y%m%dT%H%M%S")
    batch = spool.root / "regrades" / name
    batch.mkdir(parents=True, exist_ok=True)
    with Store(db_url) as store:
        store.migrate()
        rows = store.outdated(course, problem.short_name, problem.version)
        todo: list[tuple[Prepared, dict[str, Any]]] = []
        for row in rows:
            entry = Entry(row["spool_id"], spool.dir("done") / row["spool_id"])
            if not entry.path.is_dir():
                log.error("%s: not in %s; cannot regrade it", row["spool_id"], spool.dir("done"))
                continue
            base = base_record(entry, safe_meta(entry), name, now_iso())
            try:
                prep = prepare(entry, {problem.short_name: problem})
            except Rejected as r:
                log.error("%s no longer passes intake (%s); left as it was", entry.id, r)
                continue
            todo.append((prep, {**base, "content_hash": prep.submission.content_hash,
                                "language": prep.language.id,
                                "package_path": str(problem.path)}))
        pipe = Pipeline(spool, {problem.short_name: problem}, db_url=db_url, cpus=cpus,
                        workroot=workroot, progress=progress)
        records: dict[str, dict[str, Any]] = {}
        pipe.grade_prepared(todo, records, batch / "results.jsonl", store)
        store.ingest(records.values())
    for prep, _ in todo:
        shutil.rmtree(prep.entry.path / "src", ignore_errors=True)
        (prep.entry.path / ".src-ok").unlink(missing_ok=True)
    return len(records)
