"""The queueing models against published figures and independent solutions."""

from __future__ import annotations

import math

import pytest

from grader.planning.queueing import OpenModel, Station, bounds, erlang_c, mva, smallest_servers


def test_erlang_c_reproduces_the_pyworkforce_example() -> None:
    # pyworkforce's README: 100 transactions per 30 min, AHT 3 min, answer within 20 s
    # -> 14 agents, waiting probability 0.1741319335950498, service level 0.88835.
    lam, aht = 100 / 30, 3.0
    m = OpenModel(lam, aht, 14)
    assert m.p_wait == pytest.approx(0.1741319335950498, rel=1e-9)
    assert m.service_level(20 / 60) == pytest.approx(0.8883500191794669, rel=1e-9)
    assert OpenModel(lam, aht, 13).service_level(20 / 60) < 0.8


def test_erlang_c_is_stable_for_large_partitions() -> None:
    # the factorial sum overflows a float at ~170 servers; the recursion must not
    c = erlang_c(2000, 1950.0)
    assert 0 < c < 1
    assert erlang_c(1, 0.5) == pytest.approx(0.5)  # M/M/1: P(wait) = rho
    assert erlang_c(4, 4.0) == 1.0


def test_mm1_response_quantile_is_the_exponential_one() -> None:
    # M/M/1 response time is exponential with rate mu - lambda
    m = OpenModel(rate=0.8, service_s=1.0, servers=1)
    assert m.response_s == pytest.approx(1 / (1 - 0.8))
    assert m.response_quantile(0.95) == pytest.approx(-math.log(0.05) / 0.2, rel=1e-6)


def test_mg_m_uses_the_service_variability() -> None:
    det = OpenModel(rate=1.5, service_s=1.0, servers=2, cs2=0.0)
    exp = OpenModel(rate=1.5, service_s=1.0, servers=2, cs2=1.0)
    assert det.wait_s == pytest.approx(exp.wait_s / 2)
    assert not OpenModel(rate=3, service_s=1, servers=2).stable
    assert OpenModel(rate=3, service_s=1, servers=2).wait_s == math.inf


def test_smallest_servers_meets_the_target_and_one_fewer_does_not() -> None:
    m = smallest_servers(rate=10.0, service_s=2.0, target_s=7.0)
    assert OpenModel(10.0, 2.0, m).response_quantile(0.95) <= 7.0
    assert OpenModel(10.0, 2.0, m - 1).response_quantile(0.95) > 7.0
    # an exponential service of mean 2 s alone has a p95 of 5.99 s
    with pytest.raises(ValueError, match="no core count"):
        smallest_servers(rate=10.0, service_s=2.0, target_s=5.0)


def test_mva_reproduces_jains_timesharing_example() -> None:
    # Jain (1991), Example 35.5 (convolution): N = 3, Z = 4.68 s, demands CPU 0.78,
    # disk A 2.34, disk B 1.56 s -> X = 0.264/s, R = 6.694 s, utilisations 0.206 /
    # 0.618 / 0.412, mean jobs at disk A 0.97 (convolution; exact MVA must agree).
    st = [Station("cpu", 0.78), Station("a", 2.34), Station("b", 1.56)]
    p = mva(st, 4.68, 3)[-1]
    assert p.throughput == pytest.approx(0.264, abs=5e-4)
    assert p.response_s == pytest.approx(6.694, abs=5e-4)
    assert p.utilization == pytest.approx({"cpu": 0.206, "a": 0.618, "b": 0.412}, abs=1e-3)
    assert p.queue["a"] == pytest.approx(0.97, abs=5e-3)


@pytest.mark.parametrize(("n", "r", "x"), [(1, 6.000, 0.100), (2, 7.400, 0.175),
                                          (3, 9.088, 0.229), (5, 13.256, 0.290),
                                          (17, 47.045, 0.333), (20, 56.016, 0.333)])
def test_mva_reproduces_jains_table_34_1(n: int, r: float, x: float) -> None:
    # Jain (1991), Example 34.2 / Table 34.1: Z = 4 s; CPU S 0.125 s x 16 visits,
    # disk A 0.3 s x 10, disk B 0.2 s x 5 (demands 2, 3, 1 s); system response time and
    # throughput for N = 1..20 users, printed to three decimals.
    st = [Station("cpu", 0.125 * 16), Station("a", 0.3 * 10), Station("b", 0.2 * 5)]
    p = mva(st, 4.0, n)[-1]
    assert p.response_s == pytest.approx(r, abs=6e-4)
    assert p.throughput == pytest.approx(x, abs=6e-4)


def _repairman(n: int, m: int, s: float, z: float) -> tuple[float, float]:
    """Machine-repairman model (n students, m cores, exponential service and think)
    solved as a birth-death chain: throughput and mean response time."""
    w = [1.0]
    for j in range(1, n + 1):  # j jobs at the cores
        w.append(w[-1] * ((n - j + 1) / z) / (min(j, m) / s))
    tot = sum(w)
    p = [x / tot for x in w]
    x = sum(p[j] * min(j, m) / s for j in range(n + 1))
    return x, n / x - z


@pytest.mark.parametrize(("n", "m"), [(3, 1), (5, 2), (40, 8), (12, 16)])
def test_load_dependent_mva_equals_the_markov_chain(n: int, m: int) -> None:
    x, r = _repairman(n, m, s=2.0, z=10.0)
    p = mva([Station("cores", 2.0, m)], 10.0, n)[-1]
    assert p.throughput == pytest.approx(x, rel=1e-9)
    assert p.response_s == pytest.approx(r, rel=1e-9)


def test_bounds_and_knee() -> None:
    st = [Station("cores", 2.0, 4)]
    b = bounds(st, 10.0)
    assert b.knee == pytest.approx((2 + 10) / 0.5)
    curve = mva(st, 10.0, 60)
    for p in curve:
        assert p.throughput <= b.throughput_max(p.n) + 1e-12
        assert p.response_s >= b.response_min(p.n) - 1e-12
    # far beyond the knee the cores are saturated: X -> m / D
    assert curve[-1].throughput == pytest.approx(2.0, rel=0.01)
