"""The three workloads a campaign runs at N pinned workers, and how a repetition is
summarised (throughput over its steady window, response-time percentiles).

* ``pipeline`` -- gradeline's grading core (sandbox, limits, validation);
* ``bare``     -- compile + run + compare with nothing around it (``bare_one.sh``);
* ``cpu``      -- a pure CPU loop, the ceiling any workload could scale to.
"""

from __future__ import annotations

import os
import queue
import resource
import subprocess
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from pathlib import Path

import numpy as np

from grader.core.errors import GradelineError
from grader.core.jobs import GradingJob
from grader.pipeline.local_executor import WorkerSpec, grade_many

WORKLOADS = ("pipeline", "bare", "cpu")
CPU_LOOP_ITERS = 100_000_000  # ~0.13 s on the dev machine
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Job:
    problem: str
    source: str


@dataclass(slots=True)
class Rep:
    """One repetition of one workload at N workers."""

    workload: str
    n: int
    rep: int
    jobs: int
    wall_s: float
    throughput: float  # jobs/s over the steady window (start-up excluded)
    raw_throughput: float  # jobs / wall, start-up included
    window_s: float
    mean_response_s: float
    p50_s: float
    p90_s: float
    p95_s: float
    p99_s: float
    max_s: float
    occupancy: float  # mean jobs in service over the window (Little's L)
    cpu_s: float  # CPU seconds of all children (utilization law)
    warmup: bool = False


def steady_throughput(finishes: Sequence[float], trim: float) -> tuple[float, float, int, int]:
    """(jobs/s, window seconds, first, last index) between the completions at ``trim`` and
    ``1 - trim`` of the run: start-up (pool spawn, cold caches) and the ragged end
    (idle workers while the last jobs finish) are left out."""
    f = sorted(finishes)
    m = len(f)
    lo = int(m * trim)
    hi = max(lo + 1, m - 1 - int(m * trim))
    if m < 3 or hi >= m or f[hi] <= f[lo]:
        return (m / (f[-1] - f[0]) if m > 1 and f[-1] > f[0] else float("nan")), \
            (f[-1] - f[0] if m > 1 else 0.0), 0, m - 1
    return (hi - lo) / (f[hi] - f[lo]), f[hi] - f[lo], lo, hi


def summarize(workload: str, n: int, rep: int, t0: float, t1: float,
              spans: Sequence[tuple[float, float]], cpu_s: float, trim: float) -> Rep:
    finishes = [e for _, e in spans]
    if trim > 0:
        x, window, lo, hi = steady_throughput(finishes, trim)
        fs = sorted(finishes)
        w0, w1 = (fs[lo], fs[hi]) if spans else (t0, t1)
    else:  # every job once, from the first start (pool spawned) to the last finish
        w0 = min((s for s, _ in spans), default=t0)
        w1 = max(finishes, default=t1)
        window = w1 - w0
        x = len(spans) / window if window > 0 else float("nan")
    occ = sum(max(0.0, min(e, w1) - max(s, w0)) for s, e in spans) / (w1 - w0) \
        if w1 > w0 else float("nan")
    resp = np.array([e - s for s, e in spans]) if spans else np.array([np.nan])
    p = [float(v) for v in np.percentile(resp, [50, 90, 95, 99, 100])]
    return Rep(workload, n, rep, len(spans), t1 - t0, x, len(spans) / (t1 - t0), window,
               float(resp.mean()), p[0], p[1], p[2], p[3], p[4], occ, cpu_s)


def pinned_pool(cpus: Sequence[int]) -> ThreadPoolExecutor:
    """Threads pinned one per CPU: a thread's affinity is its own (sched_setaffinity(0)
    pins the calling thread) and the processes it starts inherit it."""
    slots: queue.SimpleQueue[int] = queue.SimpleQueue()
    for c in cpus:
        slots.put(c)
    return ThreadPoolExecutor(max_workers=len(cpus), initializer=lambda: os.sched_setaffinity(
        0, [slots.get()]))


def _timed(argv: Sequence[str]) -> tuple[float, float]:
    s = time.time()
    subprocess.run(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False, timeout=600)
    return s, time.time()


def _run_pinned(argvs: Sequence[Sequence[str]], cpus: Sequence[int],
                progress: Progress | None) -> list[tuple[float, float]]:
    spans = []
    with pinned_pool(cpus) as ex:
        futs = [ex.submit(_timed, a) for a in argvs]
        for i, f in enumerate(as_completed(futs), 1):
            spans.append(f.result())
            if progress:
                progress(i, len(futs))
    return spans


def package_file(name: str) -> Path:
    """A file shipped beside this module (the bare loop script, the CPU loop source)."""
    return Path(str(resources.files("grader.measure").joinpath(name)))


def cpu_loop_binary(workdir: Path) -> Path:
    """Compile the pure CPU loop once per campaign (outside any measurement)."""
    out = workdir / "cpu_loop"
    if not out.exists():
        subprocess.run(["gcc", "-O2", "-o", str(out), str(package_file("cpu_loop.c"))],
                       check=True)
    return out


def run_workload(workload: str, jobs: Sequence[Job], cpus: Sequence[int], workdir: Path,
                 *, cpu_iters: int = CPU_LOOP_ITERS, worker: WorkerSpec | None = None,
                 progress: Progress | None = None
                 ) -> tuple[float, float, list[tuple[float, float]], float]:
    """Run every job once on ``cpus``: (start, end, per-job (start, finish), child CPU s)."""
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    if workload == "pipeline":
        if worker is None:
            raise GradelineError("the pipeline workload needs a sandbox (WorkerSpec)")
        spans = []
        items = [GradingJob(Path(j.problem), Path(j.source)) for j in jobs]
        for g in grade_many(items, cpus, worker, progress):
            spans.append((datetime.fromisoformat(g.started_at).timestamp(),
                          datetime.fromisoformat(g.finished_at).timestamp()))
    elif workload == "bare":
        script = str(package_file("bare_one.sh"))
        spans = _run_pinned([["bash", script, j.problem, j.source] for j in jobs], cpus,
                            progress)
    elif workload == "cpu":
        binary = str(cpu_loop_binary(workdir))
        spans = _run_pinned([[binary, str(cpu_iters)] for _ in jobs], cpus, progress)
    else:
        raise GradelineError(f"unknown workload {workload!r} (one of {', '.join(WORKLOADS)})")
    t1 = time.time()
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    return t0, t1, spans, cpu_s
