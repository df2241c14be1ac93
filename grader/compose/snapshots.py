"""The live snapshot's source, wired (apart from ``read_side``: numpy loads only for
``gradeline web`` and ``status --watch``)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime

from grader.adapters.store.postgres import Store
from grader.compose.context import Context
from grader.core.errors import GradelineError
from grader.course.staffview import Snapshot
from grader.views.snapshot import snapshot


def snapshots(ctx: Context, window_s: float) -> Callable[[], Snapshot]:
    """The live snapshot of the course's grading, read from the store and the spool
    afresh at each call (it survives a database restart: the page says so meanwhile)."""
    spool, course, url = ctx.spool(), ctx.course(), ctx.db_url()

    def current() -> Snapshot:
        since = datetime.fromtimestamp(time.time() - window_s - 3600, UTC)
        try:
            with Store(url) as store:
                rows = store.finished(course, since)
        except GradelineError as e:
            rows = []
            print(f"gradeline: {e}", file=sys.stderr)
        waiting = len(spool.new_entries())
        in_progress = sum(len(spool.batch_entries(b)) for b in spool.batches())
        return snapshot(course, rows, waiting=waiting, in_progress=in_progress,
                        window_s=window_s)

    return current
