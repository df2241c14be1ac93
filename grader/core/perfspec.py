"""What an assignment's performance tests are (``gradeline.yaml`` ``performance:``):
the reference solution, the timed inputs, the core counts to measure at, how often to
repeat, and the items that turn measured figures into points.

A figure becomes a share of an item's points through a **map**: ``bands`` (the first
threshold the figure reaches gives its percentage, as CS149 passes a student within
1.2x of the reference) or ``linear`` (piecewise-linear between the listed points,
flat beyond the ends, as CS267 scores efficiency: 0 at 0, 75 % at 0.5, 100 % from
0.8). Pure: the formats read it, the judge measures by it, ``core.perfscore`` scores
by it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Metric = Literal["time_ratio", "throughput_ratio", "speedup", "efficiency"]
METRICS: tuple[Metric, ...] = ("time_ratio", "throughput_ratio", "speedup", "efficiency")
#: a smaller figure is better (a time); the others are better larger
LOWER_IS_BETTER = frozenset({"time_ratio"})
#: figures read at one core count against the program's own (or the reference's)
#: time on one core
SCALING_METRICS = frozenset({"speedup", "efficiency"})
Baseline = Literal["self", "reference"]
BASELINES: tuple[Baseline, ...] = ("self", "reference")
Scaling = Literal["strong", "weak"]
SCALINGS: tuple[Scaling, ...] = ("strong", "weak")
MapKind = Literal["bands", "linear"]
MAP_KINDS: tuple[MapKind, ...] = ("bands", "linear")
#: the confidence of the interval the repetitions stop on (t-distribution)
CONFIDENCE = 0.95


@dataclass(frozen=True, slots=True)
class PointsMap:
    """How a figure becomes a percentage of an item's points.

    :param kind: ``bands``: ``steps`` are (threshold, percent), best first; the first
        threshold the figure reaches (at most it for a figure better smaller, at least
        it otherwise) gives its percent, none of them 0. ``linear``: ``steps`` are
        (figure, percent) with figures increasing; percent is interpolated linearly
        between them and flat beyond the first and the last.
    :param lower_is_better: for ``bands``, which way "reaches" goes.
    """

    kind: MapKind
    steps: tuple[tuple[float, float], ...]
    lower_is_better: bool = False

    def __post_init__(self) -> None:
        if not self.steps:
            raise ValueError("needs at least one step")
        if any(not 0 <= p <= 100 for _, p in self.steps):
            raise ValueError("percentages must be from 0 to 100")
        xs = [x for x, _ in self.steps]
        if self.kind == "linear":
            if any(b <= a for a, b in itertools.pairwise(xs)):
                raise ValueError("a linear map's figures must increase")
            return
        better_first = xs if self.lower_is_better else [-x for x in xs]
        if any(b <= a for a, b in itertools.pairwise(better_first)):
            raise ValueError("bands go from the best threshold to the worst ("
                             + ("increasing" if self.lower_is_better else "decreasing")
                             + " thresholds)")
        ps = [p for _, p in self.steps]
        if any(b > a for a, b in itertools.pairwise(ps)):
            raise ValueError("a worse band cannot give more points than a better one")

    def percent(self, x: float) -> float:
        """The percentage of the item's points figure ``x`` earns (0 to 100)."""
        if self.kind == "bands":
            for threshold, p in self.steps:
                if (x <= threshold) if self.lower_is_better else (x >= threshold):
                    return p
            return 0.0
        (x0, p0), (xn, pn) = self.steps[0], self.steps[-1]
        if x <= x0:
            return p0
        if x >= xn:
            return pn
        for (a, pa), (b, pb) in itertools.pairwise(self.steps):
            if a <= x <= b:
                return pa + (pb - pa) * (x - a) / (b - a)
        return pn  # not reached: the figures increase

    def describe(self) -> str:
        """In words, for the record and the docs: "<= 1.2: 100 %, <= 1.5: 50 %"."""
        if self.kind == "linear":
            return "linear through " + ", ".join(f"({x:g}, {p:g} %)" for x, p in self.steps)
        op = "<=" if self.lower_is_better else ">="
        return ", ".join(f"{op} {x:g}: {p:g} %" for x, p in self.steps) + ", else 0 %"


@dataclass(frozen=True, slots=True)
class Item:
    """One scored figure: ``metric`` at ``cores`` worth up to ``points``.

    :param baseline: for speedup and efficiency, whose one-core time they divide:
        ``self`` (the submission's own, CS267's t1/(p·tp)) or ``reference`` (the
        reference's: a program slow on one core gains nothing by it).
    """

    metric: Metric
    cores: int
    points: float
    scale: PointsMap
    baseline: Baseline = "self"

    @property
    def label(self) -> str:
        what = {"time_ratio": "time / reference's time",
                "throughput_ratio": "throughput / reference's throughput",
                "speedup": "speedup", "efficiency": "parallel efficiency"}[self.metric]
        if self.metric in SCALING_METRICS and self.baseline == "reference":
            what += " (over the reference's one-core time)"
        return f"{what} at {self.cores} core{'s' * (self.cores != 1)}"


@dataclass(frozen=True, slots=True)
class Repetitions:
    """How often each program runs at each core count: ``warmup`` runs discarded, then
    at least ``min`` and at most ``max`` timed ones, stopping once the CI95 half-width
    of each series is at most ``ci`` times its mean."""

    min: int = 3
    max: int = 10
    ci: float = 0.05
    warmup: int = 1

    def __post_init__(self) -> None:
        if not 2 <= self.min <= self.max:
            raise ValueError(f"need 2 <= min <= max, not min {self.min}, max {self.max}")
        if not 0 < self.ci < 1:
            raise ValueError(f"ci must be a fraction of the mean between 0 and 1, not "
                             f"{self.ci}")
        if self.warmup < 0:
            raise ValueError(f"warmup must not be negative, not {self.warmup}")


@dataclass(frozen=True, slots=True)
class PerformanceSpec:
    """An assignment's performance tests.

    :param reference: the reference solution (a file or directory of the package),
        compiled and run like a submission.
    :param inputs: (core count, its timed inputs) for each of ``cores``: the same
        inputs at every count for strong scaling, larger ones for more cores for weak
        scaling. A timed run is one run of the program per input; its time is their sum.
    :param cores: the core counts measured at, ascending (each at most the shape's).
    :param cache_input: a small input both programs run once per core count under the
        node's counters after the timing, for the cache reading (``core.perfcache``);
        None: no cache reading.
    """

    reference: Path
    inputs: tuple[tuple[int, tuple[Path, ...]], ...]
    cores: tuple[int, ...]
    items: tuple[Item, ...]
    repetitions: Repetitions = Repetitions()
    scaling: Scaling = "strong"
    cache_input: Path | None = None

    @property
    def points(self) -> float:
        return sum(i.points for i in self.items)

    def inputs_at(self, cores: int) -> tuple[Path, ...]:
        for n, paths in self.inputs:
            if n == cores:
                return paths
        raise KeyError(cores)

    def files(self) -> Sequence[Path]:
        """Every file it reads (for the package's version): the inputs, the reference."""
        cache = {self.cache_input} if self.cache_input is not None else set()
        return sorted({p for _, ps in self.inputs for p in ps} | cache)
