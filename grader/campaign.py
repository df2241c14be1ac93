"""Scaling campaigns: the same corpus at N = 1..cores pinned workers, three workloads.

* ``pipeline`` -- gradeline's grading core (sandbox, limits, validation), N workers;
* ``bare``     -- compile + run + compare with nothing around it (``bare_one.sh``);
* ``cpu``      -- a pure CPU loop, the ceiling any workload could scale to.

The thesis measured exactly these three and found g++ (in both of the first two)
stops scaling long before the CPU loop does. Each (workload, N) is repeated after a
discarded warm-up repetition; a rep's throughput is taken over its steady window
(pool start-up excluded; optionally the first and last completions trimmed too), and
reps stop early once CI95/mean < 5% when adaptive. A cachegrind sweep adds g++'s L3
miss rates at simulated L3 sizes per core -- the hardware-independent half of the
question. Everything lands as tidy CSV -- runs.csv (one row per rep), jobs.csv (every
job's start and finish), cachegrind.csv -- and in PostgreSQL when asked.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import platform
import queue
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from grader.errors import GradelineError

WORKLOADS = ("pipeline", "bare", "cpu")
DEFAULT_LL_MB = (0.5, 1.0, 2.0, 2.5, 4.0, 8.0, 16.0, 20.0)
CPU_LOOP_ITERS = 100_000_000  # ~0.13 s on the dev machine


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


@dataclass(slots=True)
class Config:
    workdir: Path
    sandbox_work: Path | None = None  # scratch the sandbox can traverse (state dir)
    count: int = 40
    seed: int = 1
    ns: list[int] = field(default_factory=list)
    workloads: tuple[str, ...] = WORKLOADS
    reps: int = 3
    adaptive: bool = False
    max_reps: int = 20
    rel_ci: float = 0.05
    # 0: throughput over first job start -> last finish (start-up excluded). A window
    # trimmed by completion count (e.g. 0.1) suits long runs of uniform jobs; with a
    # mixed corpus it changes the job mix between N and biases S(N).
    trim: float = 0.0
    warmup_reps: int = 1
    ll_mb: tuple[float, ...] = DEFAULT_LL_MB
    cachegrind_sources: int = 3
    cpu_iters: int = CPU_LOOP_ITERS


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


# ------------------------------------------------------------------ the workloads

def _pinned_pool(cpus: Sequence[int]) -> ThreadPoolExecutor:
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
                progress: Callable[[int, int], None] | None) -> list[tuple[float, float]]:
    spans = []
    with _pinned_pool(cpus) as ex:
        futs = [ex.submit(_timed, a) for a in argvs]
        for i, f in enumerate(as_completed(futs), 1):
            spans.append(f.result())
            if progress:
                progress(i, len(futs))
    return spans


def package_file(name: str) -> Path:
    return Path(str(resources.files("grader").joinpath(name)))


def cpu_loop_binary(workdir: Path) -> Path:
    """Compile the pure CPU loop once per campaign (outside any measurement)."""
    out = workdir / "cpu_loop"
    if not out.exists():
        subprocess.run(["gcc", "-O2", "-o", str(out), str(package_file("cpu_loop.c"))],
                       check=True)
    return out


def run_workload(workload: str, jobs: Sequence[Job], cpus: Sequence[int], workdir: Path,
                 *, cpu_iters: int = CPU_LOOP_ITERS, sandbox_work: Path | None = None,
                 progress: Callable[[int, int], None] | None = None
                 ) -> tuple[float, float, list[tuple[float, float]], float]:
    """Run every job once on ``cpus``: (start, end, per-job (start, finish), child CPU s)."""
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    if workload == "pipeline":
        from grader.pool import grade_many

        os.environ["GRADELINE_COMPILE_CACHE"] = "0"  # every job does all its work
        spans = []
        items = [(Path(j.problem), Path(j.source), None) for j in jobs]
        for g in grade_many(items, cpus, sandbox_work or workdir / "work", progress):
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


# ------------------------------------------------------------------ corpus

def corpus_jobs(workdir: Path, count: int, seed: int) -> list[Job]:
    from grader.corpus import generate_course
    from grader.examples import example_dirs

    dest = workdir / "course"
    entries = generate_course(dest, count=count, seed=seed)
    problems = {d.name: d for d in example_dirs()}
    return [Job(str(problems[e.assignment]), str(dest / e.path)) for e in entries]


def cachegrind_sources(jobs: Sequence[Job], k: int) -> list[Job]:
    """Up to ``k`` distinct C++ sources, one per assignment first (g++ is the subject)."""
    seen: set[str] = set()
    picked: list[Job] = []
    for j in sorted(jobs, key=lambda j: (Path(j.problem).name, j.source)):
        if not j.source.endswith(".cpp"):
            continue
        h = hashlib.sha256(Path(j.source).read_bytes()).hexdigest()
        if h in seen or any(Path(p.problem).name == Path(j.problem).name for p in picked):
            continue
        seen.add(h)
        picked.append(j)
    for j in jobs:  # top up with other distinct sources when assignments ran out
        if len(picked) >= k:
            break
        if j.source.endswith(".cpp"):
            h = hashlib.sha256(Path(j.source).read_bytes()).hexdigest()
            if h not in seen:
                seen.add(h)
                picked.append(j)
    return picked[:k]


def _compile_kind(command: str) -> str:
    exe = Path(command.split()[0]).name if command else "?"
    return "driver" if exe == "g++" else exe


def cachegrind_sweep(jobs: Sequence[Job], ll_mb: Sequence[float], cpus: Sequence[int],
                     workdir: Path, progress: Callable[[int, int], None] | None = None
                     ) -> list[dict[str, Any]]:
    """g++ compiling each source under cachegrind with each simulated L3 size."""
    from grader.metrics import Cachegrind

    tasks = [(mb, j) for mb in ll_mb for j in jobs]

    def one(mb: float, j: Job) -> list[dict[str, Any]]:
        cg = Cachegrind(int(mb * 2**20))
        tag = hashlib.sha256(f"{mb}:{j.source}".encode()).hexdigest()[:12]
        out = workdir / "cachegrind" / tag
        shutil.rmtree(out, ignore_errors=True)
        argv = ["g++", "-O2", "-std=gnu++17", "-pipe", "-o", str(out / "a.out"), j.source]
        p = subprocess.run(cg.wrap(argv, [], out), capture_output=True, text=True,
                           timeout=1800, check=False)
        if not any(out.glob("cachegrind.out.*")):
            raise GradelineError(f"cachegrind produced nothing for {j.source}: {p.stderr[-300:]}")
        rows = []
        for r in cg.runs(out):
            rows.append({"ll_mb": mb, "ll_bytes": r.ll_bytes, "assoc": cg.geometry[1],
                         "source": Path(j.source).name, "assignment": Path(j.problem).name,
                         "process": _compile_kind(r.command), "Ir": r.counts.get("Ir", 0),
                         "Dr": r.counts.get("Dr", 0), "Dw": r.counts.get("Dw", 0),
                         "ll_refs": r.ll_refs, "ll_misses": r.ll_misses,
                         "ll_read_misses": r.counts.get("ILmr", 0) + r.counts.get("DLmr", 0),
                         "ll_write_misses": r.counts.get("DLmw", 0)})
        shutil.rmtree(out, ignore_errors=True)
        return rows

    rows: list[dict[str, Any]] = []
    with _pinned_pool(cpus) as ex:
        futs = [ex.submit(one, mb, j) for mb, j in tasks]
        for i, f in enumerate(as_completed(futs), 1):
            rows.extend(f.result())
            if progress:
                progress(i, len(futs))
    return sorted(rows, key=lambda r: (r["ll_mb"], r["source"], r["process"]))


# ------------------------------------------------------------------ the campaign

def machine_facts(cpus: Sequence[int]) -> dict[str, Any]:
    from grader.metrics import check_all
    from grader.resctrl import Resctrl

    rc = Resctrl()
    try:
        l3 = rc.l3_bytes(cpus[0])
    except (OSError, GradelineError):
        l3 = None
    model = next((ln.split(":", 1)[1].strip() for ln in
                  Path("/proc/cpuinfo").read_text().splitlines()
                  if ln.startswith("model name")), platform.processor())
    return {"host": platform.node(), "cpu_model": model, "cpus": list(cpus),
            "l3_bytes": l3, "kernel": platform.release(),
            "resctrl": rc.status()[1],
            "sources": {a.source: {"usable": a.usable, "reason": a.reason}
                        for a in check_all()}}


def _write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not rows:
        path.write_text("")
        return
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


class Campaign:
    """Runs the whole campaign into ``out`` (runs.csv, cachegrind.csv, campaign.json)."""

    def __init__(self, cfg: Config, out: Path, cpus: Sequence[int],
                 say: Callable[[str], None] = print,
                 progress: Callable[[str], Callable[[int, int], None] | None] = lambda _: None
                 ) -> None:
        self.cfg, self.out, self.cpus, self.say, self.progress = cfg, out, list(cpus), say, \
            progress
        self.id = datetime.now().strftime("campaign-%Y%m%dT%H%M%S")
        self.spans: list[dict[str, Any]] = []  # per job: start/finish, seconds from rep start

    def one_rep(self, workload: str, n: int, rep: int, jobs: Sequence[Job]) -> Rep:
        t0, t1, spans, cpu_s = run_workload(
            workload, jobs, self.cpus[:n], self.cfg.workdir, cpu_iters=self.cfg.cpu_iters,
            sandbox_work=self.cfg.sandbox_work,
            progress=self.progress(f"{workload} N={n} rep {rep}"))
        r = summarize(workload, n, rep, t0, t1, spans, cpu_s, self.cfg.trim)
        r.warmup = rep < 0
        self.spans.extend({"campaign": self.id, "workload": workload, "n": n, "rep": rep,
                           "start_s": round(s - t0, 6), "finish_s": round(e - t0, 6)}
                          for s, e in sorted(spans))
        return r

    def reps(self, workload: str, ns: Sequence[int], jobs: Sequence[Job]) -> Iterator[Rep]:
        """Repetitions *interleaved* across N (rep 0 at every N, then rep 1, ...), so a
        slow drift of the machine (a noisy VM neighbour, thermal state) lands on every N
        alike instead of on whichever N happened to run during it. Adaptive: stop once
        every N has CI95/mean < rel_ci (at least 2 reps)."""
        from analysis.scaling import mean_ci

        xs: dict[int, list[float]] = {n: [] for n in ns}
        target = self.cfg.max_reps if self.cfg.adaptive else self.cfg.reps
        for i in range(-self.cfg.warmup_reps, target):
            for n in ns:
                r = self.one_rep(workload, n, i, jobs)
                yield r
                if not r.warmup:
                    xs[n].append(r.throughput)
            if self.cfg.adaptive and i >= 1 and all(
                    (m := mean_ci(v))[0] and m[1] / m[0] < self.cfg.rel_ci
                    for v in xs.values()):
                break

    def run(self) -> Path:
        from analysis.scaling import mean_ci

        cfg = self.cfg
        cfg.workdir.mkdir(parents=True, exist_ok=True)
        self.out.mkdir(parents=True, exist_ok=True)
        ns = cfg.ns or list(range(1, len(self.cpus) + 1))
        if max(ns) > len(self.cpus):
            raise GradelineError(f"N up to {max(ns)} needs that many cpus; have {self.cpus}")
        jobs = corpus_jobs(cfg.workdir, cfg.count, cfg.seed)
        facts = machine_facts(self.cpus)
        meta = {"id": self.id, "started_at": datetime.now().isoformat(timespec="seconds"),
                "command": " ".join(sys.argv), "config": {
                    **{k: v for k, v in asdict(cfg).items()
                       if k not in ("workdir", "sandbox_work")},
                    "ns": ns}, "machine": facts}
        self.say(f"campaign {self.id}: {len(jobs)} submissions, workloads "
                 f"{', '.join(cfg.workloads)}, N = {ns}, cpus {self.cpus}")
        for s, v in facts["sources"].items():
            self.say(f"  counters: {s}: {'usable' if v['usable'] else 'UNUSABLE'} "
                     f"-- {v['reason']}")
        self.say(f"  L3 partitioning: {facts['resctrl']}")
        (self.out / "campaign.json").write_text(json.dumps(meta, indent=1))
        rows: list[dict[str, Any]] = []
        for w in cfg.workloads:
            xs: dict[int, list[float]] = {n: [] for n in ns}
            for rep in self.reps(w, ns, jobs):
                rows.append({"campaign": self.id, **asdict(rep)})
                _write_csv(self.out / "runs.csv", rows)  # survives an interrupted run
                _write_csv(self.out / "jobs.csv", self.spans)
                if not rep.warmup:
                    xs[rep.n].append(rep.throughput)
            for n in ns:
                m, h = mean_ci(xs[n])
                self.say(f"  {w:<8} N={n}: {m:7.3f} ± {h:.3f} jobs/s over {len(xs[n])} reps")
        if cfg.ll_mb and cfg.cachegrind_sources:
            srcs = cachegrind_sources(jobs, cfg.cachegrind_sources)
            self.say(f"cachegrind sweep: g++ on {len(srcs)} sources x "
                     f"{len(cfg.ll_mb)} simulated L3 sizes {list(cfg.ll_mb)} MB")
            cg = cachegrind_sweep(srcs, cfg.ll_mb, self.cpus, cfg.workdir,
                                  self.progress("cachegrind"))
            _write_csv(self.out / "cachegrind.csv",
                       [{"campaign": self.id, **r} for r in cg])
        meta["finished_at"] = datetime.now().isoformat(timespec="seconds")
        (self.out / "campaign.json").write_text(json.dumps(meta, indent=1))
        return self.out

