"""Every web page rendered from realistic data (made up, shaped as ``course.staffview``,
``course.studentview``, ``views.snapshot`` and the desk's receipts make it), for the tests
that check the pages' markup and, in a browser, their accessibility."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from grader.adapters.web import grading_page as gp
from grader.adapters.web import live_page as live
from grader.adapters.web import pages, regrade_pages, student
from grader.course.gradingpage import GradingPage
from grader.course.gradingview import GradingIndex
from grader.course.regrades import Queue, RegradeDetail
from grader.course.shown import HandGradeView, Receipt, StudentView
from grader.course.similarity_pairs import PairView, SimilarityReport
from grader.course.staffview import (
    AssignmentRow,
    HistoryView,
    RegradePreview,
    Snapshot,
    SubmissionDetail,
    UsageView,
)

ASSIGNMENTS = ["bigsum", "primes", "wordfreq"]
#: (student, name, attempts, last verdict, status, counting, late h, final %, points)
ROSTER = [
    ("aalto01", "Aino Aalto", 3, "AC", "graded", "2025-03-14T10-22-31-9a1e", 0.0, 100.0, 10.0),
    ("berg02", "Björn Berg", 5, "WA", "graded", "2025-03-14T21-05-12-7c1e", 0.0, 70.0, 7.0),
    ("chen03", "Chen Wei", 1, "TLE", "graded", "2025-03-13T08-40-02-11aa", 0.0, 40.0, 4.0),
    ("diaz04", "Lucía Díaz <i>", 2, "AC", "late", "2025-03-16T09-12-44-0b3d", 11.2, 90.0, 9.0),
    ("eze05", "Chidi Eze", 4, "RE", "graded", "2025-03-12T17-33-09-5f2c", 0.0, 55.0, 5.5),
    ("fischer06", "Jonas Fischer", 1, "CE", "graded", "2025-03-15T23-58-40-2d9e", 0.0, 0.0,
     0.0),
    ("garcia07", "Marta García", 2, "MLE", "graded", "2025-03-14T12-01-55-8e4f", 0.0, 60.0,
     6.0),
    ("ito09", "Ito Haruto", 1, "OLE", "graded", "2025-03-11T15-20-03-6a7b", 0.0, 30.0, 3.0),
    ("jensen10", "Freja Jensen", 0, None, "", None, None, None, None),
    ("kowalski11", "Piotr Kowalski", 2, "JE", "pending", "2025-03-15T22-10-00-4c5d", 0.0,
     None, None),
    ("zed12", "Zed Zee", 1, "quarantined", "", None, None, None, None),
]
NAV = pages.staff_nav(ASSIGNMENTS, "/a/bigsum")


def assignment() -> str:
    rows = [{"student": s, "name": n, "attempts": a, "last": c, "last_verdict": v,
             "status": st, "counting": c, "late_hours": late,
             "grace_days": None if f is None else int(late > 0),
             "penalty_pct": None if f is None else 10.0 * (late > 0),
             "raw_pct": None if f is None else f + 10.0 * (late > 0), "final_pct": f,
             "points": pts} for s, n, a, v, st, c, late, f, pts in ROSTER]
    return pages.assignment_page("bigsum", [AssignmentRow.from_json(r) for r in rows], NAV)


def _attempt(sid: str, verdict: str | None, score: float | None, counts: bool = False,
             state: str = "graded", reason: str = "") -> dict[str, Any]:
    return {"id": sid, "submitted_at": sid[:10] + "T" + sid[11:19].replace("-", ":") +
            "+02:00", "late_hours": 0.0, "state": state, "reason": reason,
            "verdict": verdict, "score": score, "max_score": 10.0 if score is not None
            else None, "phase": "full" if verdict else None, "counts": counts}


def history() -> str:
    h = [{"assignment": "bigsum", "deadline": "2025-03-15T23:59:00+02:00",
          "grade": {"status": "graded", "counting": "2025-03-14T21-05-12-7c1e",
                    "final_pct": 70.0},
          "attempts": [_attempt("2025-03-13T10-02-45-1f0a", "CE", 0.0),
                       _attempt("2025-03-14T21-05-12-7c1e", "WA", 7.0, counts=True)]},
         {"assignment": "primes", "deadline": "2025-03-29T23:59:00+02:00",
          "grade": {"status": "", "counting": None},
          "attempts": [_attempt("2025-03-20T16-44-09-3b2a", None, None, state="quarantined",
                                reason="the archive holds a link out of it")]}]
    return pages.student_page("berg02", [HistoryView.from_json(x) for x in h], NAV)


SOURCE = """import sys

