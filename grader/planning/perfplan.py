"""What the performance phase of an assignment costs: core-hours and finishing time for
N students, from its declaration (``core.perfspec``) and the reference's measured
times.

Per timed student and core count N, the protocol runs ``warmup + R_N`` rounds of the
reference and the submission back to back, so

    T_student = sum over N of (warmup + R_N) x (t_ref(N) + t_sub(N) + 2 x o) + F

with t_sub(N) = ratio x t_ref(N) (capped at the time limit), o the sandbox's cost per
run, R_N the rounds the CI rule needs (measured on the reference against itself, at
least ``min``), and F what does not scale with the submission's speed: the cache
reading (a simulator's or the counters' runs on the small input), sandbox starts, the
reference's build -- what the reference's own phase took beyond the first term
(``fixed_cost``). The whole shape's cores are held meanwhile:

    core-hours = students x accepted x T_student x cores / 3600
    finishing time = ceil(students x accepted / A) x T_student

with A = the allocations of the shape that fit the cores given (identical jobs on A
workers: list scheduling is exact). Only accepted submissions are timed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from grader.core.perfspec import PerformanceSpec

#: gl-runner's cost per run beside the program (a clone and a cgroup; measured on the
#: sandbox benchmarks: tens of milliseconds at most)
RUN_OVERHEAD_S = 0.03


@dataclass(frozen=True, slots=True)
class PerfDemand:
    """The reference at one core count: one timed run's time (its inputs together) and
    the rounds the stopping rule needed."""

    cores: int
    reference_s: float
    rounds: float


@dataclass(frozen=True, slots=True)
class PerfPlan:
    """The performance phase's predicted cost."""

    students: int
    timed: int  # students whose submission is accepted, so timed
    per_student_s: float
    by_cores: tuple[tuple[int, float], ...]  # (N, seconds per student at N)
    shape_cores: int
    allocations: int
    core_hours: float
    finish_s: float
    fixed_s: float = 0.0  # per student, not scaling with its speed (F)

    def to_dict(self) -> dict[str, object]:
        return {"students": self.students, "timed": self.timed,
                "per_student_s": round(self.per_student_s, 3),
                "by_cores": [{"cores": n, "seconds": round(s, 3)} for n, s in self.by_cores],
                "shape_cores": self.shape_cores, "allocations": self.allocations,
                "core_hours": round(self.core_hours, 3), "finish_s": round(self.finish_s, 1),
                "fixed_s": round(self.fixed_s, 3)}

    def describe(self) -> str:
        per = ", ".join([*(f"{n} core{'s' * (n != 1)}: {s:.1f} s" for n, s in self.by_cores),
                         *([f"cache reading and starts: {self.fixed_s:.1f} s"]
                           if self.fixed_s else [])])
        return (f"{self.timed} of {self.students} students timed, {self.per_student_s:.1f} s "
                f"each ({per}) on {self.shape_cores} core(s): {self.core_hours:.2f} "
                f"core-hours; on {self.allocations} allocation(s) at once it finishes in "
                f"{self.finish_s / 60:.1f} min")


def fixed_cost(spec: PerformanceSpec, demands: Sequence[PerfDemand], took_s: float,
               overhead_s: float = RUN_OVERHEAD_S) -> float:
    """F of the module docstring: what the reference's phase against itself took
    (``took_s``, its record's ``timing.performance_s``) beyond the rounds' part."""
    rounds = predict(spec, demands, students=1, shape_cores=1, cores=1,
                     overhead_s=overhead_s).per_student_s
    return max(0.0, took_s - rounds)


def predict(spec: PerformanceSpec, demands: Sequence[PerfDemand], *, students: int,
            shape_cores: int, cores: int, accepted: float = 1.0, ratio: float = 1.0,
            time_limit_s: float | None = None, overhead_s: float = RUN_OVERHEAD_S,
            fixed_s: float = 0.0) -> PerfPlan:
    """The plan (see the module docstring).

    :param cores: the cores grading may use at once (a partition's).
    :param accepted: the share of students whose submission is accepted (timed).
    :param ratio: the submissions' time over the reference's (1: as fast).
    :param fixed_s: F, per timed student (``fixed_cost``).
    :raises ValueError: when a core count of ``spec`` has no demand, or ``cores`` cannot
        hold one allocation.
    """
    if cores < shape_cores:
        raise ValueError(f"{cores} cores cannot hold one allocation of {shape_cores}")
    by = {d.cores: d for d in demands}
    missing = [n for n in spec.cores if n not in by]
    if missing:
        raise ValueError(f"no measured reference time at {missing} core(s)")
    per_cores = []
    for n in spec.cores:
        d = by[n]
        runs = len(spec.inputs_at(n))
        sub = d.reference_s * ratio
        if time_limit_s is not None:
            sub = min(sub, time_limit_s * runs)
        rounds = spec.repetitions.warmup + max(d.rounds, spec.repetitions.min)
        per_cores.append((n, rounds * (d.reference_s + sub + 2 * runs * overhead_s)))
    per = sum(s for _, s in per_cores) + fixed_s
    timed = round(students * accepted)
    allocations = cores // shape_cores
    return PerfPlan(students, timed, per, tuple(per_cores), shape_cores, allocations,
                    timed * per * shape_cores / 3600, math.ceil(timed / allocations) * per,
                    fixed_s)
