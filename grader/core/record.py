"""The record of one finished spool entry: what a batch's journal holds (one JSON
line each) and what the results store ingests. One type, one JSON form, read and
written only through ``to_json`` / ``from_json``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from grader.core.result import SubmissionResult

State = Literal["graded", "quarantined"]


@dataclass(frozen=True, slots=True)
class SubmissionRecord:
    """A spool entry's identity, its latency stamps, and its result or quarantine reason.

    Stamps (UTC ISO): ``arrived_at`` (complete in the spool), ``claimed_at`` (taken
    into a batch), ``dispatched_at`` (handed to an executor), ``started_at`` /
    ``finished_at`` (grading itself). The store adds ``stored_at``.
    """

    spool_id: str
    course: str
    assignment: str
    student: str
    submitted_at: str
    batch_id: str
    state: State
    arrived_at: str
    claimed_at: str
    dispatched_at: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    content_hash: str | None = None
    language: str | None = None
    package_path: str | None = None
    quarantine_code: str | None = None
    quarantine_reason: str | None = None
    result: SubmissionResult | None = None
    reused_from: str | None = None  # spool id whose identical content was graded

    def graded(self, result: SubmissionResult, *, reused_from: str | None = None,
               started_at: str | None = None, finished_at: str | None = None
               ) -> SubmissionRecord:
        """This entry, graded with ``result``."""
        return replace(self, state="graded", result=result, reused_from=reused_from,
                       started_at=started_at or self.started_at,
                       finished_at=finished_at or self.finished_at)

    def quarantined(self, code: str, reason: str) -> SubmissionRecord:
        """This entry, refused by intake with ``code`` and a reason for people."""
        return replace(self, state="quarantined", quarantine_code=code,
                       quarantine_reason=reason, result=None)

    def to_json(self) -> dict[str, Any]:
        body = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "result"}
        body["result"] = self.result.to_dict() if self.result is not None else None
        return body

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SubmissionRecord:
        """:raises ValueError, KeyError: on a record of another shape."""
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in data.items() if k in names and k != "result"}
        res = data.get("result")
        return cls(**kw, result=SubmissionResult.from_dict(res) if res else None)

