"""The performance section of a result record: per core count the reference's and
the submission's timed runs (median, mean, CI95), the figures read from them, what
each scoring item gave, and the facts that make the measurement reproducible or not.

A frozen, typed value (the student's page draws the curve from it, staff read the
facts); ``to_json``/``from_json`` are its record form, and a record without it (older
ones, a phase without performance tests) reads as None.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from grader.core.perfcache import CacheReading
from grader.core.perfspec import CONFIDENCE

#: the facts a measurement records, in the order they are shown; each is in force,
#: not in force, or unknown (the node does not say)
FACTS = ("cores", "smt", "l3_partition", "governor", "turbo", "aslr", "thp", "swap", "load")


def t_quantile(confidence: float, dof: int) -> float:
    """The two-sided Student t quantile (scipy's, imported only when timing)."""
    from scipy import stats  # noqa: PLC0415 -- only a timed grading needs it

    return float(stats.t.ppf((1 + confidence) / 2, dof))


@dataclass(frozen=True, slots=True)
class Series:
    """One program's timed runs at one core count (seconds, in the order run)."""

    times_s: tuple[float, ...]

    @property
    def runs(self) -> int:
        return len(self.times_s)

    @property
    def median_s(self) -> float:
        return statistics.median(self.times_s) if self.times_s else math.nan

    @property
    def mean_s(self) -> float:
        return statistics.fmean(self.times_s) if self.times_s else math.nan

    @property
    def ci_s(self) -> float:
        """Half-width of the mean's 95 % confidence interval (t, n-1 degrees of
        freedom); NaN below two runs."""
        n = len(self.times_s)
        if n < 2:
            return math.nan
        return t_quantile(CONFIDENCE, n - 1) * statistics.stdev(self.times_s) / math.sqrt(n)

    def precise(self, fraction: float) -> bool:
        """The stopping rule: CI95 half-width at most ``fraction`` of the mean."""
        mean = self.mean_s
        return len(self.times_s) >= 2 and mean > 0 and self.ci_s <= fraction * mean

    def to_json(self) -> dict[str, Any]:
        return {"times_s": list(self.times_s), "median_s": _r(self.median_s),
                "mean_s": _r(self.mean_s), "ci95_s": _r(self.ci_s), "runs": self.runs}


@dataclass(frozen=True, slots=True)
class Fact:
    """One thing that makes timing reproducible, as found on the node.

    :param in_force: True (as wanted), False (not: the result says so), None (the node
        does not tell, e.g. no cpufreq in a virtual machine).
    """

    name: str  # one of FACTS
    value: str  # what was found, in words
    in_force: bool | None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "in_force": self.in_force}


@dataclass(frozen=True, slots=True)
class Measurement:
    """Both programs at one core count, run interleaved (reference, submission, ...)."""

    cores: int
    cpus: tuple[int, ...]  # the CPUs both were pinned to
    reference: Series
    submission: Series
    facts: tuple[Fact, ...] = ()

    @property
    def ratios(self) -> tuple[float, ...]:
        """The submission's time over the reference's, round by round (each pair ran
        back to back, so a slow spell of the node slows both)."""
        return tuple(s / r for s, r in zip(self.submission.times_s, self.reference.times_s,
                                           strict=False) if r > 0)

    def to_json(self) -> dict[str, Any]:
        return {"cores": self.cores, "cpus": list(self.cpus),
                "reference": self.reference.to_json(),
                "submission": self.submission.to_json(),
                "facts": [f.to_json() for f in self.facts]}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Measurement:
        return cls(int(d["cores"]), tuple(int(c) for c in d.get("cpus", ())),
                   Series(tuple(float(t) for t in d["reference"]["times_s"])),
                   Series(tuple(float(t) for t in d["submission"]["times_s"])),
                   tuple(Fact(str(f["name"]), str(f["value"]), f.get("in_force"))
                         for f in d.get("facts", ())))


@dataclass(frozen=True, slots=True)
class ItemScore:
    """What one scoring item gave: its figure (None: not measured) and its points."""

    label: str
    metric: str
    cores: int
    figure: float | None
    percent: float
    points: float
    max_points: float
    rule: str = ""  # the map, in words

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "metric": self.metric, "cores": self.cores,
                "figure": None if self.figure is None else _r(self.figure),
                "percent": _r(self.percent), "points": _r(self.points),
                "max_points": self.max_points, "rule": self.rule}


@dataclass(frozen=True, slots=True)
class Performance:
    """A submission's performance tests: the measurements, the items' points, and
    ``gate``: why it earns no performance points ("" when it was scored); ``cache``:
    the cache reading on the test's small input (``core.perfcache``; None where the
    test declares none, or before it was read: older records)."""

    measurements: tuple[Measurement, ...]
    items: tuple[ItemScore, ...]
    points: float
    max_points: float
    gate: str = ""
    scaling: str = "strong"
    cache: CacheReading | None = None

    def at(self, cores: int) -> Measurement | None:
        return next((m for m in self.measurements if m.cores == cores), None)

    @property
    def not_in_force(self) -> tuple[str, ...]:
        """The facts not in force in some measurement (what made it less fair)."""
        return _names(self.measurements, False)

    @property
    def unknown(self) -> tuple[str, ...]:
        """The facts the node did not tell."""
        return _names(self.measurements, None)

    def curve(self) -> tuple[tuple[int, float, float], ...]:
        """(cores, the submission's speedup, the reference's speedup) over their own
        times at the fewest cores: the points of the student's S(N) curve."""
        if not self.measurements:
            return ()
        base = self.measurements[0]
        return tuple((m.cores, base.submission.median_s / m.submission.median_s,
                      base.reference.median_s / m.reference.median_s)
                     for m in self.measurements
                     if m.submission.times_s and m.reference.times_s)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"points": _r(self.points), "max_points": self.max_points,
                               "gate": self.gate, "scaling": self.scaling,
                               "not_in_force": list(self.not_in_force),
                               "unknown": list(self.unknown),
                               "measurements": [m.to_json() for m in self.measurements],
                               "items": [i.to_json() for i in self.items]}
        if self.cache is not None:  # records from before cache readings have none
            out["cache"] = self.cache.to_json()
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Performance:
        return cls(tuple(Measurement.from_json(m) for m in d.get("measurements", ())),
                   tuple(ItemScore(str(i["label"]), str(i["metric"]), int(i["cores"]),
                                   None if i.get("figure") is None else float(i["figure"]),
                                   float(i["percent"]), float(i["points"]),
                                   float(i["max_points"]), str(i.get("rule", "")))
                         for i in d.get("items", ())),
                   float(d["points"]), float(d["max_points"]), str(d.get("gate", "")),
                   str(d.get("scaling", "strong")),
                   CacheReading.from_json(d["cache"]) if d.get("cache") else None)


def _names(measurements: Sequence[Measurement], state: bool | None) -> tuple[str, ...]:
    found = {f.name for m in measurements for f in m.facts if f.in_force is state}
    return tuple(n for n in FACTS if n in found)


def _r(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 6)
