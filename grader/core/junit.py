"""Reading a JUnit XML report (pytest ``--junitxml``, JUnit 5's console launcher,
``cargo2junit``, ``go-junit-report``, ``gotestsum``) into gradeline's per-test results,
with points per test or per class from the assignment.

The report is written by test code that ran beside a student's: untrusted input. It
is size-limited, parsed with defusedxml (no entity expansion, no external entities),
and anything that is not a JUnit report is a
:class:`ReportError` with the reason (a judge error for the caller, never a score).
A test case maps to AC (passed), WA (``failure``: an assertion), RE (``error``: the
test crashed) or is left out as skipped; its message and text become the feedback.
"""

from __future__ import annotations

import fnmatch
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

from grader.core.errors import GradelineError
from grader.core.result import FEEDBACK_LIMIT, TestResult
from grader.core.verdict import Verdict

MAX_BYTES = 4 << 20


class ReportError(GradelineError):
    """The JUnit report is missing, malformed or too big (a judge error, with why)."""


@dataclass(frozen=True, slots=True)
class Case:
    """One ``testcase``: its id is ``classname.name`` (or ``name`` alone)."""

    id: str
    verdict: Verdict | None  # None: skipped
    time_s: float | None
    message: str


def _case(el: ET.Element) -> Case:
    name, cls = el.get("name") or "", el.get("classname") or ""
    if not name:
        raise ReportError("JUnit report: a testcase without a name")
    verdict: Verdict | None = Verdict.AC
    message = ""
    for tag, v in (("failure", Verdict.WA), ("error", Verdict.RE), ("skipped", None)):
        found = el.find(tag)
        if found is not None:
            verdict = v
            message = "\n".join(x for x in (found.get("message"), found.text) if x)
            break
    if verdict not in (Verdict.AC, None):  # CTest and libtest put what failed here
        said = "\n".join(x.text for x in (el.find("system-out"), el.find("system-err"))
                         if x is not None and x.text and x.text.strip())
        message = "\n".join(x for x in (message, said) if x)
    try:
        t = el.get("time")
        time_s: float | None = float(t.replace(",", "")) if t else None
    except ValueError:
        time_s = None
    return Case(id=f"{cls}.{name}" if cls else name, verdict=verdict, time_s=time_s,
                message=message.strip()[:FEEDBACK_LIMIT])


def parse_junit(data: bytes) -> list[Case]:
    """Every test case of a report (``testsuites``, or one ``testsuite``, nested
    suites included; several documents one after another, as ``cargo test`` writes one
    per test binary); :raises ReportError: with the reason."""
    if len(data) > MAX_BYTES:
        raise ReportError(f"JUnit report is {len(data)} bytes, over the {MAX_BYTES} allowed")
    docs = [b"<?xml" + d for d in data.split(b"<?xml") if d.strip()] \
        if data.lstrip().startswith(b"<?xml") else [data]
    cases = [c for d in docs for c in _parse_one(d)]
    seen: set[str] = set()
    for c in cases:
        if c.id in seen:
            raise ReportError(f"JUnit report names test {c.id} twice")
        seen.add(c.id)
    return cases


def _parse_one(data: bytes) -> list[Case]:
    try:  # defusedxml: no entity expansion, no external entities, no DTD retrieval
        root = SafeET.fromstring(data)
    except DefusedXmlException as e:
        raise ReportError(f"JUnit report refused: {e}") from None
    except ET.ParseError as e:
        raise ReportError(f"JUnit report is not XML: {e}") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise ReportError(f"JUnit report's root is <{root.tag}>, not <testsuites> or "
                          "<testsuite>")
    return [_case(el) for el in root.iter("testcase")]


def weight(case_id: str, weights: Mapping[str, float], default: float) -> float:
    """A test's points: the first pattern (``fnmatch``, on the test's id, e.g.
    ``test_lists.TestSort.*``) that matches it, else ``default``."""
    for pattern, points in weights.items():
        if fnmatch.fnmatchcase(case_id, pattern):
            return points
    return default


def to_test_results(cases: list[Case], weights: Mapping[str, float], *,
                    default: float = 1.0, group: str = "unit") -> list[TestResult]:
    """gradeline's per-test results, each with its points earned (skipped tests are
    left out: they earn nothing and count for nothing)."""
    out = []
    for c in cases:
        if c.verdict is None:
            continue
        worth = weight(c.id, weights, default)
        out.append(TestResult(name=c.id, group=group, verdict=c.verdict,
                              wall_time_s=c.time_s, feedback=c.message,
                              points=worth if c.verdict is Verdict.AC else 0.0,
                              score=1.0 if c.verdict is Verdict.AC else 0.0))
    return out
