"""What crosses the seam between the pipeline and whoever grades: a job in, an
outcome out. An outcome is a result, or a judge fault with its reason -- never a
bare string, so a fault can never be mistaken for a verdict."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from grader.core.result import SubmissionResult


def now_iso() -> str:
    """A UTC time stamp with microseconds (the form every stamp of ours uses)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


@dataclass(frozen=True, slots=True)
class GradingJob:
    """One submission to grade.

    :param problem: the assignment package directory.
    :param source: the submission (a file, or a directory of files); its path is
        the job's key, unique within a batch.
    :param language: a language id, or None to detect it from the file names.
    :param time_limit_s: grade with this time limit instead of the package's (``gradeline
        check`` measuring a package whose limit is still to be derived).
    :param groups: run only these test groups (a course's visible phase); None: all.
    :param student: who handed it in, and ``submitted_at`` when (what an autograder
        reads in submission_metadata.json); None when unknown (a manifest, a check).
    """

    problem: Path
    source: Path
    language: str | None = None
    time_limit_s: float | None = None
    groups: tuple[str, ...] | None = None
    student: str | None = None
    submitted_at: str | None = None
    #: compile it and run nothing (a self-check of a GPU assignment where no GPU is)
    compile_only: bool = False
    #: run its performance tests only (an on-demand measurement: the visible tests
    #: accepted it before)
    performance_only: bool = False
    #: of team work, the team's members when it was handed in (an autograder's users)
    team: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return str(self.source)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"problem": str(self.problem), "submission": str(self.source),
                               "language": self.language}
        if self.time_limit_s is not None:
            out["time_limit_s"] = self.time_limit_s
        if self.groups is not None:
            out["groups"] = list(self.groups)
        for key in ("student", "submitted_at"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.compile_only:
            out["compile_only"] = True
        if self.performance_only:
            out["performance_only"] = True
        if self.team:
            out["team"] = list(self.team)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GradingJob:
        problem, source = Path(data["problem"]), Path(data["submission"])
        tl = data.get("time_limit_s")
        groups = data.get("groups")
        return cls(problem, source, data.get("language"), float(tl) if tl is not None else None,
                   tuple(str(g) for g in groups) if groups is not None else None,
                   data.get("student"), data.get("submitted_at"),
                   data.get("compile_only") is True, data.get("performance_only") is True,
                   tuple(str(m) for m in data.get("team") or ()))


@dataclass(frozen=True, slots=True)
class JudgeFault:
    """A job that got no verdict, and why.

    :param cause: ``judge`` -- our side failed (the sandbox broke, a task was lost):
        recorded as JE, regraded later, never charged to the student;
        ``submission`` -- it cannot be graded as given (no source file of an accepted
        language, unreadable files): recorded as CE with the reason.
    """

    reason: str
    cause: Literal["judge", "submission"] = "judge"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one job, with when it started and finished (UTC ISO stamps)."""

    key: str
    result: SubmissionResult | JudgeFault
    started_at: str = ""
    finished_at: str = ""

    @property
    def fault(self) -> JudgeFault | None:
        return self.result if isinstance(self.result, JudgeFault) else None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = (
            {"judge_fault": self.result.reason, "cause": self.result.cause}
            if isinstance(self.result, JudgeFault)
            else self.result.to_dict())
        return {"submission": self.key, "result": body, "started_at": self.started_at,
                "finished_at": self.finished_at}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Outcome:
        """:raises ValueError: on a line that is neither a result nor a fault."""
        body = data["result"]
        if not isinstance(body, Mapping):
            raise ValueError(f"outcome of {data.get('submission')!r} is not an object")
        result: SubmissionResult | JudgeFault = (
            JudgeFault(str(body["judge_fault"]),
                       "submission" if body.get("cause") == "submission" else "judge")
            if "judge_fault" in body
            else SubmissionResult.from_dict(body))
        return cls(str(data["submission"]), result, str(data.get("started_at") or ""),
                   str(data.get("finished_at") or ""))
