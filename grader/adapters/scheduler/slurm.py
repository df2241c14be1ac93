"""Slurm behind the Scheduler port: its command line (works with any Slurm, 22.05
included), and pyslurm where it imports (PyPI's pyslurm targets Slurm 25.11; Debian
12 ships 22.05, so the CLI is what runs there).

Also the two job queries the Slurm prolog needs (a job's CPUs on this node, its
comment), since they parse the same ``scontrol`` output.
"""

from __future__ import annotations

import logging
import re
import shutil
import socket
import subprocess
from collections.abc import Mapping
from pathlib import Path

from grader.adapters.scheduler.accounting import (
    Usage,
    explain_refusal,
    no_accounting,
    parse_usage,
    sacct_argv,
)
from grader.adapters.scheduler.base import SchedulerError, TaskState
from grader.core.cpuset import CpuSet
from grader.core.shape import Capacity

try:  # optional: PyPI's pyslurm targets Slurm 25.11 and does not build against 22.05
    import pyslurm
except ImportError:
    pyslurm = None

log = logging.getLogger(__name__)


def local_cluster_conf(state_dir: Path, slurm_conf: Path | None) -> Path | None:
    """The local cluster's slurm.conf when no site configuration is in effect."""
    if slurm_conf is not None or Path("/etc/slurm/slurm.conf").exists():
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
        # The local cluster: every command is pointed at its config (through env(1),
        # so the rest of the caller's environment passes unchanged).
        self.conf = conf

    def _run(self, argv: list[str], env: Mapping[str, str] | None = None) -> str:
        extra = {**({"SLURM_CONF": str(self.conf)} if self.conf else {}), **(env or {})}
        prefix = ["env", *(f"{k}={v}" for k, v in extra.items())] if extra else []
        r = subprocess.run([*prefix, *argv], capture_output=True, text=True, check=False,
                           timeout=60)
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
        try:
            out = self._run(["sbatch", "--parsable", str(script)], env)
        except SchedulerError as e:
            raise SchedulerError(explain_refusal(str(e), script.read_text())) from None
        return out.strip().split(";")[0]

    def tasks(self, job_id: str) -> dict[int, TaskState]:
        """Each task of array ``job_id`` (pending ones one per line: ``-r``). Plain
        text: Slurm 22.05's ``squeue --json`` ignores ``-j`` and prints every job it
        remembers (600 KB after a few hundred pilots; a tenth of a server's CPU)."""
        try:
            text = self._run(["squeue", "-h", "-r", "--states=all", "-j", job_id,
                              "-o", "%F|%K|%T|%N"])
        except SchedulerError as e:
            if "Invalid job id" in str(e):  # purged from slurmctld's memory: long over
                return {}
            raise
        return parse_tasks(text, job_id)

    def cancel(self, job_id: str) -> None:
        self._run(["scancel", job_id])

    def drain(self, node: str, reason: str) -> None:
        self._run(["scontrol", "update", f"NodeName={node}", "State=DRAIN",
                   f"Reason={reason[:200]}"])

    def total_cpus(self) -> int:
        """Usable CPUs of the nodes that are up: ``CPUEfctv`` (CPUs less the ones
        ``CpuSpecList``/``CoreSpecCount`` keep for the system), which sinfo's %C
        still counts as idle."""
        try:
            return max(1, node_cpus(self._run(["scontrol", "show", "node", "-o"])))
        except (SchedulerError, ValueError):
            return 1

    def node_addresses(self, nodelist: str) -> list[str]:
        """The IPv4 addresses of the nodes ``nodelist`` names (``n[1-2]``), as slurmd's
        ``NodeAddr`` gives them: where an MPI rank on one may connect to the others."""
        names = self._run(["scontrol", "show", "hostnames", nodelist]).split()
        addrs = node_addrs(self._run(["scontrol", "show", "node", "-o", ",".join(names)]))
        try:
            return [socket.gethostbyname(addrs.get(n, n)) for n in names]
        except OSError as e:
            raise SchedulerError(f"cannot resolve the nodes {nodelist}: {e}") from e

    def capacity(self, partition: str | None) -> Capacity:
        """What one allocation in ``partition`` can get (``node_capacity``)."""
        return node_capacity(self._run(["scontrol", "show", "node", "-o"]), partition)

    def max_array_size(self) -> int:
        for line in self._run(["scontrol", "show", "config"]).splitlines():
            if line.startswith("MaxArraySize"):
                return int(line.split("=")[1])
        return 1001

    def usage(self, since: str, accounts: list[str] | None = None) -> list[Usage]:
        """Core-hours per account and QOS since ``since`` (from the accounting database)."""
        try:
            return parse_usage(self._run(sacct_argv(since, accounts)))
        except SchedulerError as e:
            raise no_accounting(str(e)) or e from None

    # -- what the prolog asks about a job -------------------------------------------
    def job_cpus(self, job_id: str, node: str | None) -> CpuSet:
        """The job's CPUs on ``node`` from ``scontrol -d show job`` (the prolog's
        environment has no CPU list, and the job's cgroup does not exist yet)."""
        return parse_job_cpus(self._run(["scontrol", "-d", "show", "job", job_id]), job_id,
                              node)

    def job_comment(self, job_id: str) -> str:
        out = self._run(["scontrol", "show", "job", job_id])
        m = re.search(r"Comment=(\S*)", out)
        return m.group(1) if m else ""


