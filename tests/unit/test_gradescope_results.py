"""results.json as Gradescope's specification writes it: what gradeline reads of it,
and every malformed, forged or oversized file refused with a reason."""

from __future__ import annotations

import json

import pytest

from grader.core.verdict import Verdict
from grader.formats.gradescope.results import (
    MAX_BYTES,
    ResultsError,
    parse_results,
    to_test_results,
)


def _doc(**doc: object) -> bytes:
    return json.dumps(doc).encode()


def test_the_specs_example_reads_with_its_defaults():
    res = parse_results(_doc(
        score=44.0, execution_time=136, output="Text relevant to the entire submission",
        visibility="after_due_date", stdout_visibility="visible", extra_data={},
        tests=[{"score": 2.0, "max_score": 2.0, "name": "Your name", "number": "1.1",
                "output": "Giant multiline string", "tags": ["tag1"],
                "visibility": "visible", "extra_data": {}},
               {"score": 0.0, "max_score": 3.0, "name": "Hidden one"}],
        leaderboard=[{"name": "Accuracy", "value": 0.8},
                     {"name": "Time", "value": 12, "order": "asc"},
                     {"name": "Stars", "value": "*****"}]))
    assert res.score == 44.0  # the top-level score wins over the tests' sum
    assert res.max_score == 5.0 and res.execution_time_s == 136
    assert [(t.name, t.passed, t.visibility) for t in res.tests] == [
        ("Your name", True, "visible"), ("Hidden one", False, "after_due_date")]
    assert res.stdout_visibility == "visible"
    assert res.leaderboard == (("Accuracy", 0.8, "desc"), ("Time", 12.0, "asc"),
                               ("Stars", "*****", "desc"))


def test_without_a_top_score_the_tests_add_up_and_status_decides():
    res = parse_results(_doc(tests=[
        {"name": "a", "score": 1, "max_score": 1},
        {"name": "b", "score": 1, "max_score": 2},
        {"name": "c", "score": 0, "max_score": 1, "status": "passed"},
        {"number": "4", "score": 2, "max_score": 2, "status": "failed"}]))
    assert res.score == 4.0 and res.stdout_visibility == "hidden"
    assert [t.passed for t in res.tests] == [True, False, True, False]
    assert res.tests[3].name == "4"
    rows = to_test_results(res)
    assert [r.verdict for r in rows] == [Verdict.AC, Verdict.WA, Verdict.AC, Verdict.WA]
    assert rows[1].score == 0.5 and rows[1].points == 1.0
    assert {r.group for r in rows} == {"gradescope/visible"}


def test_gradescope_visibility_maps_onto_the_course_files():
    res = parse_results(_doc(score=0, tests=[
        {"name": n, "visibility": v} for n, v in
        (("a", "visible"), ("b", "hidden"), ("c", "after_due_date"), ("d", "after_published"))]))
    assert [r.group for r in to_test_results(res)] == [
        "gradescope/visible", "gradescope/hidden", "gradescope/after_deadline",
        "gradescope/after_release"]


@pytest.mark.parametrize(("data", "reason"), [
    (b"", "not JSON"),
    (b"{\"score\": 1,", "not JSON"),
    (b"\xff\xfe", "not JSON"),
    (b"[1, 2]", "not a JSON object"),
    (_doc(tests=[{"name": "a"}]), "no score"),
    (_doc(), "no score"),
    (_doc(score="a hundred"), "not a number"),
    (_doc(score=True), "not a number"),
    (b"{\"score\": NaN}", "not a number"),
    (b"{\"score\": Infinity}", "not a number"),
    (_doc(score=1, tests={"a": 1}), "tests is not a list"),
    (_doc(score=1, tests=["a"]), "tests[0] is not an object"),
    (_doc(score=1, tests=[{"name": "a", "status": "ok"}]), "passed or failed"),
    (_doc(score=1, tests=[{"name": "a", "output": ["x"]}]), "not text"),
    (_doc(score=1, visibility="everyone"), "one of visible"),
    (_doc(score=1, leaderboard=[{"value": 1}]), "has no name"),
    (_doc(score=1, leaderboard=[{"name": "x", "value": None}]), "not a number"),
])
def test_a_malformed_results_json_is_refused_with_the_reason(data, reason):
    with pytest.raises(ResultsError, match=reason.replace("[", r"\[").replace("]", r"\]")):
        parse_results(data)


def test_an_oversized_file_is_refused_before_it_is_parsed():
    big = _doc(score=1, output="x" * MAX_BYTES)
    with pytest.raises(ResultsError, match="over the"):
        parse_results(big)


def test_long_outputs_and_names_are_cut():
    res = parse_results(_doc(score=1, output="o" * 50_000,
                             tests=[{"name": "n" * 1000, "output": "t" * 50_000}]))
    assert len(res.output) <= 2000 and len(res.tests[0].output) <= 2000
    assert len(res.tests[0].name) == 200


def test_numbers_written_as_strings_are_read_as_gradescope_reads_them():
    # gradescope-utils' JSONTestRunner writes execution_time as "%.2f"
    res = parse_results(b'{"execution_time": "0.06", "tests": [{"name": "a", '
                        b'"score": "2", "max_score": 2.0}]}')
    assert res.execution_time_s == 0.06 and res.score == 2 and res.tests[0].passed


def test_a_test_worth_no_points_only_reports_as_otters_public_tests_do():
    """Otter-Grader writes no top-level score and a "Public Tests" entry with neither
    score nor max_score beside its scored questions; Gradescope adds nothing for it."""
    res = parse_results(json.dumps({"tests": [
        {"name": "Public Tests", "visibility": "visible", "status": "passed",
         "output": "q1 results: All test cases passed!"},
        {"name": "q1", "score": 3.0, "max_score": 3.0, "visibility": "hidden"},
        {"name": "q2", "score": 1, "max_score": 3.0, "visibility": "hidden"}]}).encode())
    assert (res.score, res.max_score) == (4.0, 6.0)
    with pytest.raises(ResultsError, match="worth points"):
        parse_results(json.dumps({"tests": [{"name": "a", "max_score": 2}]}).encode())
