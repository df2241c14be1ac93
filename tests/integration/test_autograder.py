"""Gradescope autograders run unchanged in the sandbox: the bundled Python unittest
autograder gives the scores its results.json says, a zip grades as its directory does,
and whatever run_autograder leaves behind (no results, a malformed, oversized or linked
file) is a judge error with the reason; hostile runs end in a verdict."""
import subprocess
import time
import zipfile
from pathlib import Path

import pytest
import yaml

from grader.core.jobs import GradingJob, JudgeFault
from grader.core.verdict import Verdict
from grader.formats.load import load_problem

from ..support import own_sleep, sleeping

pytestmark = pytest.mark.sandbox


def _package(problem_copy, **changes) -> Path:
    first = problem_copy("wordfreq")  # each package a directory of its own
    root = first.with_name(f"wordfreq-{len(list(first.parent.iterdir()))}")
    first.rename(root)
    gl = yaml.safe_load((root / "gradeline.yaml").read_text())
    gl.update(changes)
    gl = {k: v for k, v in gl.items() if v is not None}
    (root / "gradeline.yaml").write_text(yaml.safe_dump(gl))
    return root


def _grade(judge, root: Path, submission: str):
    return judge.grade(load_problem(root), root / "submissions" / submission)


@pytest.mark.parametrize("submission,verdict,score,failed", [
    ("accepted", Verdict.AC, 10, set()),
    ("wrong_answer", Verdict.WA, 6, {"ignores punctuation", "breaks ties alphabetically"}),
    ("rejected", Verdict.WA, 0, {"counts words", "ignores case", "ignores punctuation",
                                       "breaks ties alphabetically", "handles empty text"}),
])
def test_the_bundled_autograder_scores_as_its_results_say(judge, problem_copy, submission,
                                                          verdict, score, failed):
    r = _grade(judge, _package(problem_copy), submission)
    assert (r.verdict, r.score, r.max_score) == (verdict, score, 10), r.message
    assert {t.name for t in r.tests if t.verdict is not Verdict.AC} == failed
    groups = {t.name: t.group for t in r.tests}  # each test where its visibility says
    assert groups["handles empty text"] == "gradescope/hidden"
    assert groups["breaks ties alphabetically"] == "gradescope/after_deadline"
    assert groups["counts words"] == "gradescope/visible"
    assert sum(g.score for g in r.groups) == score
    assert r.runtime["autograder"] == "gradescope" and r.language == "python3"


def test_a_run_over_its_time_out_is_tle_with_the_reason(judge, problem_copy):
    r = _grade(judge, _package(problem_copy, timeout_s=2), "time_limit_exceeded")
    assert (r.verdict, r.score) == (Verdict.TLE, 0)
    assert [(t.name, t.verdict) for t in r.tests] == [("run_autograder", Verdict.TLE)]
    assert r.message.startswith("the autograder stopped:") and "2 s limit" in r.message


def test_a_zipped_autograder_grades_as_its_directory(judge, problem_copy):
    root = _package(problem_copy, autograder=None)
    ag = root / "autograder"
    with zipfile.ZipFile(root / "autograder.zip", "w") as z:
        for p in sorted(ag.rglob("*")):
            z.write(p, p.relative_to(ag).as_posix())
    subprocess.run(["rm", "-r", str(ag)], check=True)
    r = _grade(judge, root, "wrong_answer")
    assert (r.verdict, r.score) == (Verdict.WA, 6)


def test_a_zip_of_the_folder_is_refused_with_the_remedy(judge, problem_copy):
    root = _package(problem_copy, autograder="autograder.zip")
    with zipfile.ZipFile(root / "autograder.zip", "w") as z:
        for p in sorted((root / "autograder").rglob("*")):
            z.write(p, p.relative_to(root).as_posix())  # autograder/setup.sh ...
    outcome = judge.grade_job(GradingJob(root, root / "submissions" / "accepted"))
    assert isinstance(outcome.result, JudgeFault)
    assert "zip the files, not the folder" in outcome.result.reason


def _script(problem_copy, body: str, **changes) -> Path:
    root = _package(problem_copy, **changes)
    (root / "autograder" / "run_autograder").write_text("#!/bin/bash\n" + body + "\n")
    return root