def node_cpus(text: str) -> int:
    """Sum of the usable CPUs (``CPUEfctv``, else ``CPUTot``) of the nodes in
    ``scontrol show node -o`` that are neither down nor drained."""
    total = 0
    for line in text.splitlines():
        f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        state = f.get("State", "")
        if not f.get("NodeName") or any(b in state for b in ("DOWN", "DRAIN", "FAIL")):
            continue
        total += int(f.get("CPUEfctv") or f.get("CPUTot") or 0)
    return total


def node_capacity(text: str, partition: str | None) -> Capacity:
    """What one allocation in ``partition`` (its default one when None) can get, from
    ``scontrol show node -o``: the nodes that are up, the most usable CPUs and GPUs
    (GRES ``gpu``, typed or not) one node has."""
    nodes = cores = gpus = 0
    for line in text.splitlines():
        f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        state = f.get("State", "")
        if not f.get("NodeName") or any(b in state for b in ("DOWN", "DRAIN", "FAIL")):
            continue
        if partition and partition not in f.get("Partitions", "").split(","):
            continue
        nodes += 1
        cores = max(cores, int(f.get("CPUEfctv") or f.get("CPUTot") or 0))
        for g in f.get("Gres", "").split(","):
            m = re.match(r"gpu(?::[^:(]+)?:(\d+)", g)
            if m:
                gpus = max(gpus, int(m.group(1)))
    return Capacity(nodes, cores, gpus, f"Slurm partition {partition}" if partition
                    else "the Slurm cluster")


def node_addrs(text: str) -> dict[str, str]:
    """NodeName -> NodeAddr from ``scontrol show node -o``."""
    out = {}
    for line in text.splitlines():
        f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        if f.get("NodeName"):
            out[f["NodeName"]] = f.get("NodeAddr") or f["NodeName"]
    return out


def parse_job_cpus(text: str, job_id: str, node: str | None) -> CpuSet:
    """``CPU_IDs=`` of the job's line for ``node`` (for an array's first id scontrol
    lists every task: the first match on this node is this job's).

    :raises SchedulerError: when the text has no CPU_IDs.
    """
    matches = list(re.finditer(r"Nodes=(\S+) CPU_IDs=([\d,-]+)", text))
    for m in matches:
        if not node or node in m.group(1) or len(matches) == 1:
            return CpuSet.parse(m.group(2))
    raise SchedulerError(f"no CPU_IDs for job {job_id} in scontrol -d show job")


class PyslurmScheduler(SlurmCLI):
    """Reads job state through pyslurm (Slurm's own API) where it imports; submits
    through sbatch so that the batch script stays the single source of truth."""

    name = "pyslurm"

    def __init__(self, conf: Path | None = None) -> None:
        if pyslurm is None:
            raise ImportError("pyslurm is not installed")
        super().__init__(conf)

    def tasks(self, job_id: str) -> dict[int, TaskState]:
        out: dict[int, TaskState] = {}
        for job in pyslurm.Jobs.load().values():
            if str(getattr(job, "array_id", "")) == job_id and job.array_task_id is not None:
                out[int(job.array_task_id)] = TaskState(int(job.array_task_id), str(job.state),
                                                        str(job.nodes or ""))
        return out or super().tasks(job_id)


def parse_tasks(text: str, job_id: str) -> dict[int, TaskState]:
    """``squeue -r -o %F|%K|%T|%N`` lines of array ``job_id`` as task states (a job
    that is not an array has no tasks: its ``%K`` is N/A)."""
    out: dict[int, TaskState] = {}
    for line in text.splitlines():
        f = line.strip().split("|")
        if len(f) == 4 and f[0] == job_id and f[1].isdigit():
            out[int(f[1])] = TaskState(int(f[1]), f[2], f[3])
    return out


def detect_scheduler(conf: Path | None) -> SlurmCLI | None:
    """pyslurm if it imports, else the Slurm CLI, if a controller answers; else None.

    :param conf: the slurm.conf to use (the local cluster's), None: Slurm's default.
    """
    for cls in (PyslurmScheduler, SlurmCLI):
        try:
            sched = cls(conf)
        except (ImportError, SchedulerError) as e:
            log.debug("%s unusable: %s", cls.__name__, e)
            continue
        if sched.available():
            return sched
    return None
