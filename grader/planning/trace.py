"""Submission traces: what researchers replay, generate and export.

A trace is a CSV file, one row per submission::

    time,student,assignment,submission,think_s

``time`` is seconds from the trace's start (open replay submits each row at its
time); ``think_s`` is how long the student thinks after the previous result
before this submission (closed replay: the next attempt waits for the previous
result plus ``think_s``); ``submission`` is a file or directory, relative to the
trace's directory unless absolute. The generators are seeded, so a trace is
reproducible from its command line.

SWF (the Standard Workload Format of the Parallel Workloads Archive: 18 fields a
row, -1 where unknown) is what scheduler simulators read.
"""

from __future__ import annotations

import csv
import io
import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from grader.core.finished import Finished

FIELDS = ("time", "student", "assignment", "submission", "think_s")


@dataclass(frozen=True, slots=True)
class TraceRow:
    """One submission of a trace."""

    time: float
    student: str
    assignment: str
    submission: str
    think_s: float = 0.0


def write_csv(rows: Iterable[TraceRow]) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(FIELDS)
    for r in rows:
        w.writerow([f"{r.time:.3f}", r.student, r.assignment, r.submission,
                    f"{r.think_s:.3f}"])
    return out.getvalue()


def read_csv(text: str) -> list[TraceRow]:
    """:raises ValueError: naming the line of a malformed row."""
    rows = []
    reader = csv.DictReader(io.StringIO(text))
    missing = {"time", "student", "assignment", "submission"} - set(reader.fieldnames or ())
    if missing:
        raise ValueError(f"trace header lacks {', '.join(sorted(missing))} "
                         f"(expected {','.join(FIELDS)})")
    for n, d in enumerate(reader, 2):
        try:
            t = float(d["time"])
            think = float(d.get("think_s") or 0)
        except (TypeError, ValueError) as e:
            raise ValueError(f"trace line {n}: {e}") from e
        if not (math.isfinite(t) and t >= 0 and math.isfinite(think) and think >= 0):
            raise ValueError(f"trace line {n}: time and think_s must be finite and >= 0")
        if not d["student"] or not d["assignment"] or not d["submission"]:
            raise ValueError(f"trace line {n}: student, assignment and submission are "
                             "required")
        rows.append(TraceRow(t, d["student"], d["assignment"], d["submission"], think))
    return sorted(rows, key=lambda r: r.time)


# -- generators ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Work:
    """A submission a generator may draw: the student it belongs to and its file."""

    student: str
    assignment: str
    submission: str


def _by_student(pool: Sequence[Work]) -> dict[str, list[Work]]:
    out: dict[str, list[Work]] = {}
    for w in pool:
        out.setdefault(w.student, []).append(w)
    if not out:
        raise ValueError("no submissions to draw from")
    return out


def poisson(pool: Sequence[Work], rate: float, count: int, seed: int = 1) -> list[TraceRow]:
    """``count`` arrivals of a Poisson process at ``rate`` per second (exponential
    gaps), each a submission drawn uniformly from ``pool``."""
    if rate <= 0 or count < 0:
        raise ValueError("rate must be > 0 and count >= 0")
    rng = random.Random(seed)  # noqa: S311 -- reproducible traces, not secrets
    t, rows = 0.0, []
    for _ in range(count):
        t += rng.expovariate(rate)
        w = rng.choice(pool)
        rows.append(TraceRow(t, w.student, w.assignment, w.submission))
    return rows


def rush_times(count: int, duration_s: float, growth: float, rng: random.Random
               ) -> list[float]:
    """``count`` arrival times on [0, duration] of a Poisson process whose rate grows
    as exp(growth * t / duration) toward the deadline at ``duration`` (the
    conditional arrival times are i.i.d. with that density: inverse-CDF sampling)."""
    out = []
    for _ in range(count):
        u = rng.random()
        x = u if abs(growth) < 1e-9 else math.log1p(u * math.expm1(growth)) / growth
        out.append(x * duration_s)
    return sorted(out)