@pytest.mark.parametrize("body,why", [
    ("exit 0", "wrote no /autograder/results/results.json"),
    ("echo '{not json' > /autograder/results/results.json", "not JSON"),
    ("head -c 2000000 /dev/zero | tr '\\0' ' ' > /autograder/results/results.json",
     "over the 1048576 allowed"),
    ("ln -s /etc/passwd /autograder/results/results.json", "is a link"),
    ("echo '{\"score\": \"ten\"}' > /autograder/results/results.json", "not a number"),
    ("echo '{\"tests\": [{\"score\": 1, \"status\": \"maybe\"}]}' "
     "> /autograder/results/results.json", "passed or failed"),
])
def test_what_run_autograder_leaves_is_checked(judge, problem_copy, body, why):
    r = _grade(judge, _script(problem_copy, body), "accepted")
    assert r.verdict is Verdict.JE and r.score == 0, r
    assert why in r.message


def test_hostile_autograder_runs_end_in_a_verdict_and_leave_nothing(judge, problem_copy):
    ok = ("echo '{\"score\": 1, \"tests\": [{\"name\": \"t\", \"score\": 1, "
          "\"max_score\": 1}]}' > /autograder/results/results.json")
    # a process left running in the background ends with the run, not at the time-out
    t0 = time.monotonic()
    long, short = own_sleep(300), own_sleep(60)  # durations only this test's runs have
    r = _grade(judge, _script(problem_copy, f"setsid sleep {long} & disown\n{ok}",
                              timeout_s=30), "accepted")
    assert r.verdict is Verdict.AC and time.monotonic() - t0 < 20
    assert sleeping(long) == []
    # a fork bomb meets the process limit and the time-out
    r = _grade(judge, _script(problem_copy, f"f() {{ f | f & }}; f; sleep {short}",
                              timeout_s=3, processes=64), "accepted")
    assert r.verdict in (Verdict.TLE, Verdict.JE)
    assert sleeping(short) == []
    # no network: no route out, only loopback
    net = ("python3 -c \"import socket,json\ns=socket.socket(socket.AF_INET,"
           "socket.SOCK_DGRAM)\ntry:\n    s.connect(('192.0.2.1',53)); ok=0\n"
           "except OSError:\n    ok=1\nprint(json.dumps({'score':ok,'tests':[{'name':'no route',"
           "'score':ok,'max_score':1}]}))\" > /autograder/results/results.json")
    r = _grade(judge, _script(problem_copy, net, max_score=1), "accepted")
    assert (r.verdict, r.score) == (Verdict.AC, 1), r


def test_without_a_declared_max_score_the_results_give_it(judge, problem_copy):
    r = _grade(judge, _package(problem_copy, max_score=None), "wrong_answer")
    assert (r.score, r.max_score) == (6, 10)


def test_submission_metadata_names_the_student_and_the_hand_in_time(judge, problem_copy):
    body = ("python3 -c \"import json; m = json.load(open('/autograder/submission_metadata."
            "json')); print(json.dumps({'score': 1, 'output': m['users'][0]['id'] + ' ' + "
            "m['created_at'] + ' ' + m['assignment']['title'], 'tests': []}))\" "
            "> /autograder/results/results.json")
    root = _script(problem_copy, body, max_score=1)
    r = judge.grade(load_problem(root), root / "submissions" / "accepted", student="alice",
                    submitted_at="2026-12-01T20:00:00+00:00")
    assert r.message == "alice 2026-12-01T20:00:00+00:00 Word frequencies", r


def test_a_team_submission_lists_every_member_for_the_autograder(judge, problem_copy):
    body = ("python3 -c \"import json; m = json.load(open('/autograder/submission_metadata."
            "json')); print(json.dumps({'score': 1, 'output': ' '.join(u['id'] for u in "
            "m['users']) + ' ' + str(m['assignment']['group_submission']), 'tests': []}))\" "
            "> /autograder/results/results.json")
    root = _script(problem_copy, body, max_score=1)
    r = judge.grade(load_problem(root), root / "submissions" / "accepted", student="bob",
                    submitted_at="2026-12-01T20:00:00+00:00", team=("alice", "bob"))
    assert r.message == "alice bob True", r
