"""Reading a Gradescope autograder's ``results.json`` (its public specification,
"Autograder Specifications": https://gradescope-autograders.readthedocs.io/en/latest/specs/).

An autograder written for Gradescope is the course's own code, and a student's
submission runs beside it: the file is untrusted input. Anything that is not what the
specification describes (not JSON, too big, a score that is not a number, a test
without a name) is a :class:`ResultsError` whose message says what and where; the
caller turns it into a judge error, never a crash and never a score.

What is honoured (the rest, ``extra_data``, formats and tags, is read past):
- ``score`` at the top: the submission's score when given, else the tests' sum;
- ``tests[]``: ``name`` (or ``number``), ``score``, ``max_score``, ``status``
  (``passed``/``failed``; when absent, passed iff score >= max_score), ``output``,
  ``visibility``;
- ``visibility`` at the top (a default for tests that give none) and
  ``stdout_visibility``; ``output`` at the top; ``execution_time``;
- ``leaderboard[]``: ``name``, ``value``, ``order``.
"""

from __future__ import annotations

import contextlib
import json
import math
from dataclasses import dataclass
from typing import Any

from grader.core.errors import GradelineError
from grader.core.result import FEEDBACK_LIMIT, TestResult
from grader.core.verdict import Verdict
from grader.core.visibility import COURSE_VISIBILITY

#: a results.json larger than this is refused (Gradescope's own uploads are bounded too)
MAX_BYTES = 1 << 20
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")


class ResultsError(GradelineError):
    """results.json is missing, malformed or too big: a judge error, with the reason."""


@dataclass(frozen=True, slots=True)
class GsTest:
    """One entry of ``tests[]``."""

    name: str
    score: float | None
    max_score: float | None
    passed: bool
    output: str
    visibility: str


@dataclass(frozen=True, slots=True)
class GsResults:
    """What a results.json says, checked."""

    score: float
    max_score: float | None  # the tests' max_score summed, when every test gives one
    tests: tuple[GsTest, ...]
    output: str
    visibility: str
    stdout_visibility: str
    execution_time_s: float | None
    leaderboard: tuple[tuple[str, float | str, str], ...]


def _number(value: Any, where: str, *, optional: bool = True) -> float | None:
    """A number, or a string that is one: Gradescope takes both, and gradescope-utils'
    JSONTestRunner writes ``execution_time`` as a string ("0.06")."""
    if value is None and optional:
        return None
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = float(value.strip())
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ResultsError(f"results.json: {where} is {value!r}, not a number")
    return float(value)


def _text(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ResultsError(f"results.json: {where} is a {type(value).__name__}, not text")
    return value[:FEEDBACK_LIMIT]


def _visibility(value: Any, where: str, default: str) -> str:
    if value is None:
        return default
    if value not in VISIBILITIES:
        raise ResultsError(f"results.json: {where} is {value!r}; one of {', '.join(VISIBILITIES)}")
    return str(value)


def _test(t: Any, i: int, default_visibility: str) -> GsTest:
    where = f"tests[{i}]"
    if not isinstance(t, dict):
        raise ResultsError(f"results.json: {where} is not an object")
    name = t.get("name")
    if name is None and t.get("number") is not None:
        name = str(t["number"])
    if not isinstance(name, str) or not name.strip():
        name = f"test {i + 1}"
    score = _number(t.get("score"), f"{where}.score")
    max_score = _number(t.get("max_score"), f"{where}.max_score")
    status = t.get("status")
    if status not in (None, "passed", "failed"):
        raise ResultsError(f"results.json: {where}.status is {status!r}; passed or failed")
    if status is None:  # the spec: derived from the scores
        passed = score is not None and max_score is not None and score >= max_score
    else:
        passed = status == "passed"
    return GsTest(name=name[:200], score=score, max_score=max_score, passed=passed,
                  output=_text(t.get("output"), f"{where}.output"),
                  visibility=_visibility(t.get("visibility"), f"{where}.visibility",
                                         default_visibility))


def parse_results(data: bytes) -> GsResults:
    """The checked content of a results.json; :raises ResultsError: with the reason."""
    if len(data) > MAX_BYTES:
        raise ResultsError(f"results.json is {len(data)} bytes, over the {MAX_BYTES} allowed")
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise ResultsError(f"results.json is not JSON: {e}") from None
    if not isinstance(doc, dict):
        raise ResultsError("results.json is not a JSON object")
    visibility = _visibility(doc.get("visibility"), "visibility", "visible")
    raw_tests = doc.get("tests", [])
    if not isinstance(raw_tests, list):
        raise ResultsError("results.json: tests is not a list")
    tests = tuple(_test(t, i, visibility) for i, t in enumerate(raw_tests))
    score = _number(doc.get("score"), "score")
    # a test with neither score nor max_score only reports (Otter's "Public Tests", say);
    # Gradescope shows it and adds nothing for it
    scored = [t for t in tests if t.score is not None or t.max_score is not None]
    if score is None:
        if not scored or any(t.score is None for t in scored):
            raise ResultsError("results.json has no score, and not every test that is worth "
                               "points has one (the spec asks for one or the other)")
        score = sum(t.score for t in scored if t.score is not None)
    maxes = [t.max_score for t in scored]
    max_score = sum(m for m in maxes if m is not None) if scored and None not in maxes \
        else None
    board = []
    for i, row in enumerate(doc.get("leaderboard") or []):
        if not isinstance(row, dict) or not isinstance(row.get("name"), str):
            raise ResultsError(f"results.json: leaderboard[{i}] has no name")
        value = row.get("value")
        if not isinstance(value, str):
            value = _number(value, f"leaderboard[{i}].value", optional=False)
        board.append((row["name"], value if value is not None else 0.0,
                      "asc" if row.get("order") == "asc" else "desc"))
    return GsResults(score=score, max_score=max_score, tests=tests,
                     output=_text(doc.get("output"), "output"), visibility=visibility,
                     stdout_visibility=_visibility(doc.get("stdout_visibility"),
                                                   "stdout_visibility", "hidden"),
                     execution_time_s=_number(doc.get("execution_time"), "execution_time"),
                     leaderboard=tuple(board))


def to_test_results(res: GsResults) -> list[TestResult]:
    """gradeline's per-test results: AC when passed, else WA; the group is the course
    visibility the test asked for (``gradescope/visible``, ``gradescope/after_release``
    ...), so that the course's visibility rules apply per test."""
    return [TestResult(name=t.name, group=f"gradescope/{COURSE_VISIBILITY[t.visibility]}",
                       verdict=Verdict.AC if t.passed else Verdict.WA, feedback=t.output,
                       points=t.score,
                       score=(t.score / t.max_score) if t.score is not None and t.max_score
                       else None)
            for t in res.tests]
