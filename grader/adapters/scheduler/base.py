"""What gradeline asks of a batch system: submit one array job, see its tasks'
states, cancel it. Any Slurm (22.05 included) through its CLI, or pyslurm."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from grader.core.errors import GradelineError

#: Task states after which a task will not run again by itself.
FINAL_STATES = frozenset({"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
                          "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "SPECIAL_EXIT"})


class SchedulerError(GradelineError):
    """The batch system refused or failed a request."""


@dataclass(frozen=True, slots=True)
class TaskState:
    """One array task as the scheduler sees it."""

    task_id: int
    state: str
    node: str = ""
    exit_code: int | None = None

    @property
    def final(self) -> bool:
        return self.state in FINAL_STATES


class Scheduler(Protocol):
    """What gradeline asks of a batch system."""

    name: str

    def submit(self, script: Path, *, env: Mapping[str, str] | None = None) -> str:
        """Submit a batch script (its #SBATCH lines say the array); return the job id."""
        ...

    def tasks(self, job_id: str) -> dict[int, TaskState]:
        """The array tasks known for ``job_id`` (pending ones may be folded together)."""
        ...

    def cancel(self, job_id: str) -> None: ...

    def drain(self, node: str, reason: str) -> None:
        """Take ``node`` out of scheduling (running jobs finish), with the reason admins
        see; :raises SchedulerError: when this account may not."""
        ...

    def max_array_size(self) -> int: ...

    def total_cpus(self) -> int:
        """CPUs in the partition(s) this user can submit to."""
        ...
