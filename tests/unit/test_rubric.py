"""Grading by hand, the pure side: a rubric file read (and refused where it is wrong,
naming the place), a question's points clamped, graders assigned stably, pseudonyms
keyed per assignment, hand-grades joined to the autograder's score as the rubric says
(an item's points changed recomputes every grade that used it), the evaluation CSV,
the graders' statistics, the grading form checked and what a student is shown."""

from __future__ import annotations

import copy
import csv
import io
from collections import Counter
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.core.errors import ConfigError
from grader.course.gradingview import FormProblem, Viewer, applied, read_form
from grader.course.handgrades import (
    LineComment,
    QuestionGrade,
    evaluation_csv,
    grader_stats,
    hand_total,
    possible,
    shown_hand,
    summary,
    with_hand_grades,
)
from grader.course.lms_grades import Posting, lms_postings
from grader.course.load import load_course
from grader.course.policy import Attempt, grade_course
from grader.course.rubric import (
    QuestionSpec,
    grader_of,
    is_pseudonym,
    pseudonym,
    question_points,
)

from ..support import RUBRIC, course_at, course_yaml, with_rubric


def _course(tmp_path: Path, rubric: object = RUBRIC):
    return load_course(with_rubric(course_yaml(tmp_path), rubric))


def _grade(student: str, question: str, items: tuple[str, ...], adjustment: float = 0.0,
           grader: str = "ta1", comments: tuple[LineComment, ...] = ()) -> QuestionGrade:
    return QuestionGrade(student, question, "s-" + student, items, adjustment,
                         "why" if adjustment else "", grader, 1, "2026-12-03T10:00:00+01:00",
                         comments)


def test_a_rubric_is_read_with_the_course_and_totals_what_it_says(tmp_path: Path) -> None:
    course = _course(tmp_path)
    r = course.assignments["hw1"].rubric
    assert r is not None and r.max_points == 10 and len(r.sha256) == 64
    assert course.assignments["hw2"].rubric is None
    style, design = r.questions
    assert question_points(style, ()) == 4  # by deduction: it starts full
    assert question_points(style, ("names", "dup")) == 1
    assert question_points(style, ("tidy",)) == 4  # clamped at max (points)
    assert question_points(style, ("dup", "dup", "dup")) == 0  # clamped at min
    assert question_points(style, ("names",), adjustment=0.5) == 3.5  # after the clamp
    assert question_points(design, ("gone",)) == 0  # an id the rubric lost counts nothing
    total = hand_total(r, {"style": _grade("alice", "style", ("names",)),
                           "design": _grade("alice", "design", ("d-part",))})
    assert (total.points, total.maximum, total.complete) == (6, 10, True)


@pytest.mark.parametrize(("change", "where", "says"), [
    (lambda r: r["questions"][0]["items"][1].update(id="names"), "rubric.yaml",
     "item ids must be unique: names given twice"),
    (lambda r: r["questions"][1]["items"][1].update(key="a"), "rubric.yaml",
     "keys must be unique: a given twice"),
    (lambda r: r["questions"][1]["items"][0].update(id="names"), "rubric.yaml",
     "item ids (across questions: a regrade request names one) must be unique"),
    (lambda r: r["questions"][0].update(start=9), "questions[0]",
     "start 9 is outside min..max (0..4)"),
    (lambda r: r["questions"][0].update(grader=["ta1"]), "questions[0]",
     "unknown key 'grader' (did you mean 'graders'?)"),
    (lambda r: r["questions"][0]["items"][0].update(key="F1"), "questions[0].items[0].key",
     "should match pattern"),
    (lambda r: r.update(combine="sum"), "combine", "'sum' is not a value it takes"),
    (lambda r: r["questions"][0].update(graders={"ta1": 0}), "questions[0].graders",
     "a grader's weight is a positive number"),
])
def test_a_wrong_rubric_is_refused_naming_its_file_line_and_key(
        tmp_path: Path, change, where: str, says: str) -> None:
    rubric = copy.deepcopy(RUBRIC)
    change(rubric)
    with pytest.raises(ConfigError) as e:
        _course(tmp_path, rubric)
    assert "rubric.yaml:" in str(e.value) and where in str(e.value) and says in str(e.value), \
        str(e.value)


