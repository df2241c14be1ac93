"""Slurm's accounting (``sacct`` over slurmdbd): the core-hours each course's account
used, per QOS, so staff and admins see what live feedback and bulk grading cost.

``CPUTimeRAW`` is what fair share charges (allocated CPUs x elapsed seconds), not the
CPU the programs burned: a core a pilot held while idle is a core nobody else had.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from grader.adapters.scheduler.base import SchedulerError

#: what ``sacct`` is asked for, one allocation per line (``-X``), ``|``-separated
SACCT_FIELDS = "Account,QOS,CPUTimeRAW,JobID"


@dataclass(frozen=True, slots=True)
class Usage:
    """One account's use under one QOS."""

    account: str
    qos: str
    jobs: int  # allocations: an array task counts as one
    core_seconds: int

    @property
    def core_hours(self) -> float:
        return self.core_seconds / 3600


def sacct_argv(since: str, accounts: list[str] | None = None) -> list[str]:
    """Every user's allocations (``-a``) since ``since`` (Slurm's time format)."""
    argv = ["sacct", "-X", "-a", "-n", "-P", "-S", since, "-E", "now", "-o", SACCT_FIELDS]
    return argv + (["-A", ",".join(accounts)] if accounts else [])


def parse_usage(text: str) -> list[Usage]:
    """``sacct -P -o Account,QOS,CPUTimeRAW,JobID`` lines, summed per (account, QOS)."""
    jobs: dict[tuple[str, str], int] = defaultdict(int)
    secs: dict[tuple[str, str], int] = defaultdict(int)
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) < 3 or not parts[2].strip().isdigit():
            continue
        key = (parts[0] or "(none)", parts[1] or "(none)")
        jobs[key] += 1
        secs[key] += int(parts[2])
    return [Usage(a, q, jobs[(a, q)], secs[(a, q)]) for a, q in sorted(jobs)]


def no_accounting(stderr: str) -> SchedulerError | None:
    """The error for a cluster without slurmdbd, in words an admin acts on."""
    if "accounting storage is disabled" in stderr:
        return SchedulerError("this cluster keeps no job accounting (no slurmdbd): per-"
                              "course core-hours need AccountingStorageType="
                              "accounting_storage/slurmdbd (locally: slurm/local-cluster.sh"
                              " start --accounting)")
    return None


def explain_refusal(error: str, script: str) -> str:
    """sbatch's refusal of an account or QOS, with the name it refused and the remedy
    (the message of Slurm 22.05 names neither)."""
    asked = dict(line.removeprefix("#SBATCH --").split("=", 1) for line in script.splitlines()
                 if line.startswith("#SBATCH --") and "=" in line)
    for key, words in (("account", "Invalid account"), ("qos", "Invalid qos")):
        if words in error:
            value = asked.get(key, "(the user's default)")
            return (f"{error} -- Slurm refused {key} {value}: the course file's slurm: "
                    f"(or bulk:) {key} must be one this user may charge (sacctmgr show assoc "
                    "user=$USER); the submissions wait in the spool for the next run")
    return error
