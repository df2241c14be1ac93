"""Performance measured on demand (``course.ondemand``), the serving side: every
request the desk took and the store holds as waiting is measured -- the submission's
performance tests only (``Problem.performance_only``), graded from its payload in
``spool/done`` like a regrade's preview, through the bulk pipeline the caller gives (the
course's bulk priority) -- and what it gave is kept with the request, never as the
submission's result. A measurement that failed on our side (a judge error, files gone)
gives the student's token back. Idempotent: a request is finished once."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from grader.core.result import SubmissionResult
from grader.core.verdict import Verdict
from grader.course.load import Course
from grader.course.ondemand import Measured
from grader.formats.problem import Problem
from grader.pipeline.ports import MeasurementStore
from grader.pipeline.regrade import preview
from grader.pipeline.run import Pipeline

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Measurements:
    """What one pass did: requests measured, failed (the submission's fault: it did not
    compile) and refunded (ours)."""

    measured: int = 0
    failed: int = 0
    refunded: int = 0

    @property
    def done(self) -> int:
        return self.measured + self.failed + self.refunded


def measure_waiting(pipe: Pipeline, course: Course, problems: Mapping[str, Problem],
                    store: MeasurementStore) -> Measurements:
    """Measure the course's waiting requests (``problems``: the full packages)."""
    store.migrate()
    waiting = store.waiting_measurements(course.name)
    counts = {"measured": 0, "failed": 0, "refunded": 0}
    for name in sorted({m.assignment for m in waiting}):
        mine = [m for m in waiting if m.assignment == name]
        problem = problems.get(name)
        if problem is None or problem.performance is None:
            for m in mine:  # the package lost its performance tests meanwhile
                store.finish_measurement(m.id, "refunded",
                                         reason=f"{name} has no performance tests now")
                counts["refunded"] += 1
            continue
        records = preview(pipe, problem.performance_only(), store,
                          sorted({m.spool_id for m in mine}))
        for m in mine:
            rec = records.get(m.spool_id)
            state = _finish(store, m, rec.result if rec is not None else None)
            counts[state] += 1
    return Measurements(counts["measured"], counts["failed"], counts["refunded"])


def _finish(store: MeasurementStore, m: Measured, result: SubmissionResult | None) -> str:
    """Keep what ``m``'s measurement gave; the state it ended in."""
    if result is None:
        store.finish_measurement(m.id, "refunded", reason="the submission's files are no "
                                                         "longer in the spool")
        return "refunded"
    if result.verdict is Verdict.JE:
        log.error("measuring %s for %s failed on our side: %s", m.spool_id, m.student,
                  result.message)
        store.finish_measurement(m.id, "refunded", reason="the measurement failed on our "
                                                         "side; staff are told")
        return "refunded"
    if result.performance is None:
        why = result.message or (result.compile.output[:300] if result.compile else "")
        store.finish_measurement(m.id, "failed", reason=f"not measured: {why}")
        return "failed"
    store.finish_measurement(m.id, "measured", result.performance)
    return "measured"
