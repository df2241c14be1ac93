"""Performance as a grade, the pure part: the maps that turn figures into points
(CS149's ratio bands, CS267's efficiency map), the figures read from interleaved
series, the stopping rule, the gate, and the record's round trip."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from grader.core.perfresult import Fact, Measurement, Performance, Series
from grader.core.perfscore import enough, figure, score
from grader.core.perfspec import Item, PerformanceSpec, PointsMap, Repetitions
from grader.core.result import SubmissionResult
from grader.core.verdict import Verdict

CS267 = PointsMap("linear", ((0.0, 0.0), (0.5, 75.0), (0.8, 100.0)))
CS149 = PointsMap("bands", ((1.2, 100.0),), lower_is_better=True)


def cs267(x: float) -> float:
    """CS267 HW2: > 0.8 -> 100, 0.5-0.8 -> 75 + 25(x-0.5)/0.3, linearly to 0 below."""
    if x > 0.8:
        return 100.0
    if x >= 0.5:
        return 75 + 25 * (x - 0.5) / 0.3
    return 75 * x / 0.5


@pytest.mark.parametrize("x", [0.0, 0.1, 0.25, 0.49, 0.5, 0.55, 0.65, 0.79, 0.8, 0.95, 1.3])
def test_the_cs267_efficiency_map_is_its_formula(x: float) -> None:
    assert CS267.percent(x) == pytest.approx(cs267(x))


@pytest.mark.parametrize(("ratio", "percent"), [(0.7, 100), (1.0, 100), (1.2, 100),
                                                (1.2001, 0), (3.0, 0)])
def test_cs149_passes_within_1_2_of_the_reference(ratio: float, percent: float) -> None:
    assert CS149.percent(ratio) == percent


def test_bands_give_the_first_threshold_reached_either_way() -> None:
    time = PointsMap("bands", ((1.2, 100), (1.6, 50), (2.2, 20)), lower_is_better=True)
    assert [time.percent(x) for x in (1.1, 1.5, 2.0, 2.3)] == [100, 50, 20, 0]
    eff = PointsMap("bands", ((0.5, 100), (0.25, 40)))  # UNN: >= 50 % full, < 25 % none
    assert [eff.percent(x) for x in (0.9, 0.5, 0.3, 0.2)] == [100, 100, 40, 0]
    assert "<= 1.2: 100 %" in time.describe() and ">= 0.5: 100 %" in eff.describe()


@pytest.mark.parametrize(("kind", "steps", "lower", "why"), [
    ("linear", ((0.5, 0), (0.5, 100)), False, "must increase"),
    ("bands", ((1.6, 50), (1.2, 100)), True, "from the best threshold"),
    ("bands", ((1.2, 50), (1.6, 100)), True, "cannot give more points"),
    ("linear", ((0, 0), (1, 120)), False, "from 0 to 100"),
    ("bands", (), False, "at least one step"),
])
def test_a_map_that_makes_no_sense_is_refused(kind: str, steps: tuple[tuple[float, float], ...],
                                              lower: bool, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        PointsMap(kind, steps, lower)  # type: ignore[arg-type]


def m(cores: int, ref: tuple[float, ...], sub: tuple[float, ...]) -> Measurement:
    return Measurement(cores, tuple(range(cores)), Series(ref), Series(sub))


SPEC = PerformanceSpec(Path("ref.c"), ((1, (Path("in"),)), (4, (Path("in"),))), (1, 4), (
    Item("time_ratio", 4, 30, CS149),
    Item("efficiency", 4, 40, CS267),
    Item("speedup", 4, 10, PointsMap("linear", ((1, 0), (4, 100)))),
    Item("throughput_ratio", 1, 20, PointsMap("bands", ((0.9, 100), (0.5, 50)))),
))
#: a submission 5 % slower than the reference on 1 core, 2.5x faster on 4
TABLE = (m(1, (10.0, 10.2, 9.8), (10.5, 10.7, 10.3)),
         m(4, (2.6, 2.5, 2.7), (4.2, 4.3, 4.1)))


def test_figures_from_the_table() -> None:
    by = {x.cores: x for x in TABLE}
    items = dict(zip(("time", "eff", "speedup", "thru"), SPEC.items, strict=True))
    # the median of the rounds' ratios (4.2/2.6, 4.3/2.5, 4.1/2.7), not of the times
    assert figure(SPEC, items["time"], by) == pytest.approx(4.2 / 2.6)
    assert figure(SPEC, items["thru"], by) == pytest.approx(10.0 / 10.5)
    assert figure(SPEC, items["speedup"], by) == pytest.approx(10.5 / 4.2)
    assert figure(SPEC, items["eff"], by) == pytest.approx(10.5 / (4 * 4.2))
    vs_ref = replace(items["eff"], baseline="reference")
    assert figure(SPEC, vs_ref, by) == pytest.approx(10.0 / (4 * 4.2))
    weak = replace(SPEC, scaling="weak")
    assert figure(weak, items["eff"], by) == pytest.approx(10.5 / 4.2)


def test_the_score_is_the_items_points_by_their_maps() -> None:
    perf = score(SPEC, TABLE)
    eff = 10.5 / (4 * 4.2)  # 0.625: 75 + 25 * 0.125 / 0.3 = 85.4 %
    want = [0.0, 40 * cs267(eff) / 100, 10 * 0.5, 20.0]
    assert cs267(eff) == pytest.approx(85.416667)
    assert [i.points for i in perf.items] == pytest.approx(want)
    assert perf.points == pytest.approx(sum(want)) and perf.max_points == 100
    assert perf.gate == "" and perf.items[2].figure == pytest.approx(2.5)


def test_correctness_gates_performance() -> None:
    perf = score(SPEC, TABLE, "not accepted on the tests (WA)")
    assert perf.points == 0 and all(i.points == 0 and i.figure is None for i in perf.items)
    assert perf.max_points == 100 and perf.measurements == TABLE


def test_an_unmeasured_core_count_scores_nothing() -> None:
    perf = score(SPEC, TABLE[:1], "timed run at 4 cores: wall time over the limit")
    assert perf.points == 0
    assert score(SPEC, TABLE[:1]).items[0].figure is None


def test_the_ci_is_students_t_and_the_rule_stops_on_it() -> None:
    s = Series((1.0, 2.0, 3.0))
    assert s.median_s == 2 and s.mean_s == 2
    assert s.ci_s == pytest.approx(4.302653 / math.sqrt(3))  # t(0.975, 2) * sd / sqrt(n)
    assert math.isnan(Series((1.0,)).ci_s) and not Series((1.0,)).precise(0.5)
    tight, loose = Series((1.0, 1.01, 0.99)), Series((1.0, 1.5, 0.5))
    reps = Repetitions(min=3, max=5, ci=0.05)
    assert enough(tight, tight, reps) and not enough(tight, loose, reps)
    assert not enough(Series((1.0, 1.0)), Series((1.0, 1.0)), reps)  # under min
    five = Series((1.0, 1.5, 0.5, 2.0, 0.7))
    assert enough(five, five, reps)  # max reached, however wide


def test_the_repetition_policy_is_checked() -> None:
    for bad in ({"min": 1}, {"min": 5, "max": 4}, {"ci": 0}, {"warmup": -1}):
        with pytest.raises(ValueError):
            Repetitions(**bad)  # type: ignore[arg-type]


def test_the_record_round_trips_and_old_records_still_read() -> None:
    facts = (Fact("smt", "no SMT sibling of a timed CPU outside them", True),
             Fact("governor", "powersave", False), Fact("turbo", "the node does not say",
                                                        None))
    perf = score(SPEC, (replace(TABLE[0], facts=facts), TABLE[1]))
    assert perf.not_in_force == ("governor",) and perf.unknown == ("turbo",)
    back = Performance.from_json(perf.to_json())  # figures kept to 6 decimals
    assert back.to_json() == perf.to_json() and back.measurements == perf.measurements
    (n1, *one), (n4, *four) = back.curve()
    assert (n1, n4) == (1, 4) and one == [1.0, 1.0]
    assert four == pytest.approx([10.5 / 4.2, 10.0 / 2.6])
    old = {"schema": "gradeline/result", "schema_version": 1, "problem": "p",
           "problem_version": "v", "submission": "s", "content_hash": "h",
           "language": "c", "verdict": "AC", "score": 1, "max_score": 1}
    assert SubmissionResult.from_dict(old).performance is None
    r = replace(SubmissionResult.from_dict(old), performance=perf)
    d = r.to_dict()
    assert d["performance"]["items"][1]["rule"].startswith("linear through")
    assert d["performance"]["measurements"][1]["submission"]["median_s"] == 4.2
    assert SubmissionResult.from_dict(d).to_dict() == d
    assert SubmissionResult.from_dict(old).to_dict()["performance"] is None
    assert r.verdict is Verdict.AC


def test_the_plan_is_its_formula_on_a_table() -> None:
    from grader.planning.perfplan import PerfDemand, predict

    spec = replace(SPEC, repetitions=Repetitions(min=3, max=10, warmup=1))
    demands = [PerfDemand(1, 0.4, 5), PerfDemand(4, 0.12, 2)]  # 2 rounds: min 3 counts
    plan = predict(spec, demands, students=100, shape_cores=4, cores=10, accepted=0.8,
                   ratio=1.5, overhead_s=0.03)
    one = (1 + 5) * (0.4 + 0.6 + 0.06)
    four = (1 + 3) * (0.12 + 0.18 + 0.06)
    assert [n for n, _ in plan.by_cores] == [1, 4]
    assert [t for _, t in plan.by_cores] == pytest.approx([one, four])
    assert plan.timed == 80 and plan.allocations == 2
    assert plan.core_hours == pytest.approx(80 * (one + four) * 4 / 3600)
    assert plan.finish_s == pytest.approx(40 * (one + four))
    capped = predict(spec, demands, students=1, shape_cores=4, cores=4, ratio=100,
                     time_limit_s=2.0, overhead_s=0)
    assert capped.by_cores[0][1] == pytest.approx(6 * (0.4 + 2.0))  # a run ends at the limit
    # what the reference's own phase took beyond its rounds is each student's too
    from grader.planning.perfplan import fixed_cost
    itself = (1 + 5) * (0.4 + 0.4 + 0.06) + (1 + 3) * (0.12 + 0.12 + 0.06)
    fixed = fixed_cost(spec, demands, itself + 2.5, overhead_s=0.03)
    assert fixed == pytest.approx(2.5)
    assert fixed_cost(spec, demands, 0.1) == 0.0  # never below nothing
    with_fixed = predict(spec, demands, students=100, shape_cores=4, cores=10,
                         accepted=0.8, ratio=1.5, overhead_s=0.03, fixed_s=fixed)
    assert with_fixed.finish_s == pytest.approx(40 * (one + four + 2.5))
    assert "cache reading and starts: 2.5 s" in with_fixed.describe()
    with pytest.raises(ValueError, match=r"no measured reference time at \[4\]"):
        predict(spec, demands[:1], students=1, shape_cores=4, cores=4)
    with pytest.raises(ValueError, match="cannot hold one allocation"):
        predict(spec, demands, students=1, shape_cores=4, cores=2)


def test_plan_performance_from_given_reference_times(tmp_path: Path, capsys: Any) -> None:
    from grader.cli import main as cli

    out = tmp_path / "plan.json"
    pkg = Path(__file__).resolve().parents[2] / "grader/examples/primecount"
    assert cli.main(["plan", "performance", str(pkg), "--students", "200", "--cores", "64",
                     "--reference-times", "1:0.2,2:0.1", "--json", str(out)]) == 0
    plan = json.loads(out.read_text())
    assert plan["timed"] == 200 and plan["allocations"] == 32 and plan["shape_cores"] == 2
    assert "finishes in" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main(["plan", "performance", str(pkg), "--students", "2",
                  "--reference-times", "1:0.2"])
    assert "no measured reference time at [2]" in capsys.readouterr().err
