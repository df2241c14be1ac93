"""Queueing models that turn measured service demands into capacity answers.

Open arrivals (a deadline rush seen as a Poisson stream) are M/M/m via Erlang C, and
M/G/m by the Allen-Cunneen correction with the measured service-time variability;
the closed loop (N students, think time Z) is exact mean value analysis, with
multi-core stations solved load-dependently so that an m-core partition is one
station rather than m independent ones. Pure functions of numbers: the simulator
(``grader.planning.simulate``) and the reports feed them measurements.

References for the figures the tests reproduce: R. Jain, *The Art of Computer
Systems Performance Analysis* (Wiley, 1991), ch. 34-35 (MVA and the timesharing
example, Table 35.5); E. D. Lazowska et al., *Quantitative System Performance*
(1984), ch. 5 (bounds) and 8 (load-dependent MVA); the Erlang C example of the
pyworkforce documentation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


def erlang_c(servers: int, offered: float) -> float:
    """Probability that an arrival waits in M/M/m with ``offered`` = lambda * S erlangs.

    Computed through the Erlang B recursion, which stays stable for thousands of
    servers where the textbook sum of a^k/k! overflows."""
    if servers < 1:
        raise ValueError("servers must be >= 1")
    if offered < 0:
        raise ValueError("offered load must be >= 0")
    if offered >= servers:
        return 1.0
    b = 1.0
    for k in range(1, servers + 1):
        b = offered * b / (k + offered * b)
    rho = offered / servers
    return b / (1 - rho + rho * b)


@dataclass(frozen=True, slots=True)
class OpenModel:
    """M/M/m (``cs2`` = 1) or M/G/m (Allen-Cunneen) for Poisson arrivals at
    ``rate``/s, mean service ``service_s`` and ``servers`` identical cores."""

    rate: float
    service_s: float
    servers: int
    cs2: float = 1.0  # squared coefficient of variation of the service time

    @property
    def offered(self) -> float:
        return self.rate * self.service_s

    @property
    def utilization(self) -> float:
        return self.offered / self.servers

    @property
    def stable(self) -> bool:
        return self.utilization < 1

    @property
    def p_wait(self) -> float:
        return erlang_c(self.servers, self.offered)

    @property
    def wait_s(self) -> float:
        """Mean time in queue (infinite when the offered load exceeds the cores)."""
        if not self.stable:
            return math.inf
        mm = self.p_wait * self.service_s / (self.servers * (1 - self.utilization))
        return mm * (1 + self.cs2) / 2

    @property
    def response_s(self) -> float:
        return self.wait_s + self.service_s

    def service_level(self, t: float) -> float:
        """P(wait <= t): Erlang C's tail P(W > t) = C e^{-(m mu - lambda) t}, with the
        conditional wait rescaled to the M/G/m mean."""
        if not self.stable:
            return 0.0
        c, w = self.p_wait, self.wait_s
        if c == 0 or w == 0:
            return 1.0
        return 1 - c * math.exp(-t * c / w)

    def response_quantile(self, q: float, services: Sequence[float] | None = None) -> float:
        """The q-quantile of the response time: the wait (an atom at zero, else
        exponential with the conditional mean) plus the service, taken from the
        measured ``services`` when given (exponential otherwise)."""
        if not 0 < q < 1:
            raise ValueError("q must be in (0, 1)")
        if not self.stable:
            return math.inf
        c = self.p_wait
        w = self.wait_s
        theta = c / w if c > 0 and w > 0 else math.inf
        mu = 1 / self.service_s

        def tail(t: float) -> float:
            if services:
                total = 0.0
                for s in services:
                    if s > t:
                        total += 1.0
                    elif math.isfinite(theta):
                        total += c * math.exp(-theta * (t - s))
                return total / len(services)
            if not math.isfinite(theta):
                return math.exp(-mu * t)
            if abs(theta - mu) < 1e-12:
                hypo = (1 + mu * t) * math.exp(-mu * t)
            else:
                hypo = (theta * math.exp(-mu * t) - mu * math.exp(-theta * t)) / (theta - mu)
            return (1 - c) * math.exp(-mu * t) + c * hypo

        lo, hi = 0.0, self.service_s
        while tail(hi) > 1 - q:
            hi *= 2
        for _ in range(80):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if tail(mid) > 1 - q else (lo, mid)
        return hi


def smallest_servers(rate: float, service_s: float, target_s: float, *, q: float = 0.95,
                     cs2: float = 1.0, services: Sequence[float] | None = None,
                     limit: int = 100_000) -> int:
    """The fewest cores whose M/G/m response-time q-quantile is at most ``target_s``."""
    if services:
        floor = sorted(services)[min(len(services) - 1, math.ceil(q * len(services)) - 1)]
    else:
        floor = -math.log(1 - q) * service_s
    if floor > target_s:
        raise ValueError(f"the service time alone has a {q:.0%} quantile of {floor:.3g} s, "
                         f"above the {target_s:g} s target: no core count meets it")
    m = max(1, math.floor(rate * service_s) + 1)
    while m <= limit:
        model = OpenModel(rate, service_s, m, cs2)
        if model.response_quantile(q, services) <= target_s:
            return m
        m += 1
    raise ValueError(f"no core count up to {limit} meets {target_s} s")


@dataclass(frozen=True, slots=True)
class Station:
    """A queueing centre of a closed network: service demand per job (seconds, over
    all its visits) and its number of identical servers."""

    name: str
    demand_s: float
    servers: int = 1


@dataclass(frozen=True, slots=True)
class MVAPoint:
    """The network at population n: throughput, response time (without think time),
    and per station its residence time, queue length and utilisation."""

    n: int
    throughput: float
    response_s: float
    residence_s: dict[str, float]
    queue: dict[str, float]
    utilization: dict[str, float]


def mva(stations: Sequence[Station], think_s: float, population: int) -> list[MVAPoint]:
    """Exact MVA for a single-class closed network, populations 1..N.

    Single-server stations use Reiser-Lavenberg's arrival theorem R = D (1 + Q(n-1));
    an m-server station is load dependent (rate min(j, m)) and carries its marginal
    queue-length distribution from one population to the next."""
    if population < 1:
        raise ValueError("population must be >= 1")
    if think_s < 0 or any(s.demand_s < 0 or s.servers < 1 for s in stations):
        raise ValueError("demands and think time must be >= 0, servers >= 1")
    q = {s.name: 0.0 for s in stations}
    marg = {s.name: [1.0] for s in stations if s.servers > 1}
    out: list[MVAPoint] = []
    for n in range(1, population + 1):
        res: dict[str, float] = {}
        for s in stations:
            if s.servers == 1:
                res[s.name] = s.demand_s * (1 + q[s.name])
            else:
                p = marg[s.name]
                res[s.name] = s.demand_s * sum(j / min(j, s.servers) * p[j - 1]
                                               for j in range(1, n + 1))
        total = sum(res.values())
        x = n / (think_s + total) if think_s + total > 0 else math.inf
        for s in stations:
            q[s.name] = x * res[s.name]
            if s.servers > 1:
                prev = marg[s.name]
                new = [0.0] * (n + 1)
                for j in range(1, n + 1):
                    new[j] = s.demand_s / min(j, s.servers) * x * prev[j - 1]
                new[0] = max(0.0, 1 - sum(new[1:]))
                marg[s.name] = new
        util = {s.name: x * s.demand_s / s.servers for s in stations}
        out.append(MVAPoint(n, x, total, dict(res), dict(q), util))
    return out


@dataclass(frozen=True, slots=True)
class Bounds:
    """Asymptotic bounds of a closed network (Lazowska ch. 5)."""

    demand_s: float  # D, total demand
    max_demand_s: float  # D_max per server of the bottleneck
    think_s: float

    def throughput_max(self, n: int) -> float:
        return min(n / (self.demand_s + self.think_s), 1 / self.max_demand_s)

    def response_min(self, n: int) -> float:
        return max(self.demand_s, n * self.max_demand_s - self.think_s)

    @property
    def knee(self) -> float:
        """N* = (D + Z) / D_max: beyond it the bottleneck saturates."""
        return (self.demand_s + self.think_s) / self.max_demand_s


def bounds(stations: Sequence[Station], think_s: float) -> Bounds:
    """Bounds with an m-server station counted as demand D/m per server."""
    if not stations:
        raise ValueError("no stations")
    return Bounds(sum(s.demand_s for s in stations),
                  max(s.demand_s / s.servers for s in stations), think_s)


def model_curves(svc: float, cs2: float, pooled: list[float], cores: list[int]
                 ) -> list[dict[str, float]]:
    """M/G/m mean and p95 over offered loads up to 95% of each core count's capacity."""
    rows: list[dict[str, float]] = []
    for c in cores:
        cap = c / svc
        for k in range(1, 39):
            rate = cap * k / 40
            m = OpenModel(rate, svc, c, cs2)
            rows.append({"cores": c, "rate": rate, "mean_s": m.response_s,
                         "p95_s": m.response_quantile(0.95, pooled)})
    return rows


def mva_curves(svc: float, think: float, cores: list[int]) -> list[dict[str, float]]:
    """Exact MVA throughput and response with their bounds, up to three times the knee."""
    rows: list[dict[str, float]] = []
    for c in cores:
        st = [Station("cores", svc, c)]
        b = bounds(st, think)
        top = max(8, int(3 * b.knee))
        for p in mva(st, think, top):
            rows.append({"cores": c, "n": p.n, "x": p.throughput, "r_s": p.response_s,
                         "x_bound": b.throughput_max(p.n), "r_bound": b.response_min(p.n),
                         "knee": b.knee})
    return rows