def main() -> None:
    n = int(sys.stdin.readline())
    total = 0
    for x in sys.stdin.readline().split()[:n + 1]:   # one too many
        total += int(x)
    print(total)

main()
"""


def _test(name: str, group: str, shown: str, verdict: str, cpu: float, feedback: str = "",
          output: str = "") -> dict[str, Any]:
    return {"name": name, "group": group, "shown": shown, "verdict": verdict, "cpu_s": cpu,
            "memory_bytes": 14 << 20, "feedback": feedback, "output": output}


def submission() -> str:
    tests = [_test("sample-1", "sample", "visible", "AC", 0.02),
             _test("small-02", "small", "after_deadline", "WA", 0.02,
                   "line 1: expected 15, got 21", "21\n"),
             _test("large-01", "secret/large", "hidden", "TLE", 2.0, "CPU time over 2.0 s")]
    s = {"id": "2025-03-14T21-05-12-7c1e", "student": "berg02", "assignment": "bigsum",
         "submitted_at": "2025-03-14T21:05:12+02:00", "state": "graded", "reason": "",
         "language": "python3", "late_hours": 0.0,
         "stamps": {"arrived": "2025-03-14T21:05:12+02:00",
                    "started": "2025-03-14T21:05:13+02:00",
                    "finished": "2025-03-14T21:05:19+02:00", "stored": None},
         "files": [{"name": "sum.py", "text": SOURCE}],
         "results": [{"version": "3f9a2c1d04e7/groups-sample", "phase": "visible",
                      "made": "2025-03-14T21:05:19+02:00", "superseded": None,
                      "verdict": "AC", "score": 2.0, "max_score": 2.0, "message": "",
                      "compile_output": "", "runtime": {}, "tests": tests[:1]},
                     {"version": "3f9a2c1d04e7", "phase": "full",
                      "made": "2025-03-16T00:12:40+02:00", "superseded": None,
                      "verdict": "WA", "score": 7.0, "max_score": 10.0,
                      "message": "2 of 3 groups passed",
                      "compile_output": "sum.py:6: warning: slice past n", "runtime": {},
                      "tests": tests}]}
    return pages.submission_page(SubmissionDetail.from_json(s), NAV)


def preview() -> str:
    changes = [{"student": "aalto01", "id": "2025-03-14T10-22-31-9a1e", "phase": "full",
                "old_verdict": "AC", "new_verdict": "WA", "old_score": 10.0,
                "new_score": 7.0, "changed": True},
               {"student": "berg02", "id": "2025-03-14T21-05-12-7c1e", "phase": "full",
                "old_verdict": "WA", "new_verdict": "WA", "old_score": 7.0,
                "new_score": 7.0, "changed": False}]
    return pages.preview_page("bigsum", RegradePreview.from_json({
        "assignment": "bigsum", "new_version": "5e0c77ab19f2d", "changes": changes,
        "made": "2025-03-16T09:00:00+02:00"}), NAV)


def similarity() -> str:
    region = {"file": "sum.py", "start": 3, "end": 7}
    match = {"first": region, "second": region, "tokens": 12}
    pairs = [{"a": "ann", "b": "ben", "similarity": 0.91, "max_similarity": 0.93,
              "language": "python3", "matches": [match] * 3},
             {"a": "eze05", "b": "ito09", "similarity": 0.62, "max_similarity": 0.7,
              "language": "cpp", "matches": [match]}]
    report = {"assignment": "bigsum", "tool": "JPlag", "made": "2025-03-16T08:00:00+02:00",
              "threshold": 0.5, "min_tokens": 9, "students": 11,
              "languages": {"python3": 9, "cpp": 2}, "starter": True, "pairs": pairs,
              "skipped": ["kowalski11: Kotlin (JPlag has no module for it here)"]}
    return pages.similarity_page("bigsum", SimilarityReport.from_json(report), NAV)


def pair() -> str:
    def lines(text: str, marks: dict[int, int]) -> list[dict[str, Any]]:
        return [{"n": n, "text": t, "match": marks.get(n, 0)}
                for n, t in enumerate(text.splitlines(), 1)]

    a = ("import sys\n\ndef compute(xs):\n    s = 0\n    for x in xs:\n        s += x\n"
         "    return s\n\nn = int(sys.stdin.readline())\n"
         "print(compute(map(int, sys.stdin.readline().split())))\n")
    b = ("def solve(v):\n    t = 0\n    for y in v:\n        t += y\n    return t\n\n"
         "input()\nprint(solve(int(w) for w in input().split()))\n")
    return pages.pair_page("bigsum", 0, PairView.from_json({
        "a": "ann", "b": "ben", "similarity": 0.91, "matches": 3,
        "left": [{"file": "sum.py", "lines": lines(a, {3: 1, 4: 2, 5: 2, 6: 2, 7: 3, 10: 3})}],
        "right": [{"file": "main.py", "lines": lines(b, {1: 1, 2: 2, 3: 2, 4: 2, 5: 3,
                                                         8: 3})}]}), NAV)


def usage() -> str:
    return pages.usage_page(UsageView.from_json({
        "account": "cs101", "since": "now-30days", "period": "the last 30 days", "rows": [
        {"account": "cs101", "qos": "live", "jobs": 312, "core_hours": 4.25},
        {"account": "cs101", "qos": "bulk", "jobs": 9, "core_hours": 21.5}]}), NAV)


def live_page() -> str:
    series = [{"t": -600.0 + 30 * i, "per_min": float(8 + i % 7 + i // 2),
               "p50": 3.5 + (i % 4) * 0.3, "p95": 8.0 + (i % 5)} for i in range(20)]
    series[3].update(p50=None, p95=None)
    snap = {"course": "Programming 1 (spring 2025)", "at": 0.0, "waiting": 186,
            "in_progress": 6,
            "window_s": 600.0, "stored": 414, "throughput_per_min": 23.4, "p50_s": 4.2,
            "p95_s": 11.8, "series": series,
            "verdicts": {"AC": 231, "WA": 112, "TLE": 29, "RE": 24, "CE": 11, "MLE": 4,
                         "OLE": 2, "JE": 1, "quarantined": 1},
            "by_node": {"c101 cpus 0-3": 142, "c102 cpus 0-3": 139, "c117": 133},
            "failures": [{"when": "14:01:07", "student": "kowalski11", "assignment": "bigsum",
                          "what": "JE: validator exited with status 1"},
                         {"when": "13:58:40", "student": "zed12", "assignment": "primes",
                          "what": "quarantined: the archive holds a link out of it"}]}
    return live.page(Snapshot.from_json(snap), 5, pages.staff_nav(ASSIGNMENTS, "/"))


def _mine_tests() -> list[dict[str, Any]]:
    return [{"name": "sample-1", "group": "sample", "verdict": "AC", "time_s": 0.02,
             "feedback": ""},
            {"name": "small-02", "group": "small", "verdict": "WA", "time_s": 0.02,
             "feedback": "line 1: expected 15, got 21", "input": "5\n1 2 3 4 5\n",
             "expected": "15\n", "output": "21\n"}]


def _mine_sub(sid: str, **kw: Any) -> dict[str, Any]:
    base = {"id": sid, "submitted_at": sid[:10] + "T" + sid[11:19].replace("-", ":"),
            "late_hours": 0.0, "counts": False, "state": "graded", "sha256": "9f2c4e7b" * 8}
    return {**base, **kw}


VIEW = StudentView.from_json({
    "student": "berg02", "course": "Programming 1 (spring 2025)",
    "now": "2025-03-21T10:00:00+02:00",
    "assignments": [
        {"name": "bigsum", "deadline": "2025-03-15T23:59:00+02:00",
         "released": "2025-03-16T12:00:00+02:00",
         "limits": {"used": 5, "left": None, "next_at": None, "why": "", "deferring": False},
         "submissions": [
             _mine_sub("2025-03-13T10-02-45-1f0a", verdict="CE", score=0.0, max_score=10.0,
                       tests=[], groups=[], message="", complete=False,
                       compile_output="sum.cpp:3:1: error: expected ';' before 'int'"),
             _mine_sub("2025-03-14T21-05-12-7c1e", counts=True, verdict="WA", score=7.0,
                       max_score=10.0, message="", complete=True, tests=_mine_tests(),
                       groups=[{"name": "sample", "verdict": "AC", "points": 2.0,
                                "max_points": 2.0, "passed": 2, "total": 2, "phase": "full"},
                               {"name": "small", "verdict": "WA", "points": 5.0,
                                "max_points": 8.0, "passed": 4, "total": 5,
                                "phase": "full"}])]},
        {"name": "primes", "deadline": "2025-03-29T23:59:00+02:00", "released": None,
         "limits": {"used": 3, "left": 7, "next_at": "2025-03-21T10:05:00+02:00",
                    "why": "at most one hand-in every 5 min", "deferring": True},
         "submissions": [
             _mine_sub("2025-03-20T16-44-09-3b2a", state="quarantined",
                       reason="the archive holds a link out of it"),
             _mine_sub("2025-03-21T09-15-30-8d9c", deferred=True, verdict=None, score=None,
                       max_score=None, tests=[], groups=[],
                       message="taken past the assignment's hand-in limit: its feedback "
                               "comes after your deadline"),
             _mine_sub("2025-03-21T09-58-02-aa01", verdict=None, score=None, tests=[],
                       groups=[], message="not graded yet")]},
        {"name": "wordfreq", "deadline": "2025-04-12T23:59:00+03:00", "released": None,
         "limits": {"used": 0, "left": 10, "next_at": None, "why": "", "deferring": False},
         "submissions": []}]})

def _timing(cores: int, mine: float, ref: float, mine1: float, ref1: float,
            ci: float | None = None) -> dict[str, Any]:
    return {"cores": cores, "median_s": mine, "ci_s": ci, "reference_median_s": ref,
            "reference_ci_s": 0.004 if cores > 1 else 0.003, "runs": 7,
            "speedup": round(mine1 / mine, 3), "speedup_ci": 0.04 if cores > 1 else None,
            "reference_speedup": round(ref1 / ref, 3)}


#: a cache reading by cachegrind on a node without hardware counters
CACHE: dict[str, Any] = {
    "source": "cachegrind", "input": "small.in",
    "note": "no hardware counters on this node (likwid and perf found none usable): "
            "cachegrind's simulated L3 of 2.5 MiB per core times the cores",
    "reading": "L3 misses grow 3.1x from 1 to 4 cores (the reference's 1.08x): the working "
               "set no longer fits the L3 per core",
    "rows": [{"cores": 1, "l3_bytes": 2621440, "misses": 41230.0, "accesses": 1.93e6,
              "inflation": 1.0, "reference_misses": 39811.0, "reference_inflation": 1.0},
             {"cores": 4, "l3_bytes": 10485760, "misses": 127813.0, "accesses": 2.41e6,
              "inflation": 3.1, "reference_misses": 42996.0, "reference_inflation": 1.08}]}

#: a student's page with the performance tests of a released parallel assignment, and
#: the measurements on demand of one before its deadline
PERF_VIEW = StudentView.from_json({
    "student": "berg02", "course": "Parallel programming (spring 2025)",
    "now": "2025-03-21T10:00:00+02:00",
    "assignments": [{
        "name": "primecount", "deadline": "2025-03-15T23:59:00+02:00",
        "released": "2025-03-16T12:00:00+02:00",
        "limits": {"used": 2, "left": None, "next_at": None, "why": "", "deferring": False},
        "submissions": [_mine_sub(
            "2025-03-15T21-05-12-7c1e", counts=True, verdict="AC", score=162.5,
            max_score=200.0, message="", complete=True, tests=[],
            groups=[{"name": "secret", "verdict": "AC", "points": 100.0,
                     "max_points": 100.0, "passed": 3, "total": 3, "phase": "full"}],
            performance={
                "points": 62.5, "max_points": 100.0, "gate": "", "not_in_force": ["a quiet node"],
                "reading": "1.41x faster on 4 cores (ideal 4x, the reference 3.62x): "
                           "most of its time does not use the extra cores (serial work, "
                           "or too little for each thread)",
                "timings": [_timing(1, 1.204, 0.934, 1.204, 0.934, 0.006),
                            _timing(2, 0.951, 0.481, 1.204, 0.934, 0.011),
                            _timing(4, 0.853, 0.258, 1.204, 0.934, 0.012)],
                "items": [{"label": "time ratio on 4 cores", "figure": 3.306,
                           "points": 25.0, "max_points": 50.0,
                           "rule": "within 1.2x: 50; 2x: 35; 4x: 25; slower: 0"},
                          {"label": "efficiency on 4 cores", "figure": 0.353,
                           "points": 37.5, "max_points": 50.0,
                           "rule": "linear from 0.25 (0 points) to 0.8 (50)"}],
                "cache": CACHE})]},
        {"name": "heat", "deadline": "2025-04-05T23:59:00+03:00", "released": None,
         "limits": {"used": 4, "left": None, "next_at": None, "why": "", "deferring": False},
         "on_demand": {"used": 2, "tokens": 3, "measurements": [
             {"token": 3, "submission": "2025-03-21T09-40-11-c4d2",
              "requested_at": "2025-03-21T09:41:02+02:00", "state": "measured",
              "performance": {
                  "points": 80.0, "max_points": 100.0, "gate": "",
                  "reading": "3.31x faster on 4 cores (ideal 4x, the reference 3.62x): "
                             "some of its time does not use the extra cores",
                  "timings": [_timing(1, 2.113, 1.802, 2.113, 1.802, 0.01),
                              _timing(4, 0.638, 0.498, 2.113, 1.802, 0.009)],
                  "items": [{"label": "efficiency on 4 cores", "figure": 0.828,
                             "points": 80.0, "max_points": 100.0,
                             "rule": "linear from 0.5 (0 %) to 0.9 (100 %)"}],
                  "cache": {**CACHE, "reading": "L3 misses stay level from 1 to 4 cores "
                                                "(1.02x; the reference's 1.01x): the "
                                                "working set fits the L3 per core",
                            "rows": CACHE["rows"][:1]}}},
             {"token": 2, "submission": "2025-03-20T18-02-44-0b7e",
              "requested_at": "2025-03-20T18:05:30+02:00", "state": "refunded",
              "reason": "the measurement failed on our side; staff are told"},
             {"token": 1, "submission": "2025-03-19T11-12-09-9a3f",
              "requested_at": "2025-03-19T11:13:40+02:00", "state": "measured",
              "performance": None}]},
         "submissions": [_mine_sub("2025-03-21T09-40-11-c4d2", counts=True, verdict="AC",
                                   score=10.0, max_score=10.0, message="", tests=[],
                                   groups=[{"name": "sample", "verdict": "AC",
                                            "points": 10.0, "max_points": 10.0,
                                            "passed": 2, "total": 2, "phase": "visible"}])]}]})

RECEIPT = Receipt.from_json({"submission": "2025-03-21T10-00-03-5b6c", "course": "prog1-2025",
           "assignment": "primes", "student": "berg02", "file": "sieve.cpp",
           "received_at": "2025-03-21T10:00:03+02:00", "size": 1834,
           "sha256": "9f2c4e7b1d0a5c3e8f6b2a9d4c7e1f0a3b5d8c2e6f9a1b4c7d0e3f6a9b2ce1a0",
           "deadline": "2025-03-29T23:59:00+02:00", "late": False, "deferred": True,
           "limit": "at most one hand-in every 5 min", "left": 6,
           "signature": "4be1c0d2a7f95e3b6c8d0a1f2e4b7c9d3a5f8e0b1c6d2a4f7e9b3c5d8a0f1e2d"})


def mine() -> str:
    return student.mine_page(VIEW)


def handin(**kw: Any) -> str:
    return student.handin_page(VIEW, ASSIGNMENTS, action="/hand-in",
                               csrf_token="Zx81kQ-3n0vY2pT7", max_mib=16, **kw)


def refused() -> str:
    return pages.refused_page("not a link this service made")


_GROUPS = [{"name": "sample", "verdict": "AC", "points": 0.0, "max_points": 0.0, "passed": 2,
            "total": 2, "phase": "full"},
           {"name": "secret/small", "verdict": "WA", "points": 0.0, "max_points": 30.0,
            "passed": 1, "total": 2, "phase": "full"},
           {"name": "secret/large", "verdict": "AC", "points": 70.0, "max_points": 70.0,
            "passed": 4, "total": 4, "phase": "full"}]
_REQUEST = {"id": 7, "submission": "2025-03-14T21-05-12-7c1e", "target_kind": "group",
            "target": "secret/small", "reason": "My output is 15 as the example says; the "
            "checker seems to want a trailing space.", "opened_at": "2025-03-17T09:12:00+02:00",
            "opened_by": "berg02", "status": "open", "before": 0.0, "most": 30.0}
TEAM_VIEW = StudentView.from_json({
    "student": "berg02", "course": "Programming 1 (spring 2025)",
    "now": "2025-03-18T10:00:00+02:00",
    "assignments": [
        {"name": "pairsum", "deadline": "2025-03-15T23:59:00+02:00",
         "released": "2025-03-16T12:00:00+02:00",
         "limits": {"used": 2, "left": 1, "next_at": None, "why": "", "deferring": False},
         "team": {"name": "red pandas", "members": ["aalto01", "berg02"], "code": "k7mq2xpa",
                  "lock": "2025-03-10T12:00:00+02:00", "changes": False, "min": 2, "max": 2},
         "regrades": {"opens": "2025-03-16T12:00:00+02:00",
                      "closes": "2025-03-23T12:00:00+02:00", "left": 2, "why": ""},
         "requests": [{**_REQUEST, "id": 6, "target": "sample", "status": "declined",
                       "answer": "The sample group gives no points; it passed.",
                       "answered_at": "2025-03-17T11:00:00+02:00", "answered_by": "ta-lee",
                       "after": 0.0, "most": 0.0}, _REQUEST],
         "submissions": [
             _mine_sub("2025-03-14T18-40-02-51aa", by="aalto01", team="red pandas",
                       verdict="RE", score=2.0, max_score=100.0, complete=True, tests=[],
                       groups=_GROUPS[:1]),
             _mine_sub("2025-03-14T21-05-12-7c1e", team="red pandas", counts=True,
                       verdict="WA", score=70.0, max_score=100.0, complete=True,
                       tests=_mine_tests(), groups=_GROUPS)]},
        {"name": "lab3", "deadline": "2025-04-05T23:59:00+02:00", "released": None,
         "limits": {"used": 0, "left": None, "next_at": None, "why": "", "deferring": False},
         "team": {"name": "", "members": [], "lock": "2025-03-28T12:00:00+02:00",
                  "changes": True, "min": 2, "max": 3},
         "submissions": []}]})


def handin_team() -> str:
    return student.handin_page(TEAM_VIEW, ["pairsum", "lab3"], action="/hand-in",
                               csrf_token="Zx81kQ-3n0vY2pT7", max_mib=16, results=True,
                               actions=student.Actions("/team", "/ask", "Zx81kQ-3n0vY2pT7"),
                               done="Your request 7 about secret/small is with your course "
                                    "staff.")


def _row(i: int, student: str, status: str, age: float, target: str = "secret/small"
         ) -> dict[str, Any]:
    return {"request": {**_REQUEST, "id": i, "status": status, "target": target},
            "assignment": "pairsum", "student": student, "age_h": age}


def regrade_queue() -> str:
    q = {"rows": [_row(3, "aalto01", "open", 49.5), _row(7, "berg02", "open", 24.8),
                  _row(9, "chen03", "open", 2.0, "secret/large")],
         "status": "open", "counts": {"open": 3, "adjusted": 4, "declined": 11, "regraded": 1}}
    return regrade_pages.queue_page(Queue.from_json(q), ASSIGNMENTS, NAV)


def regrade_request() -> str:
    d = {"row": _row(7, "berg02", "open", 24.8), "group": _GROUPS[1],
         "tests": [{"name": "secret/small/02", "group": "secret/small", "verdict": "WA",
                    "time_s": 0.02, "feedback": "line 1: expected 15, got 15 ",
                    "input": "5\n1 2 3 4 5\n", "expected": "15\n", "output": "15 \n"}],
         "files": [{"name": "sum.py", "text": SOURCE}],
         "commands": ["gradeline regrades answer 7 adjusted --points 30 --reason '...'",
                      "gradeline regrades answer 7 declined --reason '...'"],
         "earlier": [{"id": 3, "submission": "2025-03-20T18-02-44-0b7e",
                      "target_kind": "group", "target": "secret/small",
                      "reason": "I print the sum as asked.",
                      "opened_at": "2025-03-21T08:10:00+02:00", "opened_by": "berg02",
                      "status": "declined", "answer": "Your output has a trailing space.",
                      "answered_at": "2025-03-21T11:02:00+02:00", "answered_by": "ta1",
                      "before": 0.0, "after": 0.0, "most": 30.0}]}
    return regrade_pages.request_page(RegradeDetail.from_json(d), NAV,
                                      form=("/regrades/7/answer", "a1b2c3d4"))


#: name -> the page's HTML
PAGES: dict[str, Callable[[], str]] = {
    "live": live_page, "staff-assignment": assignment, "staff-student": history,
    "staff-submission": submission, "staff-preview": preview,
    "staff-similarity": similarity, "staff-pair": pair, "staff-usage": usage,
    "student": mine, "student-performance": lambda: student.mine_page(PERF_VIEW),
    "handin": handin,
    "handin-receipt": lambda: handin(receipt=RECEIPT),
    "handin-results": lambda: handin(receipt=RECEIPT, results=True),
    "handin-error": lambda: handin(error="sieve.zip is larger than 16 MiB: hand in the "
                                   "source file only"),
    "refused": refused, "handin-team": handin_team,
    "handin-performance": lambda: student.handin_page(  # the on-demand measurement's button
        PERF_VIEW, ["heat"], action="/hand-in", csrf_token="Zx81kQ-3n0vY2pT7", max_mib=16,
        results=True, actions=student.Actions("/team", "/ask", "Zx81kQ-3n0vY2pT7", "/measure"),
        done="Your submission 2025-03-21T09-40-11 of heat waits to be measured (2 of 3 "
             "measurements used); its curve appears here when it is done."),
    "staff-regrades": regrade_queue,
    "staff-regrade": regrade_request}


# -- grading by hand ---------------------------------------------------------------
def _item(iid: str, key: str, points: float, title: str, note: str = "",
          explanation: str = "") -> dict[str, Any]:
    return {"id": iid, "key": key, "points": points, "title": title, "note": note,
            "explanation": explanation}


STYLE = {"id": "style", "title": "Style", "points": 4.0, "start": 4.0, "min": 0.0,
         "max": 4.0, "select": "any",
         "items": [_item("names", "1", -1, "Unclear names", "Not for loop indices."),
                   _item("dup", "2", -2, "Duplicated code"),
                   _item("tidy", "3", 1, "Exceptionally tidy")]}
COMMENTS = [{"id": 7, "file": "sum.py", "first": 6, "last": 7, "text": "n + 1 reads one too "
             "many: slice [:n]", "item": "names", "grader": "ta-jensen",
             "made_at": "2025-03-17T10:02:00+02:00"}]


def grading_page(conflict: bool = False) -> str:
    page = GradingPage.from_json({
        "assignment": "bigsum", "question": STYLE,
        "questions": [{"id": "style", "title": "Style"}, {"id": "design", "title": "Design"}],
        "key": "anon-k2m7q4xa", "label": "anon-k2m7q4xa", "names_shown": False,
        "position": 3, "of": 12, "mine": True, "prev_key": "anon-b4c5d6e7",
        "next_key": "anon-p2q3r4s5", "submission": "2025-03-14T21-05-12-7c1e",
        "submitted_at": "2025-03-14T21:05:12+02:00", "stale": False,
        "files": [{"name": "sum.py", "text": SOURCE}],
        "autograder": {"version": "3f9a2c1d04e7", "phase": "full", "made": None,
                       "superseded": None, "verdict": "WA", "score": 7.0, "max_score": 10.0,
                       "message": "", "compile_output": "", "runtime": {},
                       "tests": [_test("sample-1", "sample", "visible", "AC", 0.02),
                                 _test("small-02", "small", "after_deadline", "WA", 0.02)]},
        "grade": {"student": "anon-k2m7q4xa", "question": "style",
                  "spool_id": "2025-03-14T21-05-12-7c1e", "items": ["names"],
                  "adjustment": 0.5, "reason": "clear output format", "grader": "ta-jensen",
                  "version": 2, "graded_at": "2025-03-17T10:02:00+02:00",
                  "comments": COMMENTS},
        "points": 3.5, "others": [],
        "history": [{"at": "2025-03-17T09:58:00+02:00", "grader": "ta-jensen",
                     "action": "grade", "version": 1, "items": ["names"], "adjustment": 0.0,
                     "reason": "", "comment": "sum.py:6: n + 1 reads one too many"},
                    {"at": "2025-03-17T10:02:00+02:00", "grader": "ta-jensen",
                     "action": "grade", "version": 2, "items": ["names"],
                     "adjustment": 0.5, "reason": "clear output format", "comment": ""}]})
    draft = {"item": ["dup"], "adjustment": ["0"], "version": ["1"]} if conflict else None
    return gp.grading_page(page, NAV, "Zx81kQ-3n0vY2pT7", draft=draft, conflict=conflict)


def grading_index() -> str:
    queue = [{"key": f"anon-{c}2m7q4x{c}", "label": f"anon-{c}2m7q4x{c}",
              "assigned": "ta-jensen", "graded_by": "ta-jensen" if c in "ab" else None,
              "points": 3.5 if c in "ab" else None} for c in "abcd"]
    stats = [{"grader": g, "question": "style", "graded": n, "mean_points": m,
              "mean_adjustment": 0.1, "items": [
                  {"item": "names", "title": "Unclear names", "share": s, "mean_points": -s},
                  {"item": "dup", "title": "Duplicated code", "share": 0.1,
                   "mean_points": -0.2}]}
             for g, n, m, s in (("ta-jensen", 2, 3.5, 0.5), ("ta-okafor", 9, 2.9, 0.8))]
    return gp.grading_index_page(GradingIndex.from_json({
        "assignment": "bigsum", "anonymous": True, "names_shown": False, "can_reveal": True,
        "questions": [{"id": "style", "title": "Style", "points": 4.0, "total": 24,
                       "graded": 11, "mine": True, "queue": queue,
                       "graders": [{"grader": "ta-jensen", "assigned": 12, "graded": 2},
                                   {"grader": "ta-okafor", "assigned": 12, "graded": 9}]}],
        "stats": stats}), NAV, "Zx81kQ-3n0vY2pT7")


def mine_graded_by_hand() -> str:
    hand = HandGradeView.from_json({
        "points": 7.5, "max_points": 10.0, "complete": True, "questions": [
            {"id": "style", "title": "Style", "points": 3.5, "max_points": 4.0,
             "adjustment": 0.5, "reason": "clear output format",
             "items": [{"id": "names", "title": "Unclear names", "points": -1,
                        "explanation": "Names say what a value holds.", "applied": True},
                       {"id": "tidy", "title": "Exceptionally tidy", "points": 1,
                        "explanation": "", "applied": False}],
             "comments": [{"file": "sum.py", "first": 6, "last": 7,
                           "text": "n + 1 reads one too many: slice [:n]",
                           "lines": ["    for x in sys.stdin.readline().split()[:n + 1]:",
                                     "        total += int(x)"],
                           "item": "Unclear names", "points": -1}]},
            {"id": "design", "title": "Design", "points": 4.0, "max_points": 6.0,
             "items": [{"id": "d-part", "title": "Works, but tangled", "points": 4,
                        "explanation": "", "applied": True}]}]})
    view = replace(VIEW, assignments=(replace(VIEW.assignments[0], hand=hand),
                                      *VIEW.assignments[1:]))
    return student.mine_page(view)


PAGES.update({"grading": grading_page, "grading-conflict": lambda: grading_page(True),
              "grading-index": grading_index, "student-graded-by-hand": mine_graded_by_hand})
