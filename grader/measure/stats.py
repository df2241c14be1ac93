"""Repetitions: mean with a t-distribution confidence interval, and the adaptive
stopping rule (CI95/mean below a bound) the campaign and the analysis share."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats


def mean_ci(xs: Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    """Mean and half-width of its confidence interval (t-distribution, n-1 dof)."""
    a = np.asarray(xs, dtype=float)
    if a.size < 2:
        return float(a.mean()) if a.size else math.nan, math.nan
    half = stats.t.ppf((1 + confidence) / 2, a.size - 1) * a.std(ddof=1) / math.sqrt(a.size)
    return float(a.mean()), float(half)


def precise_enough(xs: Sequence[float], rel_ci: float = 0.05, min_runs: int = 2) -> bool:
    """Whether repetitions may stop: at least ``min_runs`` and CI95/|mean| < ``rel_ci``."""
    if len(xs) < min_runs:
        return False
    m, h = mean_ci(xs)
    return m != 0 and h / abs(m) < rel_ci
