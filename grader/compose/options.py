"""What one invocation asked for with its flags: the first of the configuration
sources (``grader.compose``). None means "not given": the settings, then the course
file, then the default decide."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from grader.pipeline.slurm.tickets import PilotSpec

PILOT = PilotSpec()  # its defaults


@dataclass(frozen=True, slots=True)
class Options:
    """A command's flags, typed (see ``cli.common.options_from`` for the mapping).

    :param dispatch: how batches reach Slurm: pilot tasks pulling work, or an array
        job per batch.
    :param retries: how many times a Slurm task that failed on our side is resubmitted.
    """

    spool: Path | None = None
    course: str | None = None
    course_file: Path | None = None
    assignments: tuple[Path, ...] = ()
    executor: Literal["auto", "local", "slurm"] | None = None
    dispatch: Literal["pilots", "arrays"] = "arrays"
    pilots: int | None = None
    pilot_idle_s: float = PILOT.idle_s
    pilot_minutes: int = PILOT.minutes
    cpus_per_task: int = 1
    shard_size: int | None = None
    throttle: int | None = None
    partition: str | None = None
    retries: int = 2
