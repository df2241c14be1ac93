"""The exception tree: every failure gradeline reports to a user is a GradelineError.

Student faults never raise: they become verdicts. These exceptions are for our
side (bad configuration, a broken sandbox, a missing capability), so that an
infrastructure fault can never be charged to a student.
"""

from __future__ import annotations


class GradelineError(Exception):
    """Base of all errors gradeline reports to a user; the message says how to fix it."""


class ConfigError(GradelineError):
    """An assignment package, language table or option is invalid."""


class ProblemFormatError(ConfigError):
    """A problem package violates the Kattis format; names the problem and the file."""

    def __init__(self, problem: str, path: str, message: str) -> None:
        super().__init__(problem, path, message)
        self.problem = problem
        self.path = path
        self.message = message

    def __str__(self) -> str:
        return f"problem {self.problem!r}: {self.path}: {self.message}"


class SubmissionError(GradelineError):
    """A submission cannot be graded as given (no source files, unknown language)."""


class SandboxError(GradelineError):
    """The sandbox itself failed (not the program inside it): the result is JE."""


class CapabilityError(GradelineError):
    """A requested limit or runtime cannot be provided on this machine."""


class ImageError(GradelineError):
    """The grading image cannot be built or found."""


class StoreError(GradelineError):
    """The results database is unreachable or refused an operation."""


class RefusedError(GradelineError):
    """A request a student's channel refuses: forged, expired, or not theirs to ask."""
