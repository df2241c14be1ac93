"""Campaign analysis on synthetic and published numbers (pure pandas, no measurement)."""

from __future__ import annotations

import math
import stat
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import tables as ca
from analysis.scaling import usl
from grader.adapters.metrics.base import counting
from grader.adapters.metrics.perf import PerfStat
from grader.measure.campaign import Campaign, Config
from grader.measure.workloads import Rep, steady_throughput, summarize


def _runs(points: dict[tuple[str, int], list[float]]) -> pd.DataFrame:
    rows = []
    for (w, n), xs in points.items():
        for i, x in enumerate(xs):
            rows.append({"workload": w, "n": n, "rep": i, "warmup": False, "jobs": 40,
                         "wall_s": 40 / x, "throughput": x, "raw_throughput": x * 0.95,
                         "mean_response_s": n / x, "p95_s": 1.2 * n / x, "occupancy": n,
                         "cpu_s": 40 / x * n * 0.9})
    return pd.DataFrame(rows)


def test_thesis_64_core_speedups_through_the_campaign_path() -> None:
    runs = _runs({("thesis", n): [x] for n, x in ca.THESIS_64.items()})
    s = ca.throughput_summary(runs).set_index("N")["S"]
    assert round(s[16], 2) == 13.26 or round(s[16], 2) == 13.25  # 8.75/0.66 = 13.257...
    assert round(s[32]) == 25 and round(s[64], 1) == 29.6


def test_thesis_16_core_inconsistency_kept_as_data() -> None:
    text = ca.THESIS_16["text_runs"]
    table = ca.THESIS_16["table_2_2"]
    assert round(text[16] / text[1], 2) == 11.23
    assert round(table[16] / table[1], 2) == 11.47


def test_summary_ci_efficiency_and_knee() -> None:
    runs = _runs({("w", 1): [1.0, 1.02, 0.98], ("w", 2): [1.9, 1.95, 1.92],
                  ("w", 4): [3.3, 3.4, 3.35]})
    s = ca.throughput_summary(runs).set_index("N")
    assert s.loc[1, "S"] == pytest.approx(1.0) and s.loc[1, "S_ci95"] == 0
    assert s.loc[4, "efficiency"] == pytest.approx(3.35 / 4, rel=0.02)
    assert s.loc[2, "X_ci95"] > 0 and s.loc[2, "reps"] == 3
    assert ca.knee(ca.throughput_summary(runs), "w") == 4  # 0.84 < 0.9
    assert ca.knee(ca.throughput_summary(runs), "w", threshold=0.5) is None


def test_warmup_reps_are_excluded() -> None:
    runs = _runs({("w", 1): [1.0, 1.0]})
    runs.loc[0, "warmup"] = True
    runs.loc[0, "throughput"] = 100.0
    assert ca.throughput_summary(runs)["X"].iloc[0] == pytest.approx(1.0)


def test_usl_fit_recovers_parameters_with_three_core_counts() -> None:
    ns = [1, 2, 4, 8, 16]
    pts = {("w", n): [float(usl(n, 2.0, 0.05, 0.002)) * f for f in (0.99, 1.0, 1.01)]
           for n in ns}
    fit = ca.fit_scaling(_runs(pts), "w")
    assert fit is not None and fit.model == "USL"
    assert fit.fit.alpha == pytest.approx(0.05, abs=0.01)
    assert fit.fit.beta == pytest.approx(0.002, abs=0.001)
    assert fit.fit.alpha_ci[0] < 0.05 < fit.fit.alpha_ci[1]


def test_two_core_counts_fit_amdahl_only() -> None:
    fit = ca.fit_scaling(_runs({("w", 1): [1.0, 1.01, 0.99], ("w", 2): [1.8, 1.82, 1.78]}), "w")
    assert fit is not None and fit.model.startswith("Amdahl")
    assert fit.fit.alpha == pytest.approx(2 / 1.8 - 1, abs=0.01)
    assert math.isinf(fit.fit.n_peak)


def test_operational_laws_flag_demand_inflation() -> None:
    runs = _runs({("w", 1): [1.0, 1.0], ("w", 2): [1.6, 1.6]})
    runs.loc[runs["n"] == 2, "cpu_s"] = runs.loc[runs["n"] == 1, "cpu_s"].iloc[0] * 1.25
    laws = ca.laws_summary(ca.operational_laws(runs)).set_index(["N", "law"])
    inter = laws.loc[(2, "interactive R=N/X-Z")]
    assert inter["predicted"] == pytest.approx(2 / 1.6)
    assert abs(inter["rel_error"]) < 1e-9
    util = laws.loc[(2, "utilization U=X*D(1)")]
    assert util["measured"] > util["predicted"]  # 25% more CPU per job at N=2


