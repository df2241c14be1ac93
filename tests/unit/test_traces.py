"""Traces, fairness and the response-time analysis: pure functions, real numbers."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from grader.core.fairness import Waiting, fair_pick
from grader.core.finished import Finished
from grader.planning import trace as tr
from grader.planning.response import analyse

POOL = [tr.Work(f"s{i % 5}", "bigsum", f"sub/{i}.c") for i in range(20)]


def test_fair_pick_round_robin_with_cap():
    flood = [Waiting(f"{i:03d}", "mallory") for i in range(50)]
    others = [Waiting(f"1{i:02d}", f"s{i}") for i in range(3)]
    picked = fair_pick(flood + others, limit=10, per_student=2)
    # everyone's first comes before mallory's second; mallory gets at most two
    assert picked[:4] == ["000", "100", "101", "102"]
    assert sum(p.startswith("0") for p in picked) == 2
    assert len(picked) == 5
    assert fair_pick(flood, limit=None, per_student=None) == [w.id for w in flood]
    assert fair_pick([], limit=5, per_student=1) == []


def test_csv_round_trip_and_errors():
    rows = tr.poisson(POOL, 2.0, 30, seed=3)
    again = tr.read_csv(tr.write_csv(rows))
    assert [(r.student, r.submission) for r in again] == [(r.student, r.submission)
                                                          for r in rows]
    assert all(abs(a.time - b.time) < 1e-3 for a, b in zip(again, rows, strict=True))
    with pytest.raises(ValueError, match="line 2"):
        tr.read_csv("time,student,assignment,submission\nsoon,s1,a,x\n")
    with pytest.raises(ValueError, match="lacks"):
        tr.read_csv("when,who\n1,2\n")


def test_poisson_rate_and_seed():
    rows = tr.poisson(POOL, 4.0, 4000, seed=1)
    gaps = [b.time - a.time for a, b in itertools.pairwise(rows)]
    assert abs(sum(gaps) / len(gaps) - 0.25) < 0.02  # mean gap 1/lambda
    assert rows == tr.poisson(POOL, 4.0, 4000, seed=1)
    assert rows != tr.poisson(POOL, 4.0, 4000, seed=2)


def test_rush_rises_and_fit_recovers_growth():
    rows = tr.deadline_rush(POOL, 5000, 100.0, growth=3.0, seed=7)
    assert all(0 <= r.time <= 100 for r in rows)
    first, last = (sum(lo <= r.time < lo + 10 for r in rows) for lo in (0, 90))
    assert last > 10 * first  # e^3 ~ 20 times the rate at the deadline
    assert tr.fit_growth([r.time for r in rows], 100.0) == pytest.approx(3.0, abs=0.2)
    flat = tr.rush_times(5000, 1.0, 0.0, random.Random(1))
    assert tr.fit_growth(flat, 1.0) == pytest.approx(0.0, abs=0.2)


def test_closed_loop_rows():
    rows = tr.closed_loop(POOL, students=3, attempts=4, think_s=15.0, seed=1)
    assert len(rows) == 12 and len({r.student for r in rows}) == 3
    assert sorted({r.think_s for r in rows}) == [0.0, 15.0]  # none before the first


def _closed_run(n: int, r: float, z: float, k: int) -> list[Finished]:
    """An ideal closed loop: each of n students waits r, thinks z, k times."""
    out = []
    for s in range(n):
        t = 0.1 * s
        for _ in range(k):
            out.append(Finished(f"s{s}", "a", "graded", "AC", t, t + 0.2 * r, t + r * 0.9,
                                   t + r, node="n1"))
            t += r + z
    return out


def test_analysis_reproduces_the_laws_on_an_ideal_loop():
    a = analyse(_closed_run(4, 3.0, 2.0, 10), cores=2, students=4, think_s=2.0)
    assert a.count == 40 and a.response["p50"] == pytest.approx(3.0)
    assert a.closed is not None and a.closed.error < 1e-6
    assert a.closed.throughput == pytest.approx(4 / 5.0)
    assert a.little_l_sampled == pytest.approx(a.little_xr, rel=0.1)
    assert a.service["mean"] == pytest.approx(2.1)
    # a replay that thought longer than it claims breaks the law
    slow = analyse(_closed_run(4, 3.0, 4.0, 10), students=4, think_s=2.0)
    assert slow.closed is not None and slow.closed.error > 0.5


def test_swf_has_18_fields_and_unknowns():
    refused = Finished("x", "b", "quarantined", None, 5.0, None, None, 5.1)
    rows = [*_closed_run(2, 3.0, 1.0, 2), refused]
    lines = [ln for ln in tr.swf(rows).splitlines() if not ln.startswith(";")]
    assert len(lines) == 5
    for ln in lines:
        assert len(ln.split()) == 18
    q = next(ln.split() for ln in lines if ln.split()[10] == "5")
    assert q[2] == "-1" and q[3] == "-1"  # never started: wait and run unknown
    assert not math.isnan(float(lines[0].split()[1]))


def test_capture_think_times():
    rows = tr.capture(_closed_run(1, 3.0, 2.0, 3), lambda r: "f")
    assert [round(r.think_s, 6) for r in rows] == [0.0, 2.0, 2.0]


def test_the_knee_is_where_throughput_stops_following_the_offered_load():
    from analysis.responses import knee
    runs = [{"offered": lam, "throughput": x} for lam, x in
            [(0.5, 0.5), (1.0, 0.98), (1.5, 1.40), (2.0, 1.55), (3.0, 1.6)]]
    k = knee(runs)
    assert k == {"last_tracking": 1.5, "first_saturated": 2.0, "capacity": 1.6}
    assert knee(runs[:1]) is None  # one load is no curve
    # never saturated: no upper end of the knee yet
    assert math.isnan(knee(runs[:3])["first_saturated"])