def fit_growth(times: Sequence[float], duration_s: float) -> float:
    """The maximum-likelihood growth of ``rush_times`` for observed arrival times on
    [0, duration] (e.g. last term's, deadline at ``duration``): solves
    mean(x) = 1/(1 - e^-b) - 1/b for the normalised times x = t/duration."""
    if not times or duration_s <= 0:
        raise ValueError("need arrival times and a positive duration")
    m = sum(min(max(t / duration_s, 0.0), 1.0) for t in times) / len(times)

    def mean_x(b: float) -> float:
        if abs(b) < 1e-6:
            return 0.5 + b / 12
        return 1 / (-math.expm1(-b)) - 1 / b

    lo, hi = -200.0, 200.0  # mean_x rises monotonically from 0 to 1
    for _ in range(200):
        mid = (lo + hi) / 2
        if mean_x(mid) < m:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def deadline_rush(pool: Sequence[Work], count: int, duration_s: float, growth: float = 3.0,
                  seed: int = 1) -> list[TraceRow]:
    """``count`` submissions over ``duration_s`` seconds ending at the deadline, the
    rate rising as exp(growth * t / duration) (growth 3: twenty times the rate at
    the deadline as at the start); fit ``growth`` to real times with ``fit_growth``."""
    rng = random.Random(seed)  # noqa: S311 -- reproducible traces, not secrets
    rows = []
    for t in rush_times(count, duration_s, growth, rng):
        w = rng.choice(pool)
        rows.append(TraceRow(t, w.student, w.assignment, w.submission))
    return rows


def closed_loop(pool: Sequence[Work], students: int, attempts: int, think_s: float,
                seed: int = 1, exponential: bool = False) -> list[TraceRow]:
    """``students`` students, each submitting ``attempts`` times, thinking ``think_s``
    after each result (exponentially distributed around it with ``exponential``);
    the first attempts all come at time 0. Students and their files are drawn from
    ``pool`` (a student with fewer files than attempts resubmits them in turn)."""
    if students < 1 or attempts < 1 or think_s < 0:
        raise ValueError("students and attempts must be >= 1, think time >= 0")
    rng = random.Random(seed)  # noqa: S311 -- reproducible traces, not secrets
    by = _by_student(pool)
    names = sorted(by)
    chosen = rng.sample(names, students) if students <= len(names) else \
        [names[i % len(names)] for i in range(students)]
    rows = []
    for i, s in enumerate(chosen):
        files = by[s]
        for a in range(attempts):
            w = files[a % len(files)]
            think = 0.0 if a == 0 else (rng.expovariate(1 / think_s)
                                        if exponential and think_s > 0 else think_s)
            rows.append(TraceRow(0.0, s if students <= len(names) else f"{s}-{i}",
                                 w.assignment, w.submission, think))
    return rows


# -- SWF -------------------------------------------------------------------------------
def capture(rows: Sequence[Finished], ref: Callable[[Finished], str]) -> list[TraceRow]:
    """A finished run as a trace: times from the first arrival, ``ref`` naming each
    submission, think time = the gap since that student's previous result."""
    rows = sorted(rows, key=lambda r: r.arrived)
    t0 = rows[0].arrived if rows else 0.0
    last: dict[str, float] = {}
    out = []
    for r in rows:
        prev = last.get(r.student)
        think = max(r.arrived - prev, 0.0) if prev is not None else 0.0
        out.append(TraceRow(r.arrived - t0, r.student, r.assignment, ref(r), think))
        if r.stored is not None:
            last[r.student] = r.stored
    return out


def swf(rows: Sequence[Finished], *, note: str = "gradeline") -> str:
    """The run as SWF: one job per submission (1 processor), times in seconds from
    the first arrival; wait = start - arrival, run = finish - start; status 1
    graded, 5 refused (quarantined); user = student, executable = assignment."""
    rows = sorted(rows, key=lambda r: r.arrived)
    t0 = rows[0].arrived if rows else 0.0
    users = {s: i + 1 for i, s in enumerate(sorted({r.student for r in rows}))}
    apps = {a: i + 1 for i, a in enumerate(sorted({r.assignment for r in rows}))}
    out = ["; Version: 2.2", f"; Computer: {note}",
           "; Note: one job per submission; whole seconds (rounded); -1 unknown",
           f"; MaxJobs: {len(rows)}", f"; MaxRecords: {len(rows)}",
           f"; UnixStartTime: {t0:.0f}"]

    def num(v: float | None) -> str:
        return "-1" if v is None else str(round(max(v, 0.0)))

    for i, r in enumerate(rows, 1):
        wait = r.started - r.arrived if r.started is not None else None
        run = r.finished - r.started if r.started is not None and r.finished is not None \
            else None
        status = 1 if r.state == "graded" else 5
        fields = [str(i), num(r.arrived - t0), num(wait), num(run), "1", num(r.cpu_s),
                  num(r.memory_kb), "1", "-1", "-1", str(status), str(users[r.student]),
                  "-1", str(apps[r.assignment]), "-1", "-1", "-1", "-1"]
        out.append(" ".join(fields))
    return "\n".join(out) + "\n"
