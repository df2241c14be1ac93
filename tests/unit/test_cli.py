import json

import pytest

from grader import __main__ as cli
from grader.verdict import Verdict

from .test_result_export import make_result


def test_grade_json_calls_the_library(monkeypatch, capsys, tmp_path):
    calls = {}

    class FakeJudge:
        def __init__(self, sandbox, workroot, cpus, keep_workdirs=False):
            calls["cpus"] = cpus

        def grade(self, problem, submission, language):
            calls["grade"] = (problem.short_name, submission, language)
            return make_result({"secret/small/01": Verdict.WA})

    monkeypatch.setattr("grader.judge.Judge", FakeJudge)
    monkeypatch.setattr("grader.sandbox.open_sandbox", lambda *a, **k: object())
    from ..conftest import EXAMPLES
    assert cli.main(["grade", str(EXAMPLES / "bigsum"), "x.cpp", "--json", "--cpus", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "WA" and out["score"] == 70
    assert calls == {"cpus": [1], "grade": ("bigsum", "x.cpp", None)}


def test_errors_exit_2_with_message(capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        cli.main(["grade", str(tmp_path / "nope"), "x.cpp"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("gradeline: error: problem 'nope': ") and "is not a directory" in err


def test_cpu_list_parsing():
    assert cli._cpus("0-2,5") == [0, 1, 2, 5]