def _cg() -> pd.DataFrame:
    mpki = {0.5: 9.0, 1: 6.0, 2: 4.0, 2.5: 3.1, 4: 3.0, 8: 2.9}
    return pd.DataFrame([{"ll_mb": mb, "process": "cc1plus", "Ir": 1_000_000,
                          "ll_refs": 20_000, "ll_misses": int(v * 1000)}
                         for mb, v in mpki.items()])


def test_miss_curve_knee_and_recommendation() -> None:
    curve = ca.miss_curve(_cg())
    assert list(curve["mpki"]) == pytest.approx([9.0, 6.0, 4.0, 3.1, 3.0, 2.9])
    assert ca.enough_l3_per_core(curve) == (2.5, True)  # 3.1 <= 2.9 * 1.1 < 4.0
    still_falling = curve.assign(mpki=[9.0, 8.0, 7.0, 6.0, 5.0, 4.0])
    assert ca.enough_l3_per_core(still_falling) == (8.0, False)
    rec = ca.recommendation(2.5).set_index("cores")
    assert rec.loc[16, "min_L3_MB"] == 40.0 and rec.loc[64, "min_L3_MB"] == 160.0


def test_simulated_inflation_from_the_curve() -> None:
    sim = ca.simulated_inflation(ca.miss_curve(_cg()), 8.0, [1, 2, 4, 16]).set_index("N")
    assert sim.loc[1, "inflation"] == pytest.approx(1.0)
    assert sim.loc[4, "inflation"] == pytest.approx(4.0 / 2.9)  # 2 MB each
    assert sim.loc[16, "inflation"] == pytest.approx(9.0 / 2.9)  # 0.5 MB each


def test_steady_window_trims_startup_and_tail() -> None:
    finishes = [5.0] + [5.0 + 0.1 * i for i in range(1, 19)] + [9.0]  # slow start, tail
    x, window, lo, hi = steady_throughput(finishes, 0.1)
    assert x == pytest.approx(10.0) and (lo, hi) == (2, 17)
    assert window == pytest.approx(1.5)


def test_summarize_percentiles_and_occupancy() -> None:
    spans = [(float(i), float(i) + 1.0) for i in range(20)]  # one at a time, 1 s each
    rep = summarize("w", 1, 0, 0.0, 20.0, spans, cpu_s=19.0, trim=0.1)
    assert rep.p50_s == pytest.approx(1.0) and rep.max_s == pytest.approx(1.0)
    assert rep.occupancy == pytest.approx(1.0)
    assert rep.throughput == pytest.approx(1.0) and rep.raw_throughput == pytest.approx(1.0)


