"""JUnit XML as real test runners write it, read into per-test results with points;
forged, malformed and hostile reports refused with the reason."""

from __future__ import annotations

import subprocess
import sys

import pytest

from grader.core.junit import ReportError, parse_junit, to_test_results
from grader.core.verdict import Verdict

TESTS = '''
import pytest
def test_adds(): assert 1 + 1 == 2
def test_sorts(): assert sorted([2, 1]) == [2, 1], "not sorted"
def test_crashes(): raise KeyError("boom")
@pytest.mark.skip(reason="later")
def test_later(): pass
class TestLists:
    def test_empty(self): assert [] == []
'''

# JUnit 5's console launcher (--reports-dir, legacy XML), trimmed
JUNIT5 = b'''<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="JUnit Jupiter" tests="2" skipped="0" failures="1" errors="0" time="0.05">
  <testcase name="addsUp()" classname="ListsTest" time="0.012"/>
  <testcase name="sorts()" classname="ListsTest" time="0.003">
    <failure message="expected: &lt;[1, 2]&gt; but was: &lt;[2, 1]&gt;"
             type="org.opentest4j.AssertionFailedError">stack</failure>
  </testcase>
</testsuite>'''


def test_a_real_pytest_report_reads_with_points_per_test_and_class(tmp_path):
    (tmp_path / "test_hw.py").write_text(TESTS)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    f"--junitxml={tmp_path / 'r.xml'}", str(tmp_path / "test_hw.py")],
                   cwd=tmp_path, capture_output=True, check=False)
    cases = parse_junit((tmp_path / "r.xml").read_bytes())
    assert {c.id: c.verdict for c in cases} == {
        "test_hw.test_adds": Verdict.AC, "test_hw.test_sorts": Verdict.WA,
        # pytest reports any exception in a test's body as a failure; <error> is for
        # set-up and tear-down (a fixture that crashed)
        "test_hw.test_crashes": Verdict.WA, "test_hw.test_later": None,
        "test_hw.TestLists.test_empty": Verdict.AC}
    rows = to_test_results(cases, {"test_hw.TestLists.*": 3.0, "test_hw.test_adds": 2.0})
    assert [(r.name, r.verdict, r.points) for r in rows] == [
        ("test_hw.test_adds", Verdict.AC, 2.0), ("test_hw.test_sorts", Verdict.WA, 0.0),
        ("test_hw.test_crashes", Verdict.WA, 0.0),
        ("test_hw.TestLists.test_empty", Verdict.AC, 3.0)]
    assert "not sorted" in rows[1].feedback and "boom" in rows[2].feedback


def test_an_error_is_a_run_error():
    cases = parse_junit(b"<testsuites><testsuite><testcase name='t' classname='C'>"
                        b"<error message='fixture crashed'/></testcase></testsuite></testsuites>")
    assert [(c.id, c.verdict, c.message) for c in cases] == [("C.t", Verdict.RE, "fixture crashed")]


def test_a_junit5_report_reads():
    cases = parse_junit(JUNIT5)
    assert [(c.id, c.verdict) for c in cases] == [("ListsTest.addsUp()", Verdict.AC),
                                                  ("ListsTest.sorts()", Verdict.WA)]
    assert cases[0].time_s == 0.012 and "but was" in cases[1].message


LAUGHS = b'''<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaaaaaaaa">
<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
<!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">
<!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;"><!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;">
<!ENTITY h "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;">]><testsuite><testcase name="&h;"/></testsuite>'''


@pytest.mark.parametrize(("data", "reason"), [
    (b"", "not XML"),
    (b"<testsuite><testcase name='a'>", "not XML"),
    (b"<html><body/></html>", "not <testsuites>"),
    (b"<testsuite><testcase classname='x'/></testsuite>", "without a name"),
    (b"<testsuite><testcase name='a'/><testcase name='a'/></testsuite>", "twice"),
    (LAUGHS, "refused"),
    (b"<testsuite>" + b"<!-- x -->" * 500_000 + b"</testsuite>", "over the"),
])
def test_a_report_that_is_not_one_is_refused_with_the_reason(data, reason):
    with pytest.raises(ReportError, match=reason):
        parse_junit(data)


def test_an_external_entity_is_not_read():
    doc = (b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
           b'<testsuite><testcase name="a"><failure message="&x;"/></testcase></testsuite>')
    with pytest.raises(ReportError):
        parse_junit(doc)


def test_one_document_per_test_binary_is_read_as_one_report():
    """``cargo test -- --format junit`` writes a document per test binary, one after
    another; a test named in two of them is still refused."""
    one = ('<?xml version="1.0" encoding="UTF-8"?><testsuites><testsuite name="test">'
           '<testcase classname="unknown" name="{}" time="0"/></testsuite></testsuites>')
    cases = parse_junit((one.format("a") + one.format("b")).encode())
    assert [c.id for c in cases] == ["unknown.a", "unknown.b"]
    with pytest.raises(ReportError, match="twice"):
        parse_junit((one.format("a") + one.format("a")).encode())


def test_what_a_failed_test_printed_is_its_feedback_when_the_failure_says_nothing():
    """CTest's and libtest's failures carry no text: the test's output says why."""
    report = ('<testsuite><testcase name="test_counts" classname="test_counts">'
              '<failure message="Failed"/><system-out>expected 3, got 2</system-out>'
              '</testcase><testcase name="ok"><system-out>noise</system-out></testcase>'
              '</testsuite>')
    failed, ok = parse_junit(report.encode())
    assert failed.message == "Failed\nexpected 3, got 2" and ok.message == ""
