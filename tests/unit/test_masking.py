"""Names inside a student's own files, masked for graders of an anonymous assignment:
the student's id, email, SIS id and name parts become their pseudonym, another
student's id and email ``[student]``; code words that merely contain a name stay, and
every line stays where it was (comments are kept by line)."""

from __future__ import annotations

from grader.course.load import Student
from grader.course.masking import masked_files, masker
from grader.course.regrades import QueueRow, RegradeDetail
from grader.course.shown import RequestView
from grader.course.staffview import FileText, Stamps, SubmissionDetail
from grader.views.anonymity import MaskedStaff

ROSTER = {
    "alice": Student("alice", "Alice Van Learner", "alice.v@uni.example", sis_id="S-1001"),
    "bob": Student("bob", "Bob Ng", "bob@uni.example"),
    "al": Student("al", "Al Xu", "ax@uni.example"),
}
HEADER = ("// hw1 by Alice van Learner (alice, ALICE.V@uni.example, S-1001)\n"
          "// with bob (bob@uni.example); see alice.v's notes\n"
          "class AliceSolver { int learnerCount; }  // Learner.java\n")


def test_the_students_names_become_their_pseudonym_and_a_classmates_id_is_hidden() -> None:
    out = masker(ROSTER, "alice", "anon-abcdefgh")(HEADER)
    assert out.splitlines() == [
        "// hw1 by anon-abcdefgh anon-abcdefgh anon-abcdefgh (anon-abcdefgh, anon-abcdefgh, "
        "anon-abcdefgh)",
        "// with [student] ([student]); see anon-abcdefgh's notes",
        "class AliceSolver { int learnerCount; }  // anon-abcdefgh.java"]
    for name in ("Alice", "alice", "Learner", "S-1001", "bob"):
        assert name not in out.replace("AliceSolver", "").replace("learnerCount", "")
    # "van" is a part of her name (in any case); a two-letter part ("Ng") only as the
    # roster writes it; another student's id or email local part under three ("Al",
    # "ax") never
    assert masker(ROSTER, "bob", "anon-b")("Al, ax and Ng met bob Ng; ng = 2") == \
        "Al, ax and anon-b met anon-b anon-b; ng = 2"


def test_in_a_program_its_comments_and_strings_are_masked_never_its_code() -> None:
    roster = {"max": Student("max", "Max Power", "mp@uni.example")}
    code = ('"""hw1 by Max Power."""\n'
            "def top(xs):  # max's own\n"
            "    return max(xs)  # not min\n"
            'print("Max says", top([1, 2]))\n')
    [f] = masked_files([FileText("top.py", code)], roster, "max", "anon-m")
    assert f.text == ('"""hw1 by anon-m anon-m."""\n'
                      "def top(xs):  # anon-m's own\n"
                      "    return max(xs)  # not min\n"
                      'print("anon-m says", top([1, 2]))\n')
    [t] = masked_files([FileText("NOTES", "max and Max Power\n")], roster, "max", "anon-m")
    assert t.text == "anon-m and anon-m anon-m\n"  # no lexer: every word


def test_files_keep_their_names_and_lines() -> None:
    files = (FileText("alice_hw1.py", HEADER), FileText("empty.py", ""))
    out = masked_files(files, ROSTER, "alice", "anon-x")
    assert [f.name for f in out] == ["alice_hw1.py", "empty.py"]  # comments are by name
    assert [len(f.text.splitlines()) for f in out] == [3, 0]


class _Pages:  # the reads MaskedStaff passes on (views.staff_pages.StaffPages)
    def submission(self, spool_id: str) -> SubmissionDetail | None:
        return SubmissionDetail(spool_id, "alice", "hw1", "2026-12-01T10:00:00+01:00",
                                "graded", "", "python3", 0.0, Stamps(None, None, None, None),
                                (FileText("sum.c", HEADER),), ())

    def regrade(self, request: int) -> RegradeDetail | None:
        r = RequestView(1, "s-1", "group", "small", "off by one",
                        "2026-12-03T10:00:00+01:00", "alice", "open")
        return RegradeDetail(QueueRow(r, "hw1", "alice", 2.0), None, (),
                             (FileText("sum.c", HEADER),), ())


def test_a_grader_of_an_anonymous_assignment_reads_the_files_masked() -> None:
    masked = MaskedStaff(_Pages(), {"hw1"}, lambda a, s: f"anon-{s}-x",  # type: ignore[arg-type]
                         ROSTER)
    sub = masked.submission("s-1")
    assert sub is not None and sub.student == "anon-alice-x"
    assert "Learner" not in sub.files[0].text and "anon-alice-x" in sub.files[0].text
    req = masked.regrade(0)
    assert req is not None and "Learner" not in req.files[0].text
    shown = MaskedStaff(_Pages(), {"hw2"}, lambda a, s: s, ROSTER)  # type: ignore[arg-type]
    sub = shown.submission("s-1")
    assert sub is not None and sub.files[0].text == HEADER  # not hidden: as handed in
