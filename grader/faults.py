"""Named crash points, so tests can kill gradeline at the moments that matter.

Production code marks a moment with ``point("ingest-after-copy")``; unless a
test armed that point (``GRADELINE_FAULT``, read by the entry points and
passed to ``arm``), the call does nothing. Arming takes a comma-separated list
of ``point[:instance]=action``:

- ``crash``: the process exits at once with status 137, as if SIGKILLed
  (no cleanup, no ``finally``: what a power cut or OOM kill leaves behind);
- ``crash-once``: the same, the first time only (a marker file in the fault
  directory records it), so a retry succeeds;
- ``pause``: the process stops itself (SIGSTOP) until the test has done its
  part (e.g. stopped PostgreSQL) and sends SIGCONT.

An instance narrows a point to one of its occurrences, e.g.
``shard-start:shard-0=crash-once`` crashes only the first try of shard 0.
"""

from __future__ import annotations

import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from grader.core.errors import ConfigError

Action = Literal["crash", "crash-once", "pause"]
ACTIONS: tuple[Action, ...] = ("crash", "crash-once", "pause")
POINTS = ("ingest-after-copy", "before-ingest", "before-done", "shard-start", "pilot-ticket")


@dataclass(frozen=True, slots=True)
class Armed:
    point: str
    instance: str
    action: Action


_armed: tuple[Armed, ...] = ()
_marker_dir: Path | None = None


def parse(spec: str) -> tuple[Armed, ...]:
    """``"before-done=crash,shard-start:shard-0=crash-once"`` -> Armed entries.

    :raises ConfigError: on an unknown point or action.
    """
    out: list[Armed] = []
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        where, sep, action = item.partition("=")
        point, _, instance = where.partition(":")
        if not sep or point not in POINTS or action not in ACTIONS:
            raise ConfigError(f"GRADELINE_FAULT: {item!r}: want point[:instance]=action with "
                              f"point in {POINTS} and action in {ACTIONS}")
        out.append(Armed(point, instance, action))
    return tuple(out)


def arm(spec: str, marker_dir: Path | None = None) -> None:
    """Arm the points of ``spec`` for this process (entry points call it once)."""
    global _armed, _marker_dir
    _armed = parse(spec)
    _marker_dir = marker_dir


def point(name: str, instance: str = "") -> None:
    """A named moment; acts only when a test armed it."""
    for a in _armed:
        if a.point != name or (a.instance and a.instance != instance):
            continue
        if a.action == "crash-once":
            marker = (_marker_dir or Path.cwd()) / f".fault-{name}-{instance or 'any'}"
            if marker.exists():
                continue
            marker.touch()
        print(f"gradeline: fault {name}{':' + instance if instance else ''}: {a.action}",
              file=sys.stderr, flush=True)
        if a.action == "pause":
            os.kill(os.getpid(), signal.SIGSTOP)
            continue
        os._exit(137)
