"""Performance as a grade in the sandbox: primecount's reference and a submission run
interleaved on the first N of the shape's cores, with ASLR off per run and the node's
facts recorded; a wrong submission is not timed; the hand-in phase's groups time
nothing."""

from __future__ import annotations

import pytest
import yaml

from grader.core.perfresult import FACTS
from grader.core.verdict import Verdict
from grader.formats.load import load_problem

pytestmark = pytest.mark.sandbox


def test_a_submission_is_timed_against_the_reference(wide_judge, problem_copy):
    pkg = problem_copy("primecount")
    gl = yaml.safe_load((pkg / "gradeline.yaml").read_text())
    gl["performance"]["repetitions"] = {"min": 2, "max": 3, "warmup": 0}  # lean
    (pkg / "gradeline.yaml").write_text(yaml.safe_dump(gl))
    problem = load_problem(pkg)
    r = wide_judge.grade(problem, pkg / "submissions/accepted/parallel.c")
    perf = r.performance
    assert r.verdict is Verdict.AC and perf is not None and perf.gate == "", perf
    one, two = perf.measurements
    cpus = tuple(wide_judge.cpus[:2])
    assert (one.cores, one.cpus, two.cpus) == (1, cpus[:1], cpus)
    assert 2 <= two.submission.runs == two.reference.runs <= 3
    assert all(0.05 < t < 6 for t in one.reference.times_s + two.submission.times_s)
    # the reference against itself: about 1 however busy the machine is
    assert 0.6 < perf.items[0].figure < 1.6, perf.items
    assert r.score == pytest.approx(100 + perf.points) and r.max_score == 200
    facts = {f.name: f for f in two.facts}
    assert set(facts) == set(FACTS) and facts["aslr"].in_force is True
    assert "setarch -R" in facts["aslr"].value
    back = type(r).from_dict(r.to_dict())
    assert back.performance is not None and back.performance.to_json() == perf.to_json()

    wa = wide_judge.grade(problem, pkg / "submissions/wrong_answer/no_reduction.c")
    assert wa.verdict is Verdict.WA and wa.performance is not None
    assert wa.performance.measurements == () and wa.performance.points == 0
    assert "not accepted on the tests (WA)" in wa.performance.gate
    part = wide_judge.grade(problem.restricted(["sample"]),
                            pkg / "submissions/accepted/parallel.c")
    assert part.performance is None and part.max_score == 0
