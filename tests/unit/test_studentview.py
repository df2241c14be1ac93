"""What a student may see (``course.studentview``) and what they cannot forge
(``core.signing``): the rules every student channel goes through."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from grader.core.errors import RefusedError
from grader.core.result import GroupResult, SubmissionResult, TestResult
from grader.core.signing import check, open_token, signed, token
from grader.core.verdict import Verdict
from grader.course.load import load_course
from grader.course.shown import StudentView
from grader.course.studentview import SHOWN_BYTES, Submitted, student_view

from ..support import course_at, course_yaml

AC, WA = Verdict.AC, Verdict.WA
RULES = {"sample": "visible", "secret/a": "after_deadline", "secret/b": "after_release",
         "secret/h": "hidden"}


def _t(name: str, verdict: Verdict, marker: str) -> TestResult:
    return TestResult(name, name.rsplit("/", 1)[0], verdict, 0.01, 0.02,
                      feedback=f"{marker}-FEEDBACK", output=f"{marker}-OUTPUT" * 300)


def _record(groups: list[str], version: str) -> SubmissionResult:
    tests = tuple(_t(f"{g}/1", WA if g in ("sample", "secret/h") else AC,
                     g.upper().replace("/", "-")) for g in groups)
    gr = tuple(GroupResult(g, WA if g in ("sample", "secret/h") else AC, 10.0,
                           0.0 if g in ("sample", "secret/h") else 10.0, "sum", 0, 1)
               for g in groups)
    return SubmissionResult("hw1", version, "x", "h", "cpp", WA, 20.0, 40.0, None, tests, gr)


VISIBLE = _record(["sample"], "v1/groups-abc")
FULL = _record(["sample", "secret/a", "secret/b", "secret/h"], "v1")


def _view(tmp_path: Path, student: str, now_day: int, released: bool,
          subs: list[Submitted] | None = None) -> dict[str, object]:
    course = load_course(course_yaml(tmp_path, assignments=[
        {"name": "hw1", "package": "pk/hw1", "deadline": "2026-12-01 23:59",
         "visibility": RULES}]))
    subs = subs if subs is not None else [
        Submitted("s1", "hw1", course_at(1, 10), "graded", visible=VISIBLE, full=FULL),
        Submitted("s2", "hw1", course_at(1, 12), "quarantined", reason="an empty archive"),
        Submitted("s3", "hw1", course_at(1, 13), "waiting", sha256="ab" * 32)]
    view = student_view(course, student, subs,
                        released={"hw1": course_at(3, 9) if released else None},
                        now=course_at(now_day, 12),
                        case_data=lambda a, t: (f"IN:{t}" * 400, f"ANS:{t}"))
    assert StudentView.from_json(json.loads(json.dumps(view.to_json()))) == view
    return view.to_json()  # what every front end is given, in the form they read


def _shown(view: dict[str, object]) -> tuple[list[str], dict[str, object]]:
    sub = view["assignments"][0]["submissions"][0]  # type: ignore[index]
    return [t["name"] for t in sub["tests"]], sub


def test_before_the_deadline_a_student_sees_the_visible_groups_only(tmp_path: Path) -> None:
    view = _view(tmp_path, "alice", 1, released=False)
    names, sub = _shown(view)
    assert names == ["sample/1"]
    failed = sub["tests"][0]  # type: ignore[index]
    assert failed["input"] == ("IN:sample/1" * 400)[:SHOWN_BYTES]
    assert failed["expected"] == "ANS:sample/1"
    assert len(failed["output"]) == SHOWN_BYTES and failed["output"].startswith("SAMPLE-")
    assert (sub["verdict"], sub["score"], sub["max_score"], sub["complete"]) == \
        ("WA", 0.0, 10.0, False)
    text = json.dumps(view)
    assert "secret" not in text and "SECRET" not in text


def test_after_their_own_deadline_the_after_deadline_groups_show(tmp_path: Path) -> None:
    names, sub = _shown(_view(tmp_path, "alice", 2, released=False))
    assert names == ["sample/1", "secret/a/1"]
    assert sub["score"] == 10.0 and sub["max_score"] == 20.0 and not sub["complete"]
    names, _ = _shown(_view(tmp_path, "bob", 2, released=False))  # bob: 2 days more
    assert names == ["sample/1"]


def test_after_release_the_full_score_shows_and_hidden_groups_never(tmp_path: Path) -> None:
    view = _view(tmp_path, "alice", 4, released=True)
    names, sub = _shown(view)
    assert names == ["sample/1", "secret/a/1", "secret/b/1"]
    assert (sub["verdict"], sub["score"], sub["max_score"], sub["complete"]) == \
        ("WA", 20.0, 40.0, True)
    text = json.dumps(view)
    assert "secret/h" not in text and "SECRET-H" not in text


def test_refused_and_waiting_submissions_are_listed_with_what_is_known(tmp_path: Path
                                                                        ) -> None:
    subs = _view(tmp_path, "alice", 1, released=False)["assignments"][0]["submissions"]  # type: ignore[index]
    assert [(s["id"], s["state"], s["counts"]) for s in subs] == [
        ("s1", "graded", False), ("s2", "quarantined", False), ("s3", "waiting", True)]
    assert subs[1]["reason"] == "an empty archive"
    assert subs[2]["verdict"] is None and subs[2]["sha256"] == "ab" * 32


def test_a_compile_error_shows_the_compiler_and_no_groups(tmp_path: Path) -> None:
    from grader.core.result import CompileResult
    ce = SubmissionResult("hw1", "v1/groups-abc", "x", "h", "cpp", Verdict.CE, 0.0, 10.0,
                          CompileResult(ok=False, output="a.cpp:1: error"), (),
                          (GroupResult("sample", Verdict.CE, 0.0, 0.0, "sum", 0, 1),))
    view = _view(tmp_path, "alice", 1, False,
                 [Submitted("s1", "hw1", course_at(1, 10), "graded", visible=ce)])
    _, sub = _shown(view)
    assert (sub["verdict"], sub["score"], sub["groups"], sub["compile_output"]) == \
        ("CE", 0.0, [], "a.cpp:1: error")


KEY, OTHER = b"k" * 32, b"o" * 32


def test_a_receipt_checks_and_a_changed_one_is_refused() -> None:
    r = signed(KEY, {"submission": "s1", "student": "alice", "size": 10})
    assert check(KEY, r) == {"submission": "s1", "student": "alice", "size": 10}
    for forged in ({**r, "size": 11}, {**r, "student": "bob"}, {**r, "signature": "0" * 64},
                   {k: v for k, v in r.items() if k != "signature"}):
        with pytest.raises(RefusedError, match="does not match"):
            check(KEY, forged)
    with pytest.raises(RefusedError):
        check(OTHER, r)


def test_a_link_opens_until_it_expires_and_an_edited_one_never() -> None:
    t = token(KEY, {"student": "alice", "course": "c", "expires": course_at(1, 13).isoformat()})
    assert open_token(KEY, t, course_at(1, 12))["student"] == "alice"
    with pytest.raises(RefusedError, match="expired"):
        open_token(KEY, t, course_at(1, 13) + timedelta(seconds=1))
    body, mac = t.split(".")
    bob = token(OTHER, {"student": "bob", "course": "c", "expires": course_at(1, 13).isoformat()})
    for forged in (f"{bob.split('.')[0]}.{mac}", f"{body}.{'0' * 64}", "garbage", "",
                   bob):
        with pytest.raises(RefusedError, match="not a link"):
            open_token(KEY, forged, course_at(1, 12))


def test_similarity_keeps_pairs_above_the_threshold_in_a_stable_order() -> None:
    from grader.course.similarity_pairs import flagged, side_by_side
    span = {"file": "a.cpp", "start": 2, "end": 3}
    pairs = [{"first": "zed", "second": "amy", "similarity": 0.9,
              "matches": [{"first": span, "second": {**span, "start": 5, "end": 6},
                           "tokens": 12}]},
             {"first": "bo", "second": "cy", "similarity": 0.5, "matches": []},
             {"first": "bo", "second": "dee", "similarity": 0.49, "matches": []}]
    out = flagged(pairs, 0.5)
    assert [(p.a, p.b) for p in out] == [("amy", "zed"), ("bo", "cy")]
    # names sorted within a pair: the sides of its matches swap with them
    assert out[0].matches[0].first.start == 5
    view = side_by_side(out[0], {"a.cpp": "1\n2\n3\n4\n5\n6\n"}, {"a.cpp": "x\ny\nz\n"})
    assert [ln.match for ln in view.left[0].lines] == [0, 0, 0, 0, 1, 1]
    assert [ln.match for ln in view.right[0].lines] == [0, 1, 1]
