"""What a spooled submission's ``meta.json`` says, as one type with one reader: who
handed what in for which course and assignment, and when."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path


class MetaError(ValueError):
    """A spool entry's meta.json is missing, unreadable or malformed; ``known`` holds
    the fields that could be read (a quarantined entry is still listed under its
    course and student where meta.json names them)."""

    def __init__(self, message: str, known: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.known = known or {}


@dataclass(frozen=True, slots=True)
class SpoolMeta:
    """What ``meta.json`` says of a spooled submission (written once, by ``submit``).

    :param submitted_at: when the student handed it in (ISO 8601 with an offset).
    :param arrived_at: when it reached the spool (None in entries of old versions).
    :param deferred: taken past a hand-in limit (graded after every other waiting one).
    :param override: staff took it although a door refused it: who and why, and what
        was refused (``course.handin``).
    :param team: of team work, the members of the team it was handed in for, then (what
        an autograder's submission_metadata.json lists as its users).
    """

    course: str
    assignment: str
    student: str
    submitted_at: str
    arrived_at: str | None = None
    original_name: str | None = None
    deferred: bool = False
    override: str | None = None
    team: tuple[str, ...] = ()

    def to_json(self) -> dict[str, str | bool | list[str]]:
        out: dict[str, str | bool | list[str]] = {
            k: v for k, v in (("course", self.course), ("assignment", self.assignment),
                              ("student", self.student), ("submitted_at", self.submitted_at),
                              ("arrived_at", self.arrived_at),
                              ("original_name", self.original_name),
                              ("override", self.override)) if v is not None}
        if self.deferred:
            out["deferred"] = True
        if self.team:
            out["team"] = list(self.team)
        return out

    @classmethod
    def read(cls, path: Path) -> SpoolMeta:
        """The one reader of meta.json; :raises MetaError: naming what is wrong."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError) as e:
            raise MetaError(f"meta.json unreadable: {e}") from e
        if not isinstance(data, dict):
            raise MetaError("meta.json unreadable: not a JSON object")
        known = {k: v for k, v in data.items() if isinstance(v, str) and v.strip()}
        for key in ("course", "assignment", "student", "submitted_at"):
            if key not in known:
                raise MetaError(f"meta.json: {key!r} missing or not a non-empty string", known)
        for key in ("submitted_at", "arrived_at"):
            if key in data:
                try:
                    datetime.fromisoformat(data[key])
                except (TypeError, ValueError):
                    known.pop(key, None)
                    raise MetaError(f"meta.json: {key} is not an ISO 8601 time: "
                                    f"{data[key]!r}", known) from None
        name, override, team = data.get("original_name"), data.get("override"), \
            data.get("team")
        return cls(data["course"], data["assignment"], data["student"], data["submitted_at"],
                   data.get("arrived_at"), name if isinstance(name, str) else None,
                   data.get("deferred") is True,
                   override if isinstance(override, str) else None,
                   tuple(str(m) for m in team) if isinstance(team, list) else ())
