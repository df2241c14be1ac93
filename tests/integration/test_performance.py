"""Performance as a grade in the sandbox: primecount's reference and a submission run
interleaved on the first N of the shape's cores, with ASLR off per run and the node's
facts recorded; a wrong submission is not timed; the hand-in phase's groups time
nothing; a timed submission gets the cache reading on the package's small input."""

from __future__ import annotations

import os

import pytest
import yaml

from grader.adapters.metrics.judging import NodeCounter
from grader.core.perfresult import FACTS
from grader.core.verdict import Verdict
from grader.course.perfview import shown_performance
from grader.formats.load import load_problem
from grader.judge.cachecount import ASSUMED_L3_PER_CORE
from grader.judge.hostfacts import l3_per_core
from grader.judge.judge import Judge

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


def test_a_timed_submission_gets_a_cache_reading_in_the_sandbox(sandbox_factory, sbx_tmp,
                                                                problem_copy):
    """No hardware counters in this VM: cachegrind in the grading image, with a simulated
    L3 of the node's L3 per core times N, once per program and core count."""
    cpus = sorted(os.sched_getaffinity(0))[:2]
    if len(cpus) < 2:
        pytest.skip("a two-core shape needs two CPUs")
    work = sbx_tmp / "work"
    judge = Judge(sandbox_factory(cpus, work), work, cpus, counter=NodeCounter())
    try:
        pkg = problem_copy("primecount")
        gl = yaml.safe_load((pkg / "gradeline.yaml").read_text())
        gl["performance"]["repetitions"] = {"min": 2, "max": 2, "warmup": 0}
        (pkg / "gradeline.yaml").write_text(yaml.safe_dump(gl))
        r = judge.grade(load_problem(pkg), pkg / "submissions/accepted/parallel.c")
    finally:
        judge.close()
    perf = r.performance
    assert perf is not None and perf.gate == "" and perf.cache is not None, perf
    cache = perf.cache
    assert cache.failed == "" and cache.input == "small.in", cache
    per_core = l3_per_core(cpus[0])
    if judge.counter is not None and judge.counter.source == "cachegrind":
        assert cache.source == "cachegrind" and "no hardware counters" in cache.note
        assert [c.l3_bytes for c in cache.counts] == [
            n * (per_core or ASSUMED_L3_PER_CORE) for n in (1, 2)]
    assert [c.cores for c in cache.counts] == [1, 2]
    for c in cache.counts:
        for e in (c.submission, c.reference):
            assert 0 < e.l3_misses <= (e.l3_accesses or e.l3_misses)
    shown = shown_performance(perf).cache
    assert shown is not None and shown.reading.startswith(("L3 misses", "no L3 misses"))
