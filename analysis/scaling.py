"""Scaling and queueing formulas, pure functions of measured numbers."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, stats

from grader.measure.stats import mean_ci, precise_enough

__all__ = ["USLFit", "adaptive_repetitions", "fit_usl", "inflation_factor",
           "interactive_response_time", "knee_population", "little_population", "mean_ci",
           "speedup", "usl", "utilization"]


def speedup(throughput: pd.Series) -> pd.DataFrame:
    """S(N) = X_max(N) / X_max(1) and efficiency S(N)/N, from X_max indexed by N.

    :raises ValueError: without a measurement at N = 1.
    """
    if 1 not in throughput.index:
        raise ValueError("S(N) needs X_max(1): measure one core too")
    x1 = float(throughput.loc[1])
    n = throughput.index.to_numpy(dtype=float)
    s = throughput.to_numpy(dtype=float) / x1
    return pd.DataFrame({"N": throughput.index, "X_max": throughput.to_numpy(),
                         "S": s, "efficiency": s / n, "ideal_S": n}).set_index("N")


def inflation_factor(count_n: float, count_1: float, n: int) -> float:
    """Count(N) / (N * Count(1)): how much more of an event N workers cause per unit of
    work than one worker alone (1.0 = none; the thesis saw 2.25 for L3 misses at 16)."""
    return count_n / (n * count_1)


def adaptive_repetitions(measure: Callable[[], float], *, rel_ci: float = 0.05,
                         min_runs: int = 2, max_runs: int = 20) -> list[float]:
    """Repeat ``measure`` until CI95/mean < ``rel_ci`` (at least min, at most max runs)."""
    xs: list[float] = []
    while len(xs) < max_runs:
        xs.append(measure())
        if precise_enough(xs, rel_ci, min_runs):
            break
    return xs


@dataclass(frozen=True, slots=True)
class USLFit:
    """X(N) = gamma N / (1 + alpha (N-1) + beta N (N-1)), with 95% intervals."""

    gamma: float
    alpha: float
    beta: float
    gamma_ci: tuple[float, float]
    alpha_ci: tuple[float, float]
    beta_ci: tuple[float, float]

    @property
    def n_peak(self) -> float:
        """Where throughput peaks: sqrt((1 - alpha) / beta) (inf when beta <= 0)."""
        return math.sqrt((1 - self.alpha) / self.beta) if self.beta > 0 else math.inf

    def predict(self, n: float | np.ndarray) -> float | np.ndarray:
        return usl(n, self.gamma, self.alpha, self.beta)


def usl(n: float | np.ndarray, gamma: float, alpha: float, beta: float) -> float | np.ndarray:
    return gamma * n / (1 + alpha * (n - 1) + beta * n * (n - 1))


def fit_usl(n: Sequence[float], x: Sequence[float]) -> USLFit:
    """Least-squares USL fit; intervals from the covariance (t, dof = points - 3)."""
    na, xa = np.asarray(n, dtype=float), np.asarray(x, dtype=float)
    if na.size < 4:
        raise ValueError("a USL fit needs at least 4 points (3 parameters)")
    x1 = xa[na == 1][0] if (na == 1).any() else xa[0] / na[0]
    (g, a, b), cov = optimize.curve_fit(usl, na, xa, p0=(x1, 0.01, 0.0001),
                                        bounds=([0, 0, 0], [np.inf, 1, 1]))
    t = stats.t.ppf(0.975, max(na.size - 3, 1))
    err = np.sqrt(np.clip(np.diag(cov), 0, None)) * t
    return USLFit(float(g), float(a), float(b), (g - err[0], g + err[0]),
                  (a - err[1], a + err[1]), (b - err[2], b + err[2]))


def utilization(throughput: float, service_time: float) -> float:
    """Utilization law: U = X * S."""
    return throughput * service_time


def little_population(throughput: float, response_time: float) -> float:
    """Little's law: N = X * R."""
    return throughput * response_time


def interactive_response_time(users: int, throughput: float, think_time: float) -> float:
    """Interactive response-time law for a closed loop: R = N / X - Z."""
    return users / throughput - think_time


def knee_population(total_demand: float, think_time: float, max_demand: float) -> float:
    """N* = (D + Z) / D_max: beyond it the bottleneck saturates."""
    return (total_demand + think_time) / max_demand
