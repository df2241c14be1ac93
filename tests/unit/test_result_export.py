import csv
import io
import json
import xml.etree.ElementTree as ET

from grader.core.export import csv_rows, gradescope, junit_xml
from grader.core.result import SubmissionResult
from grader.core.verdict import Verdict

from ..support import make_result


def test_scoring_all_or_nothing_and_proportional():
    r = make_result({"secret/small/02": Verdict.WA, "secret/large/01": Verdict.TLE})
    by = {g.name: g for g in r.groups}
    assert by["secret/small"].score == 0            # all or nothing: one WA loses 30
    assert by["secret/large"].score == 52.5         # proportional: 3 of 4 of 70
    assert r.score == 52.5
    assert r.verdict is Verdict.TLE                 # large/01 comes before small/02
    assert make_result({}).score == 100


def test_json_round_trip():
    r = make_result({"secret/small/02": Verdict.WA})
    d = json.loads(json.dumps(r.to_dict()))
    assert d["schema"] == "gradeline/result" and d["schema_version"] == 1
    assert d["verdict"] == "WA" and d["score"] == 70
    back = SubmissionResult.from_dict({**d, "new_key": 1})
    assert back == r


def test_csv_export():
    rows = list(csv.DictReader(io.StringIO(csv_rows([("alice", make_result({}))]))))
    assert rows[0]["student"] == "alice" and rows[0]["verdict"] == "AC"
    assert rows[0]["score"] == "100" and rows[0]["group:secret/large"] == "70"


def test_gradescope_export():
    g = gradescope(make_result({"secret/small/02": Verdict.WA}))
    assert g["score"] == 70
    names = {t["name"]: t for t in g["tests"]}
    assert names["secret/small"]["status"] == "failed"
    assert names["secret/small"]["max_score"] == 30 and names["secret/small"]["score"] == 0
    assert names["sample"]["visibility"] == "visible"
    assert names["secret/large"]["visibility"] == "after_due_date"
    assert "secret/small/02: WA" in names["secret/small"]["output"]
    for t in g["tests"]:
        assert set(t) >= {"name", "score", "max_score", "status", "output", "visibility"}


def test_junit_export():
    xml = junit_xml([("bob", make_result({"secret/small/02": Verdict.WA}))])
    root = ET.fromstring(xml.split("\n", 1)[1])
    suite = root.find("testsuite")
    assert suite is not None and suite.get("failures") == "1"
    failed = [tc for tc in suite.iter("testcase") if tc.find("failure") is not None]
    assert [tc.get("name") for tc in failed] == ["secret/small/02"]
