"""What every runtime adapter shares: who runs the sandboxed command, which cgroups
confine it, and how the sandbox's user gets the build directory."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.adapters.sandbox.cgroups import CgroupManager


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a run's program is (None: the caller itself, as on a site)."""

    uid: int | None = None
    gid: int | None = None


AS_CALLER = Identity()


def session_members(sid: int, proc: Path = Path("/proc")) -> list[int]:
    """Processes of session ``sid``: what a container started left, including those in
    process groups of their own (Apptainer's squashfuse_ll as an ordinary user), which
    a kill of the container's process group misses and which then outlive it."""
    out = []
    for d in proc.iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
        if len(fields) > 3 and fields[3] == str(sid):  # state ppid pgrp session
            out.append(int(d.name))
    return out


def chown_tree(path: Path, uid: int, gid: int) -> None:
    """chown -R, not following links: hands a build dir to the sandbox uid."""
    os.chown(path, uid, gid)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(os.path.join(root, name), uid, gid, follow_symlinks=False)  # noqa: PTH118


class RuntimeBase:
    """The identity and cgroups half of a Sandbox; subclasses add ``run``."""

    runtime = "?"

    def __init__(self, image: Path, *, identity: Identity = AS_CALLER,
                 cgroups: CgroupManager | None = None, image_id: str = "") -> None:
        self.image = image
        self.identity = identity
        self.cgroups = cgroups
        self.image_id = image_id

    def own(self, path: Path) -> None:
        """Make ``path`` (recursively) writable by the sandbox's user."""
        if self.identity.uid is not None:
            gid = self.identity.gid if self.identity.gid is not None else self.identity.uid
            chown_tree(path, self.identity.uid, gid)

    def describe(self) -> dict[str, Any]:
        """Facts for the result record: runtime, image, uid, what enforces limits."""
        return {"runtime": self.runtime, "image": self.image_id, "path": str(self.image),
                "uid": self.identity.uid if self.identity.uid is not None else os.getuid(),
                "limits_by": self.cgroups.describe() if self.cgroups else "rlimits only"}
