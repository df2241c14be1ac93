"""Counter samples: one event count from one source (likwid, perf, cachegrind).

Every sample carries its source, so simulated (cachegrind) and measured (likwid,
perf) numbers never mix silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Sample:
    """One event count. ``cpu`` is None for a total over the measured cores/processes."""

    source: str  # likwid | perf | cachegrind
    event: str
    value: float
    unit: str = "count"
    cpu: int | None = None
    context: str = ""  # e.g. the likwid group, or the LL size cachegrind simulated

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "event": self.event, "value": self.value,
                "unit": self.unit, "cpu": self.cpu, "context": self.context}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Sample:
        cpu = data.get("cpu")
        return cls(str(data["source"]), str(data["event"]), float(data["value"]),
                   str(data.get("unit") or "count"), None if cpu is None else int(cpu),
                   str(data.get("context") or ""))


@dataclass(frozen=True, slots=True)
class ShardSample:
    """A sample counted around one array task's whole shard, and where."""

    sample: Sample
    submissions: int  # graded in that shard (to normalise per submission)
    node: str | None = None
    array_job_id: str | None = None
    array_task_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {**self.sample.to_json(), "submissions": self.submissions, "node": self.node,
                "array_job_id": self.array_job_id, "array_task_id": self.array_task_id}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ShardSample:
        return cls(Sample.from_json(data), int(data.get("submissions") or 0), data.get("node"),
                   data.get("array_job_id"), data.get("array_task_id"))