def test_a_missing_rubric_file_is_named_where_the_course_file_names_it(tmp_path: Path
                                                                      ) -> None:
    p = course_yaml(tmp_path)
    data = yaml.safe_load(p.read_text())
    data["assignments"][0]["rubric"] = "nope.yaml"
    p.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"assignments\[0\]\.rubric: .*nope.yaml: cannot "
                                          "read the rubric"):
        load_course(p)


@settings(max_examples=60, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) |
                    st.dictionaries(st.sampled_from(["id", "items", "points", "questions",
                                                     "title", "key", "x"]), inner,
                                    max_size=4), max_leaves=12))
def test_any_rubric_data_is_read_or_refused_with_a_config_error(data: object) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        try:
            _course(Path(tmp), data)
        except ConfigError as e:
            assert "rubric.yaml" in str(e)


def test_graders_are_assigned_stably_by_weight_and_by_section() -> None:
    q = QuestionSpec.model_validate({**RUBRIC["questions"][0],  # type: ignore[index]
                                     "graders": {"ta1": 3, "ta2": 1}})
    students = [f"s{i:03d}" for i in range(400)]
    first = {s: grader_of(q, "hw1", s) for s in students}
    assert first == {s: grader_of(q, "hw1", s) for s in students}  # stable
    share = Counter(first.values())
    assert 250 < share["ta1"] < 350 and share["ta1"] + share["ta2"] == 400  # about 3:1
    more = QuestionSpec.model_validate({**q.model_dump(), "graders": {"ta1": 3, "ta2": 1,
                                                                      "ta3": 1}})
    moved = [s for s in students if grader_of(more, "hw1", s) != first[s]]
    assert all(grader_of(more, "hw1", s) == "ta3" for s in moved)  # only to the new one
    by_section = QuestionSpec.model_validate({**q.model_dump(), "sections": {"B": ["ta9"]}})
    assert grader_of(by_section, "hw1", "s001", "B") == "ta9"
    assert grader_of(by_section, "hw1", "s001", "A") == first["s001"]
    assert grader_of(QuestionSpec.model_validate(RUBRIC["questions"][1]),  # type: ignore[index]
                     "hw1", "s001") is None  # nobody named: anyone may


def test_pseudonyms_are_keyed_stable_and_per_assignment() -> None:
    a = pseudonym(b"k" * 32, "cs101", "hw1", "alice")
    assert is_pseudonym(a) and a == pseudonym(b"k" * 32, "cs101", "hw1", "alice")
    assert a != pseudonym(b"k" * 32, "cs101", "hw2", "alice")
    assert a != pseudonym(b"j" * 32, "cs101", "hw1", "alice")  # the roster gives it not away
    assert "alice" not in a


def _dir(tmp_path: Path, name: str) -> Path:
    (tmp_path / name).mkdir()
    return tmp_path / name


def _attempts() -> list[Attempt]:
    return [Attempt("s-alice", "alice", "hw1", course_at(1, 10), 0.5, 0.5),
            Attempt("s-bob", "bob", "hw1", course_at(3, 10), 1.0, 1.0)]  # 2 d late, 2d ext


