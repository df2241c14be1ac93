"""Exports of results in formats other tools read: CSV grade sheet, Gradescope
``results.json``, JUnit XML. Pure functions of SubmissionResult."""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence

from grader.core.result import SubmissionResult
from grader.core.verdict import Verdict

CSV_FIELDS = ["student", "problem", "problem_version", "submission", "content_hash", "language",
              "verdict", "score", "max_score", "graded_at"]


def csv_rows(results: Iterable[tuple[str, SubmissionResult]]) -> str:
    """A grade sheet: one row per (student, result), group scores as extra columns."""
    pairs = list(results)
    groups: list[str] = []
    for _, r in pairs:
        for g in r.groups:
            if g.name not in groups:
                groups.append(g.name)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS + [f"group:{g}" for g in groups])
    for student, r in pairs:
        by_group = {g.name: g.score for g in r.groups}
        w.writerow([student, r.problem, r.problem_version[:12], r.submission, r.content_hash[:16],
                    r.language or "", r.verdict.value, f"{r.score:g}", f"{r.max_score:g}",
                    r.graded_at] + [f"{by_group[g]:g}" if g in by_group else "" for g in groups])
    return buf.getvalue()


def gradescope(result: SubmissionResult, *,
               secret_visibility: str = "after_due_date"  # noqa: S107 -- not a password
               ) -> dict[str, object]:
    """Gradescope autograder ``results.json``: one entry per test group (scores) and
    the per-test verdicts in each entry's output. Samples are always visible."""
    tests: list[dict[str, object]] = []
    if result.compile is not None and not result.compile.ok:
        tests.append({"name": "compile", "score": 0, "max_score": 0, "status": "failed",
                      "output": result.compile.judge_error or result.compile.output,
                      "visibility": "visible"})
    by_group: dict[str, list[str]] = {}
    for t in result.tests:
        line = f"{t.name}: {t.verdict.value}"
        if t.cpu_time_s is not None:
            line += f" ({t.cpu_time_s:.3f} s)"
        if t.feedback and t.group.startswith("sample"):
            line += f" - {t.feedback}"
        by_group.setdefault(t.group, []).append(line)
    for g in result.groups:
        sample = g.name == "sample" or g.name.startswith("sample/")
        tests.append({
            "name": g.name,
            "score": g.score,
            "max_score": g.points,
            "status": "passed" if g.verdict is Verdict.AC else "failed",
            "output": "\n".join(by_group.get(g.name, [])),
            "visibility": "visible" if sample else secret_visibility,
        })
    return {
        "score": result.score,
        "execution_time": round(result.timing.get("total_s", 0.0), 3),
        "output": f"verdict {result.verdict.value}, {result.score:g}/{result.max_score:g}",
        "tests": tests,
    }


def junit_xml(results: Sequence[tuple[str, SubmissionResult]] | Mapping[str, SubmissionResult]
              ) -> str:
    """JUnit XML: a testsuite per submission, a testcase per test (CE: one failed case)."""
    pairs = list(results.items()) if isinstance(results, Mapping) else list(results)
    suites = ET.Element("testsuites")
    for student, r in pairs:
        cases = list(r.tests)
        failures = sum(1 for t in cases if t.verdict not in (Verdict.AC, Verdict.JE))
        errors = sum(1 for t in cases if t.verdict is Verdict.JE)
        suite = ET.SubElement(suites, "testsuite", {
            "name": f"{student}/{r.problem}", "tests": str(max(len(cases), 1)),
            "failures": str(failures + (1 if r.verdict is Verdict.CE else 0)),
            "errors": str(errors), "time": f"{r.timing.get('total_s', 0.0):.3f}",
        })
        if r.verdict is Verdict.CE and r.compile is not None:
            tc = ET.SubElement(suite, "testcase", {"classname": r.problem, "name": "compile"})
            f = ET.SubElement(tc, "failure", {"message": "CE", "type": "CE"})
            f.text = r.compile.output
        for t in cases:
            tc = ET.SubElement(suite, "testcase", {
                "classname": f"{r.problem}.{t.group}", "name": t.name,
                "time": f"{t.wall_time_s or 0.0:.3f}"})
            if t.verdict is Verdict.JE:
                e = ET.SubElement(tc, "error", {"message": "JE", "type": "JE"})
                e.text = t.feedback
            elif t.verdict is not Verdict.AC:
                f = ET.SubElement(tc, "failure", {"message": t.verdict.value,
                                                  "type": t.verdict.value})
                f.text = t.feedback
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