def _fake_perf(tmp_path: Path) -> Path:
    """Stands in for perf: runs its command (after ``--``), then writes ``perf -x,``
    output, as perf stat does when its command ends."""
    fake = tmp_path / "perf"
    fake.write_text("#!/bin/sh\n# stands in for perf stat -x, -o OUT ... -- CMD\n"
                    "out=$4\nwhile [ \"$1\" != -- ]; do shift; done\nshift\n\"$@\"\n"
                    "printf '123,,instructions,1,100.00,,\\n' > \"$out\"\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    return fake


def test_counting_stops_the_counter_and_parses_it(tmp_path: Path) -> None:
    """The counter process runs around the body and is stopped with SIGINT."""
    with counting(PerfStat(perf=str(_fake_perf(tmp_path))), [0], tmp_path / "c.csv") \
            as samples:
        assert samples == []
    assert [(s.event, s.value) for s in samples] == [("instructions", 123.0)]
    with counting(None, [0], tmp_path / "none.csv") as nothing:
        pass
    assert nothing == [] and not (tmp_path / "none.csv").exists()


def test_counter_inflation_per_job() -> None:
    runs = _runs({("w", 1): [1.0], ("w", 2): [1.8]})
    counters = pd.DataFrame([
        {"workload": "w", "n": 1, "rep": 0, "source": "perf", "event": "LLC-load-misses",
         "cpu": np.nan, "value": 1000.0, "unit": "count"},
        {"workload": "w", "n": 2, "rep": 0, "source": "perf", "event": "LLC-load-misses",
         "cpu": np.nan, "value": 2250.0, "unit": "count"}])
    inf = ca.counter_inflation(counters, runs).set_index("n")
    assert inf.loc[2, "inflation"] == pytest.approx(2.25)


def test_default_window_is_first_start_to_last_finish() -> None:
    spans = [(2.0, 3.0), (2.0, 4.0), (3.0, 6.0)]  # pool took 2 s to start
    rep = summarize("w", 2, 0, 0.0, 6.5, spans, cpu_s=6.0, trim=0.0)
    assert rep.throughput == pytest.approx(3 / 4.0) and rep.window_s == pytest.approx(4.0)
    assert rep.raw_throughput == pytest.approx(3 / 6.5)
    assert rep.occupancy == pytest.approx(6.0 / 4.0)


def test_a_counted_rep_reaches_counters_csv_and_the_analysis(tmp_path: Path) -> None:
    """With a usable counter source each rep is counted on its cores, and the samples
    land in counters.csv (which the store and the inflation analysis read)."""
    c = Campaign(Config(workdir=tmp_path, cpu_iters=1000), tmp_path / "out", [0],
                 say=lambda _: None, counter=PerfStat(perf=str(_fake_perf(tmp_path))))
    c.id = "campaign-test"
    rep = c.one_rep("cpu", 1, 0, [object()] * 2)  # type: ignore[list-item]
    c._save([{"campaign": c.id, **asdict(rep)}])
    counters = pd.read_csv(tmp_path / "out" / "counters.csv")
    assert list(counters["event"]) == ["instructions"] and counters["value"].iloc[0] == 123
    assert set(counters.columns) >= {"campaign", "workload", "n", "rep", "source"}
    runs = pd.read_csv(tmp_path / "out" / "runs.csv")
    assert not ca.counter_inflation(counters, runs).empty


def _fake_campaign(tmp_path: Path, **cfg: object) -> tuple[object, list[tuple[int, int]]]:
    order: list[tuple[int, int]] = []
    c = Campaign(Config(workdir=tmp_path, **cfg), tmp_path / "out", [0, 1], say=lambda _: None)

    def one_rep(workload: str, n: int, rep: int, jobs: object) -> Rep:
        order.append((rep, n))
        x = 1.0 * n * (1 + 0.001 * (rep % 2))  # tiny noise: CI shrinks fast
        return Rep(workload, n, rep, 10, 10 / x, x, x, 10 / x, 1, 1, 1, 1, 1, 1, 1, 1,
                   warmup=rep < 0)

    c.one_rep = one_rep  # type: ignore[method-assign]
    return c, order


def test_reps_are_interleaved_across_n(tmp_path: Path) -> None:
    c, order = _fake_campaign(tmp_path, reps=2, warmup_reps=1)
    reps = list(c.reps("cpu", [1, 2], []))  # type: ignore[attr-defined]
    assert order == [(-1, 1), (-1, 2), (0, 1), (0, 2), (1, 1), (1, 2)]
    assert [r.warmup for r in reps] == [True, True, False, False, False, False]


def test_adaptive_stops_when_every_n_is_tight(tmp_path: Path) -> None:
    c, order = _fake_campaign(tmp_path, adaptive=True, max_reps=20, warmup_reps=0)
    list(c.reps("cpu", [1, 2], []))  # type: ignore[attr-defined]
    assert len(order) == 4  # 2 reps x 2 N: CI95/mean already < 5%


def test_a_knee_inside_the_noise_is_no_knee() -> None:
    """One slow repetition must not make a knee an admin sizes a partition by."""
    runs = _runs({("w", 1): [3.0, 3.1, 5.6], ("w", 2): [6.4, 6.9, 6.8]})
    s = ca.throughput_summary(runs)
    eff2 = float(s.set_index("N").loc[2, "efficiency"])
    assert eff2 < 0.9  # the point estimate alone would call it
    assert ca.knee(s, "w") is None
    assert ca.efficiency_below_within_noise(s, "w") == [2]
    tight = ca.throughput_summary(_runs({("w", 1): [3.0, 3.05, 2.95],
                                         ("w", 2): [4.8, 4.9, 4.85]}))
    assert ca.knee(tight, "w") == 2 and ca.efficiency_below_within_noise(tight, "w") == []