def test_hand_grades_join_the_final_grade_as_the_rubric_says(tmp_path: Path) -> None:
    course = _course(tmp_path)
    hw1 = course.assignments["hw1"]
    grades = grade_course(course, _attempts(), {"hw1": 100.0, "hw2": 100.0})
    hand = {"hw1": [_grade("alice", "style", ("names",)),
                    _grade("alice", "design", ("d-full",)),
                    _grade("bob", "style", ())]}
    joined = {g.student: g for g in with_hand_grades(course, grades, hand, {"hw1": 100.0})
              if g.assignment == "hw1"}
    assert possible(hw1, 100.0) == 30  # 20 points of its own + 10 by hand
    alice = joined["alice"]
    assert alice.status == "final" and alice.points == pytest.approx(0.5 * 20 + 3 + 6)
    assert joined["bob"].status == "pending" and joined["bob"].points is None  # design open

    replaced = _course(_dir(tmp_path, "r"), {**RUBRIC, "combine": "replace"})
    again = {g.student: g for g in with_hand_grades(
        replaced, grade_course(replaced, _attempts(), {"hw1": 100.0}), hand, {"hw1": 100.0})
        if g.assignment == "hw1"}
    assert possible(replaced.assignments["hw1"], 100.0) == 20
    assert again["alice"].points == pytest.approx(0.5 * 10 + 9)

    edited = copy.deepcopy(RUBRIC)  # an item's points changed: every grade using it too
    edited["questions"][0]["items"][0]["points"] = -3  # type: ignore[index]
    course2 = _course(_dir(tmp_path, "e"), edited)
    alice2 = next(g for g in with_hand_grades(course2, grades, hand, {"hw1": 100.0})
                  if g.student == "alice" and g.assignment == "hw1")
    assert alice2.points == pytest.approx(0.5 * 20 + 1 + 6)


def test_the_evaluation_csv_has_a_column_per_item_and_the_stats_a_row_per_grader(
        tmp_path: Path) -> None:
    r = _course(tmp_path).assignments["hw1"].rubric
    assert r is not None
    c = LineComment(1, "sum.py", 3, 4, "what is x?", "names", "ta1", "")
    rows = [("anon-aaaaaaaa", "s-alice", {"style": _grade("alice", "style", ("names",), 0.5,
                                                          comments=(c,))}),
            ("anon-bbbbbbbb", "s-bob", {"style": _grade("bob", "style", ("dup",),
                                                        grader="ta2")})]
    table = list(csv.DictReader(io.StringIO(evaluation_csv(r, rows))))
    assert [t["student"] for t in table] == ["anon-aaaaaaaa", "anon-bbbbbbbb"]
    first = table[0]
    assert (first["names"], first["dup"], first["tidy"], first["style"]) == \
        ("TRUE", "FALSE", "FALSE", "3.5")
    assert first["style:adjustment"] == "0.5" and "sum.py:3-4: what is x?" in \
        first["style:comments"]
    assert first["d-full"] == "" and first["questions_graded"] == "1"
    stats = {(s.grader, s.question): s for s in grader_stats(r, [g for _, _, m in rows
                                                                 for g in m.values()])}
    assert stats[("ta1", "style")].mean_points == 3.5
    assert {i.item: i.share for i in stats[("ta2", "style")].items}["dup"] == 1.0
    text = summary(r, rows[0][2])
    assert "3.5 of 10" in text and "-1 Unclear names" in text and "(why)" in text


def test_the_grading_form_is_checked_against_the_question_and_files(tmp_path: Path) -> None:
    r = _course(tmp_path).assignments["hw1"].rubric
    assert r is not None
    style, design = r.questions
    files = {"sum.py": 10}
    ok = read_form({"version": ["2"], "item": ["names", "dup"], "adjustment": ["-0.5"],
                    "reason": ["late comments"], "comment": ["why x?"], "file": ["sum.py"],
                    "first": ["3"], "last": ["4"], "comment_item": ["tidy"],
                    "then": ["next"]}, style, files)
    assert (ok.version, ok.items, ok.adjustment, ok.then) == (2, ("names", "dup"), -0.5,
                                                              "next")
    assert applied(ok, style) == ("names", "dup", "tidy")
    one = read_form({"version": ["0"], "comment": ["no"], "file": ["sum.py"], "first": ["2"],
                     "comment_item": ["d-none"], "item": ["d-full"]}, design, files)
    assert applied(one, design) == ("d-none",)  # a select-one question: it replaces
    for fields, field in [({"version": ["x"]}, "version"),
                          ({"version": ["1"], "item": ["d-full"]}, "item"),
                          ({"version": ["1"], "adjustment": ["lots"]}, "adjustment"),
                          ({"version": ["1"], "adjustment": ["1"]}, "reason"),
                          ({"version": ["1"], "comment": ["c"], "file": ["x.py"]}, "file"),
                          ({"version": ["1"], "comment": ["c"], "file": ["sum.py"],
                            "first": ["11"]}, "first"),
                          ({"version": ["1"], "comment": ["c"], "file": ["sum.py"],
                            "first": ["5"], "last": ["4"]}, "last")]:
        with pytest.raises(FormProblem) as e:
            read_form(fields, style, files)
        assert e.value.field == field, (fields, str(e.value))
    with pytest.raises(FormProblem, match="takes one item at most"):
        read_form({"version": ["1"], "item": ["d-full", "d-part"]}, design, files)
    assert Viewer("ta1", False).user == "ta1"


