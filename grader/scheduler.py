"""Batch schedulers behind one interface: the Slurm command line (works with any
Slurm, 22.05 included), and pyslurm where it imports (PyPI's pyslurm targets
Slurm 25.11; Debian 12 ships 22.05, so the CLI is what runs there).

Only what gradeline needs: submit one array job, see its tasks' states, cancel.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from grader.errors import GradelineError

log = logging.getLogger(__name__)

#: Task states after which a task will not run again by itself.
FINAL_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
                "PREEMPTED", "BOOT_FAIL", "DEADLINE", "SPECIAL_EXIT"}


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

    def max_array_size(self) -> int: ...

    def total_cpus(self) -> int:
        """CPUs in the partition(s) this user can submit to."""
        ...


def local_cluster_conf(state_dir: Path) -> Path | None:
    """The local cluster's slurm.conf when no site configuration is in effect."""
    if os.environ.get("SLURM_CONF") or Path("/etc/slurm/slurm.conf").exists():
        return None
    conf = state_dir / "slurm" / "slurm.conf"
    return conf if conf.exists() else None


class SlurmCLI:
    """Slurm through sbatch --parsable, squeue --json, scontrol and scancel."""

    name = "slurm-cli"

    def __init__(self, conf: Path | None = None) -> None:
        if shutil.which("sbatch") is None:
            raise SchedulerError("sbatch not found: install slurm-client, or run "
                                 "slurm/local-cluster.sh start for a local cluster")
        self.env = dict(os.environ)
        if conf is not None:
            self.env["SLURM_CONF"] = str(conf)

    def _run(self, argv: list[str], env: Mapping[str, str] | None = None) -> str:
        r = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60,
                           env={**self.env, **(env or {})})
        if r.returncode != 0:
            raise SchedulerError(f"{' '.join(argv[:2])} failed: {r.stderr.strip()}")
        return r.stdout

    def available(self) -> bool:
        try:
            self._run(["scontrol", "ping"])
            return True
        except (SchedulerError, OSError, subprocess.TimeoutExpired):
            return False

    def submit(self, script: Path, *, env: Mapping[str, str] | None = None) -> str:
        out = self._run(["sbatch", "--parsable", str(script)], env)
        return out.strip().split(";")[0]

    def tasks(self, job_id: str) -> dict[int, TaskState]:
        data = json.loads(self._run(["squeue", "--json", "--states=all", "-j", job_id]))
        out: dict[int, TaskState] = {}
        for j in data.get("jobs", []):
            if str(j.get("array_job_id")) != job_id and str(j.get("job_id")) != job_id:
                continue
            tid = j.get("array_task_id")
            if tid is None or tid == "" or (isinstance(tid, int) and tid > 1_000_000):
                # Pending tasks are one record with a task string like "3-9%2".
                for t in _expand(str(j.get("array_task_string") or "")):
                    out.setdefault(t, TaskState(t, str(j.get("job_state"))))
                continue
            out[int(tid)] = TaskState(int(tid), str(j.get("job_state")), str(j.get("nodes", "")),
                                      j.get("exit_code"))
        return out

    def cancel(self, job_id: str) -> None:
        self._run(["scancel", job_id])

    def total_cpus(self) -> int:
        try:  # sinfo %C is "allocated/idle/other/total"
            return max(int(x.split("/")[3]) for x in
                       self._run(["sinfo", "-h", "-o", "%C"]).split())
        except (SchedulerError, ValueError, IndexError):
            return 1

    def max_array_size(self) -> int:
        for line in self._run(["scontrol", "show", "config"]).splitlines():
            if line.startswith("MaxArraySize"):
                return int(line.split("=")[1])
        return 1001


def _expand(spec: str) -> list[int]:
    """"0-3,7,9-10%2" -> [0, 1, 2, 3, 7, 9, 10]."""
    out: list[int] = []
    for part in spec.split("%")[0].split(","):
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


class PyslurmScheduler(SlurmCLI):
    """Reads job state through pyslurm (Slurm's own API) where it imports; submits
    through sbatch so that the batch script stays the single source of truth."""

    name = "pyslurm"

    def __init__(self, conf: Path | None = None) -> None:
        super().__init__(conf)
        import pyslurm  # noqa: F401 -- raises ImportError where unusable

    def tasks(self, job_id: str) -> dict[int, TaskState]:
        import pyslurm

        out: dict[int, TaskState] = {}
        for job in pyslurm.Jobs.load().values():
            if str(getattr(job, "array_id", "")) == job_id and job.array_task_id is not None:
                out[int(job.array_task_id)] = TaskState(int(job.array_task_id), str(job.state),
                                                        str(job.nodes or ""))
        return out or super().tasks(job_id)


def detect_scheduler(state_dir: Path) -> SlurmCLI | None:
    """pyslurm if it imports, else the Slurm CLI, if a controller answers; else None."""
    conf = local_cluster_conf(state_dir)
    for cls in (PyslurmScheduler, SlurmCLI):
        try:
            sched = cls(conf)
        except (ImportError, SchedulerError) as e:
            log.debug("%s unusable: %s", cls.__name__, e)
            continue
        if sched.available():
            return sched
    return None
