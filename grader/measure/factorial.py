"""2^k·r factorial designs: effects, allocation of variation and their confidence
intervals (Jain, *The Art of Computer Systems Performance Analysis*, ch. 17-18), and
the linear fit of time against work that separates a fixed overhead from a per-task
cost (the cores x work grid).

Why a 2^k·r design rather than one factor at a time: with k factors at two levels
each, 2^k runs (times r replications) give every main effect *and* every interaction
with the same precision, and the replications give the experimental error, so an
effect can be called significant or not. The ASL seed report uses exactly this (a
2^3·4 design with allocation of variation) to say which factor matters.

Experiments are in standard order: the first factor alternates fastest
(-, +, -, +, ...), the second every two, and so on; effects are named I, A, B, AB,
C, AC, BC, ABC, ... with the factors' own names.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats


def signs(k: int) -> list[tuple[int, ...]]:
    """Levels (-1/+1) of the k factors in each of the 2^k experiments, standard order."""
    if k < 1:
        raise ValueError("a factorial design needs at least one factor")
    return [tuple(1 if (i >> j) & 1 else -1 for j in range(k)) for i in range(2 ** k)]


def effect_terms(k: int) -> list[tuple[int, ...]]:
    """The 2^k effects as tuples of factor indices, standard (Yates) order:
    (), (0,), (1,), (0, 1), (2,), (0, 2), (1, 2), (0, 1, 2), ..."""
    return [tuple(j for j in range(k) if (i >> j) & 1) for i in range(2 ** k)]


def term_name(term: tuple[int, ...], names: Sequence[str]) -> str:
    return "I" if not term else "×".join(names[j] for j in term)


@dataclass(frozen=True, slots=True)
class Effect:
    """One effect q with its confidence interval and share of the variation.

    ``variation`` is SS_effect / SST (0 for I, which explains the mean, not the
    variation); ``significant`` means the interval excludes zero."""

    name: str
    q: float
    ci_low: float
    ci_high: float
    variation: float

    @property
    def significant(self) -> bool:
        return not self.ci_low <= 0 <= self.ci_high


@dataclass(frozen=True, slots=True)
class FactorialResult:
    """Effects of a 2^k·r design on one response."""

    factors: tuple[str, ...]
    replications: int
    confidence: float
    effects: tuple[Effect, ...]
    sst: float
    sse: float

    @property
    def error_variation(self) -> float:
        return self.sse / self.sst if self.sst > 0 else 0.0

    def effect(self, name: str) -> Effect:
        for e in self.effects:
            if e.name == name:
                return e
        raise KeyError(name)

    def ranked(self) -> list[Effect]:
        """Effects other than I, the largest share of variation first."""
        return sorted((e for e in self.effects if e.name != "I"), key=lambda e: -e.variation)

    def predict(self, levels: Sequence[int]) -> float:
        """The model's response at the given -1/+1 levels."""
        total = 0.0
        for e, term in zip(self.effects, effect_terms(len(self.factors)), strict=True):
            total += e.q * math.prod(levels[j] for j in term)
        return total


def analyse(factors: Sequence[str], responses: Sequence[Sequence[float]], *,
            confidence: float = 0.95) -> FactorialResult:
    """Effects of a 2^k·r design.

    :param responses: per experiment in standard order (``signs``), its r replications
        (the same r for every experiment).
    :param confidence: of the effects' intervals; with r = 1 there is no error estimate
        and every interval is the point itself.
    """
    k = len(factors)
    if len(responses) != 2 ** k:
        raise ValueError(f"{k} factors need {2 ** k} experiments, got {len(responses)}")
    r = len(responses[0])
    if r < 1 or any(len(y) != r for y in responses):
        raise ValueError("every experiment needs the same number (>= 1) of replications")
    y = np.asarray(responses, dtype=float)
    if not np.all(np.isfinite(y)):
        raise ValueError("a response is not a finite number")
    means = y.mean(axis=1)
    rows = signs(k)
    terms = effect_terms(k)
    n = 2 ** k
    qs = [float(sum(means[i] * math.prod(rows[i][j] for j in t) for i in range(n)) / n)
          for t in terms]
    sse = float(((y - means[:, None]) ** 2).sum())
    ss = [n * r * q * q for q in qs]
    sst = float(((y - y.mean()) ** 2).sum())
    dof = n * (r - 1)
    if dof > 0:
        se = math.sqrt(sse / dof)
        half = float(stats.t.ppf((1 + confidence) / 2, dof)) * se / math.sqrt(n * r)
    else:
        half = 0.0
    effects = tuple(Effect(term_name(t, factors), q, q - half, q + half,
                           (s / sst if sst > 0 else 0.0) if t else 0.0)
                    for t, q, s in zip(terms, qs, ss, strict=True))
    return FactorialResult(tuple(factors), r, confidence, effects, sst, sse)


@dataclass(frozen=True, slots=True)
class LinearFit:
    """time = fixed + per_task * work, with confidence intervals (the cores x work grid:
    the intercept is the fixed overhead, the slope the cost of one more task)."""

    fixed: float
    fixed_ci: float
    per_task: float
    per_task_ci: float
    r2: float
    points: int


def linear_fit(work: Sequence[float], time: Sequence[float], *,
               confidence: float = 0.95) -> LinearFit:
    """Least squares of ``time`` on ``work`` with t intervals (n - 2 dof)."""
    x, t = np.asarray(work, dtype=float), np.asarray(time, dtype=float)
    if x.size < 3 or len(set(x.tolist())) < 2:
        raise ValueError("a fixed-overhead fit needs at least 3 points at 2 or more work sizes")
    res = stats.linregress(x, t)
    q = float(stats.t.ppf((1 + confidence) / 2, x.size - 2))
    return LinearFit(float(res.intercept), q * float(res.intercept_stderr), float(res.slope),
                     q * float(res.stderr), float(res.rvalue) ** 2, int(x.size))


def levels_grid(levels: Mapping[str, Sequence[object]]) -> list[dict[str, object]]:
    """Every combination of two levels per factor, standard order (first factor fastest)."""
    names = list(levels)
    for name, lv in levels.items():
        if len(lv) != 2:
            raise ValueError(f"factor {name!r} needs exactly two levels, got {list(lv)}")
    out = []
    for s in signs(len(names)):
        out.append({name: levels[name][0 if v < 0 else 1] for name, v in zip(names, s,
                                                                               strict=True)})
    return out