def test_a_student_sees_the_items_the_comment_at_its_lines_never_notes_or_graders(
        tmp_path: Path) -> None:
    r = _course(tmp_path).assignments["hw1"].rubric
    assert r is not None
    c = LineComment(1, "sum.py", 2, 3, "x is a poor name", "names", "ta1", "")
    view = shown_hand(r, {"style": _grade("alice", "style", ("names",), comments=(c,))},
                      {"sum.py": ["import sys", "x = 1", "y = x", "print(y)"]})
    [q] = view.questions
    assert (view.points, view.max_points, view.complete) == (3, 10, False)
    assert [(i.id, i.applied) for i in q.items] == [("names", True), ("tidy", False)]
    [shown] = q.comments
    assert shown.lines == ("x = 1", "y = x") and shown.item == "Unclear names"
    text = str(view.to_json())
    assert "Not for loop indices" not in text and "ta1" not in text


def test_the_lms_gets_the_hand_grade_with_its_summary_once_complete(tmp_path: Path) -> None:
    course = _course(tmp_path)
    released = {"hw1": course_at(5, 9), "hw2": None}
    half = {"hw1": [_grade("alice", "style", ("names",))]}
    posts = lms_postings(course, "lms", _attempts(), released, {"hw1": 100.0},
                         {"alice": "u-alice"}, hand=half)
    assert posts == []  # design is not graded yet: nothing final to post
    whole = {"hw1": [*half["hw1"], _grade("alice", "design", ("d-part",))]}
    [p] = lms_postings(course, "lms", _attempts(), released, {"hw1": 100.0},
                       {"alice": "u-alice"}, hand=whole)
    assert (p.given, p.maximum, p.grading) == (16.0, 30.0, "FullyGraded")
    assert p.comment.startswith("Graded by hand: 6 of 10.") and "Unclear names" in p.comment
    assert p.value["comment"] == p.comment
    plain = Posting("c", "hw2", "u", 1.0, 2.0, "FullyGraded", "Completed", None)
    assert "comment" not in plain.value  # entries without one compare as they always did


def test_a_rubric_questions_adjustment_and_an_override_count_after_the_hand_grade(
        tmp_path: Path) -> None:
    from grader.course.grade_changes import GradeChange, Target
    course = _course(tmp_path)
    hand = {"hw1": [_grade("alice", "style", ("names",)), _grade("alice", "design", ("d-part",)),
                    _grade("bob", "style", ()), _grade("bob", "design", ("d-full",))]}
    at = course_at(6, 9)
    changes = [GradeChange("hw1", Target("rubric", "style"), "s-alice", "alice", 3.0, 4.0,
                           4.0, "the names are fine", "ta1", at, 1),
               GradeChange("hw1", Target("grade", ""), "", "bob", 0.0, 15.0, 30.0,
                           "took no part", "prof", at)]
    grades = grade_course(course, _attempts(), {"hw1": 100.0}, changes=changes)
    joined = {g.student: g for g in with_hand_grades(course, grades, hand, {"hw1": 100.0},
                                                     changes) if g.assignment == "hw1"}
    alice, bob = joined["alice"], joined["bob"]
    assert alice.points == pytest.approx(0.5 * 20 + 3 + 3 + 1)  # +1 on style, by hand
    assert any("rubric question style: 3 -> 4" in c for c in alice.changes)
    assert bob.points == pytest.approx(15.0)  # the override stands over the hand-grade
    plain = {g.student: g for g in with_hand_grades(course, grades, hand, {"hw1": 100.0})
             if g.assignment == "hw1"}
    assert plain["alice"].points == pytest.approx(16.0)
