"""What a student sees of their performance tests (``course.perfview``): times with
their confidence intervals, speedups over each program's own fewest-core time, one line
that reads the figures, and the chart on their page: an SVG described for a screen
reader, its figures also in a table."""

from __future__ import annotations

from dataclasses import replace

import pytest

from grader.adapters.web.perfchart import performance_section
from grader.core.perfresult import Fact, ItemScore, Measurement, Performance, Series
from grader.course.perfview import reading, shown_performance


def perf(mine: dict[int, float], ref: dict[int, float], gate: str = "") -> Performance:
    ms = tuple(Measurement(n, tuple(range(n)), Series((ref[n], ref[n] * 1.01, ref[n] * 0.99)),
                           Series((mine[n], mine[n] * 1.02, mine[n] * 0.98)))
               for n in sorted(mine))
    return Performance(ms, (ItemScore("efficiency on 2 cores", "efficiency", 2, 0.5, 50.0,
                                      25.0, 50.0, "linear"),), 25.0, 50.0, gate)


def test_the_curve_is_each_programs_speedup_over_its_own_fewest_cores() -> None:
    shown = shown_performance(perf({1: 1.0, 2: 0.8}, {1: 0.9, 2: 0.45}))
    one, two = shown.timings
    assert (one.speedup, one.speedup_ci, two.reference_speedup) == (1.0, None, 2.0)
    assert two.speedup == pytest.approx(1.25) and two.speedup_ci is not None
    assert 0 < two.speedup_ci < 0.1 and two.ci_s is not None and two.runs == 3
    assert shown.items[0].points == 25.0 and shown.points == 25.0


@pytest.mark.parametrize(("mine", "said"), [
    ({1: 1.0, 2: 0.52}, "1.92x faster on 2 cores (ideal 2x, the reference 2.00x): it scales"),
    ({1: 1.0, 2: 0.95}, "only 1.05x faster on 2 cores"),
    ({1: 1.0, 2: 0.7}, "1.43x faster on 2 cores (ideal 2x, the reference 2.00x): some"),
    ({1: 1.0, 2: 1.6}, "slower on 2 cores than on 1 (0.62x): the threads wait"),
])
def test_one_line_reads_the_figures(mine: dict[int, float], said: str) -> None:
    assert shown_performance(perf(mine, {1: 1.0, 2: 0.5})).reading.startswith(said)


def test_a_gated_or_single_count_measurement_says_why_there_is_no_curve() -> None:
    gated = shown_performance(perf({1: 1.0, 2: 0.5}, {1: 1.0, 2: 0.5},
                                   gate="the correctness tests were not all accepted"))
    assert gated.reading == "no performance points: the correctness tests were not all accepted"
    assert reading(shown_performance(perf({2: 1.0}, {2: 1.0})).timings).startswith(
        "timed on one core count only")


def test_the_page_draws_a_described_chart_and_a_table_of_the_same_figures() -> None:
    html = performance_section(shown_performance(perf({1: 1.0, 2: 0.8}, {1: 0.9, 2: 0.45})),
                               "p1")
    assert "<svg class=\"gl-chart gl-speedup\" role=\"img\"" in html
    assert "aria-labelledby=\"p1-s-t p1-s-d\"" in html
    assert "on 2 cores yours 1.25x, the reference 2.00x, ideal 2x" in html  # the <desc>
    assert html.count("<polyline") == 3 and html.count("<rect") >= 2 + 3  # points, legend
    assert "Times (median of the runs" in html and ">1.25<" in html
    single = performance_section(shown_performance(perf({2: 1.0}, {2: 1.0})), "p2")
    assert "<svg" not in single and "Times (median" in single


def test_what_made_the_timing_less_fair_is_said_in_the_students_words() -> None:
    p = perf({1: 1.0, 2: 0.52}, {1: 0.9, 2: 0.45})
    facts = (Fact("load", "1.7 (2 CPUs)", False), Fact("aslr", "off", True),
             Fact("l3_partition", "none (resctrl not mounted)", False))
    p = replace(p, measurements=tuple(replace(m, facts=facts) for m in p.measurements))
    shown = shown_performance(p)
    assert shown.not_in_force == ("an L3 partition of its own", "a quiet node")
    assert "Timed without: an L3 partition of its own, a quiet node" in \
        performance_section(shown, "t")
