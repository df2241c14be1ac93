import json

import pytest

from grader.cli import main as cli
from grader.compose.context import Context
from grader.core.cpuset import CpuSet
from grader.core.jobs import JudgeFault, Outcome
from grader.core.verdict import Verdict
from grader.settings import Settings

from ..support import make_result


def test_grade_json_calls_the_library(monkeypatch, capsys, tmp_path):
    calls = {}

    class FakeJudge:
        def close(self):
            calls["closed"] = True

        def grade_job(self, job):
            calls["grade"] = (job.problem.name, str(job.source), job.language)
            return Outcome(job.key, make_result({"secret/small/01": Verdict.WA}), "", "")

    def judge(self, cpus, keep_workdirs=False):
        calls["cpus"] = list(cpus)
        return FakeJudge()

    monkeypatch.setattr(Context, "judge", judge)
    from ..support import EXAMPLES
    assert cli.main(["grade", str(EXAMPLES / "bigsum"), "x.cpp", "--json", "--cpus", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "WA" and out["score"] == 70
    assert calls == {"cpus": [1], "grade": ("bigsum", "x.cpp", None), "closed": True}


def test_a_grading_failure_is_a_je_result_not_a_crash(monkeypatch, capsys):
    class BrokenJudge:
        def close(self):
            pass

        def grade_job(self, job):
            return Outcome(job.key, JudgeFault("internal error: KeyError: 'x'"), "", "")

    monkeypatch.setattr(Context, "judge", lambda self, cpus, keep_workdirs=False: BrokenJudge())
    from ..support import EXAMPLES
    assert cli.main(["grade", str(EXAMPLES / "bigsum"), "x.cpp", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "JE" and "KeyError" in out["message"]


def test_errors_exit_2_with_message(capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        cli.main(["grade", str(tmp_path / "nope"), "x.cpp"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("gradeline: error: problem 'nope': ") and "is not a directory" in err


def test_bad_settings_are_an_error_naming_the_variable(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("GRADELINE_RUNTIME", "docker")
    with pytest.raises(SystemExit) as e:
        cli.main(["examples"])
    assert e.value.code == 2
    assert "GRADELINE_RUNTIME='docker': use one of auto, apptainer, bwrap" in \
        capsys.readouterr().err


def test_cpu_list_option(tmp_path):
    ctx = Context(Settings(state_dir=tmp_path), tmp_path)
    assert ctx.cpus("0-2,5") == CpuSet([0, 1, 2, 5])
    assert ctx.cpus(None) == CpuSet.allowed()
