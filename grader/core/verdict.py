"""Verdicts and the pure functions that decide them (no files, no processes).

The check order is DOMjudge's: judge faults first (never charged to the student),
then time, memory, output limit, run error, and only then the validator's answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from grader.core.runmeta import RunMeta, TerminationReason


class Verdict(StrEnum):
    """The closed set of outcomes, Kattis/ICPC names."""

    AC = "AC"  # accepted
    WA = "WA"  # wrong answer
    TLE = "TLE"  # time limit exceeded (CPU or wall clock)
    MLE = "MLE"  # memory limit exceeded
    RE = "RE"  # run-time error (signal or non-zero exit)
    OLE = "OLE"  # output limit exceeded
    CE = "CE"  # compile error (incl. compile limits exceeded)
    JE = "JE"  # judge error: our fault, never the student's


#: Names used by the Kattis ``submissions/<dir>/`` convention, and gradeline's extensions.
EXPECTED_DIRS: dict[str, Verdict] = {
    "accepted": Verdict.AC,
    "wrong_answer": Verdict.WA,
    "time_limit_exceeded": Verdict.TLE,
    "run_time_error": Verdict.RE,
    "memory_limit_exceeded": Verdict.MLE,
    "output_limit_exceeded": Verdict.OLE,
    "compile_error": Verdict.CE,
}


@dataclass(frozen=True, slots=True)
class Validation:
    """An output validator's answer.

    :param accepted: True (exit 42), False (exit 43), None when the validator
        itself failed; then ``judge_error`` says why.
    """

    accepted: bool | None
    feedback: str = ""
    judge_error: str | None = None
    score: float | None = None  # course points: a fraction in [0, 1] (score.txt)
    score_txt: float | None = None  # Kattis: score.txt as written (an absolute score)
    multiplier: float | None = None  # Kattis: score_multiplier.txt


def determine_verdict(meta: RunMeta, validation: Validation | None) -> Verdict:
    """The verdict of one test run.

    ``validation`` is None when the run did not end cleanly (it is then not
    validated). Order: TLE > MLE > OLE > RE > validator answer > JE.
    """
    if meta.termination in (TerminationReason.CPU_TIME, TerminationReason.WALL_TIME):
        return Verdict.TLE
    if meta.termination is TerminationReason.MEMORY:
        return Verdict.MLE
    if meta.termination is TerminationReason.OUTPUT:
        return Verdict.OLE
    if meta.signal is not None or meta.exit_code != 0:
        return Verdict.RE
    if validation is None:
        return Verdict.JE
    if validation.judge_error is not None or validation.accepted is None:
        return Verdict.JE
    return Verdict.AC if validation.accepted else Verdict.WA


def submission_verdict(test_verdicts: Sequence[Verdict], *, compiled: bool = True) -> Verdict:
    """The verdict of a whole submission.

    CE when it did not compile; JE when any test hit a judge error (so the
    result is redone, never charged); otherwise the verdict of the first failing
    test in test order (Kattis's rule); AC when all pass. A submission with no
    tests at all is a judge error: the package is broken.
    """
    if not compiled:
        return Verdict.CE
    if not test_verdicts or Verdict.JE in test_verdicts:
        return Verdict.JE
    for v in test_verdicts:
        if v is not Verdict.AC:
            return v
    return Verdict.AC
