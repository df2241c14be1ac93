"""Experiments: a 2^k·r factorial design (or a full grid, e.g. cores x work) over
gradeline's own knobs, each design point x replication run as one measured piece of
work on exclusive cores, with the node monitor beside it.

One point-replication is one file (``points/p<P>-r<R>.json``), written atomically, so
the same runner serves three drivers: ``gradeline experiment run`` (all points here,
replications interleaved across points, warm-up discarded, adaptive stopping), the
Snakemake workflow (one job per point x replication, locally or through Slurm with
an exclusive node), and a resumed run (points already on disk are not run again).

Factors (``FACTORS``) and what each changes:

* ``cores``      -- pinned workers (the first N CPUs of the experiment's list);
* ``runtime``    -- the sandbox: ``apptainer`` or ``bwrap``;
* ``cache``      -- the compile cache (0/1; fresh and empty at every point);
* ``accel``      -- precompiled headers + the gold linker (0/1);
* ``on_reject``  -- Kattis ``continue`` or ``break`` for every group;
* ``workload``   -- ``pipeline`` (gradeline's sandboxed grading) or ``bare``;
* ``work``       -- submissions graded at the point (the grid's work axis);
* ``l3_mb``      -- *simulated* L3 MB per core: g++ compiles sample sources under
  cachegrind with that LL size (and the ``accel`` linker); it acts on the ``ll_mpki``
  response only -- this machine cannot partition its cache (no RDT).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from grader.adapters.procfs import Monitor
from grader.core.errors import GradelineError
from grader.formats.problem import ON_REJECT, OnReject
from grader.measure import schema
from grader.measure.campaign import corpus_jobs, machine_facts, write_csv
from grader.measure.factorial import levels_grid
from grader.measure.stats import precise_enough
from grader.measure.sweep import cachegrind_sources, cachegrind_sweep
from grader.measure.workloads import Job, Progress, run_workload, summarize
from grader.pipeline.local_executor import WorkerSpec

FACTORS: dict[str, str] = {
    "cores": "pinned workers (the first N CPUs)",
    "runtime": "sandbox runtime: apptainer | bwrap",
    "cache": "compile cache: 0 | 1 (empty at each point)",
    "accel": "precompiled headers + gold linker: 0 | 1",
    "on_reject": "Kattis on_reject for every group: continue | break",
    "workload": "pipeline | bare",
    "work": "submissions graded at the point",
    "l3_mb": "simulated L3 MB per core (cachegrind; acts on ll_mpki only)",
}
#: responses every point records (``ll_mpki`` only when l3_mb is a factor)
RESPONSES = ("throughput", "wall_s", "mean_response_s", "p95_s", "cpu_s", "busy",
             "ctxt_per_s")


def parse_level(factor: str, text: str) -> Any:
    """A level from the command line, checked against its factor."""
    t = text.strip()
    try:
        if factor in ("cores", "work"):
            v: Any = int(t)
            if v < 1:
                raise ValueError
            return v
        if factor in ("cache", "accel"):
            if t not in ("0", "1"):
                raise ValueError
            return int(t)
        if factor == "l3_mb":
            f = float(t)
            if not 0 < f <= 1024:
                raise ValueError
            return f
    except ValueError:
        raise GradelineError(f"factor {factor}: {text!r} is not a valid level "
                             f"({FACTORS[factor]})") from None
    choices = {"runtime": ("apptainer", "bwrap"), "on_reject": ("continue", "break"),
               "workload": ("pipeline", "bare")}
    if t not in choices[factor]:
        raise GradelineError(f"factor {factor}: {text!r} is not one of "
                             f"{', '.join(choices[factor])}")
    return t


def parse_factors(specs: Sequence[str]) -> dict[str, list[Any]]:
    """``["cores=1,2", "runtime=bwrap,apptainer"]`` -> ordered factor -> levels."""
    out: dict[str, list[Any]] = {}
    for spec in specs:
        name, sep, levels = spec.partition("=")
        name = name.strip()
        if not sep or name not in FACTORS:
            raise GradelineError(f"--factor {spec!r}: use NAME=LOW,HIGH with NAME one of "
                                 f"{', '.join(FACTORS)}")
        if name in out:
            raise GradelineError(f"--factor {name} given twice")
        out[name] = [parse_level(name, x) for x in levels.split(",") if x.strip()]
    return out


@dataclass(slots=True)
class Design:
    """What an experiment runs: its points (one dict of levels each) and how often.

    ``kind`` ``2k``: two levels per factor, every combination in standard order
    (analysed for effects); ``grid``: every combination of any number of levels
    (analysed as the cores x work fit)."""

    id: str
    kind: str
    factors: dict[str, list[Any]]
    reps: int = 3
    warmup: bool = True
    adaptive: bool = False
    max_reps: int = 10
    rel_ci: float = 0.05
    work: int = 20
    seed: int = 1
    trim: float = 0.0
    cachegrind_sources: int = 2
    points: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.factors:
            raise GradelineError("an experiment needs at least one factor")
        if self.kind == "2k":
            self.points = levels_grid(self.factors)
        elif self.kind == "grid":
            self.points = _full_grid(self.factors)
        else:
            raise GradelineError(f"unknown design kind {self.kind!r}")
        if self.reps < 1 or self.max_reps < self.reps:
            raise GradelineError("reps must be >= 1 and max reps >= reps")

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Design:
        keys = {k: d[k] for k in cls.__slots__ if k in d and k != "points"}
        return cls(**keys)

    @classmethod
    def load(cls, path: Path) -> Design:
        try:
            return cls.from_json(json.loads(path.read_text())["design"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise GradelineError(f"{path}: not an experiment design ({e})") from e


def _full_grid(factors: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    points: list[dict[str, Any]] = [{}]
    for name, levels in factors.items():
        if not levels:
            raise GradelineError(f"factor {name} has no levels")
        points = [{**p, name: lv} for lv in levels for p in points]
    return points


def point_file(out: Path, point: int, rep: int) -> Path:
    return out / "points" / (f"p{point}-warmup.json" if rep < 0 else f"p{point}-r{rep}.json")


def _write_atomic(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    Path(tmp).replace(path)


class Runner:
    """Runs design points on ``cpus`` with the sandbox of ``base`` varied per point.

    :param base: the worker as the settings give it (runtime, image, workroot).
    """

    def __init__(self, design: Design, out: Path, cpus: Sequence[int], base: WorkerSpec | None,
                 workdir: Path, say: Callable[[str], None] = print,
                 progress: Callable[[str], Progress | None] = lambda _: None,
                 monitor_interval_s: float = 0.5,
                 context: Mapping[str, Any] | None = None) -> None:
        """:param context: recorded with every point (e.g. the Slurm job that ran it)."""
        self.d, self.out, self.cpus, self.base = design, out, list(cpus), base
        self.context = dict(context or {})
        self.workdir, self.say, self.progress = workdir, say, progress
        self.interval = monitor_interval_s
        self._jobs: dict[int, list[Job]] = {}

    # -- one point ------------------------------------------------------------------
    def jobs(self, work: int) -> list[Job]:
        """The corpus for ``work`` submissions (the same seeded course everywhere)."""
        if work not in self._jobs:
            self._jobs[work] = corpus_jobs(self.workdir / f"corpus-{work}", work, self.d.seed)
        return self._jobs[work]

    def worker(self, levels: Mapping[str, Any], scratch: Path) -> WorkerSpec:
        if self.base is None:
            raise GradelineError("the pipeline workload needs the grading image (a worker)")
        sandbox = self.base.sandbox
        if "runtime" in levels:
            sandbox = replace(sandbox, runtime=str(levels["runtime"]))
        on_reject: OnReject | None = self.base.on_reject
        if levels.get("on_reject") in ON_REJECT:
            on_reject = "break" if levels["on_reject"] == "break" else "continue"
        return replace(self.base, sandbox=sandbox, workroot=scratch,
                       compile_cache=bool(levels.get("cache", 0)),
                       compile_accel=bool(levels.get("accel", int(self.base.compile_accel))),
                       on_reject=on_reject)

    def run_point(self, point: int, rep: int) -> dict[str, Any]:
        """Run point ``point`` once (``rep`` < 0: the warm-up) and write its file."""
        levels = self.d.points[point]
        n = int(levels.get("cores", len(self.cpus)))
        if n > len(self.cpus):
            raise GradelineError(f"point {point} wants {n} cores; have {self.cpus}")
        cores = self.cpus[:n]
        jobs = self.jobs(int(levels.get("work", self.d.work)))
        workload = str(levels.get("workload", "pipeline"))
        label = f"p{point} {_describe(levels)} rep {'warm-up' if rep < 0 else rep}"
        scratch = (self.base.workroot if self.base else self.workdir) / "experiment" / \
            f"{self.d.id}-p{point}-r{rep}"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True, mode=0o755)
        try:
            worker = self.worker(levels, scratch) if workload == "pipeline" else None
            with Monitor(self.interval, cpus=cores) as mon:
                t0, t1, spans, cpu_s = run_workload(workload, jobs, cores, self.workdir,
                                                    worker=worker,
                                                    progress=self.progress(label))
            r = summarize(workload, n, rep, t0, t1, spans, cpu_s, self.d.trim)
            responses: dict[str, float] = {
                "throughput": r.throughput, "wall_s": r.wall_s,
                "mean_response_s": r.mean_response_s, "p95_s": r.p95_s, "cpu_s": r.cpu_s}
            ms = mon.summary()
            responses.update(busy=ms["busy"], ctxt_per_s=ms["ctxt_per_s"],
                             mem_used_peak_bytes=ms["mem_used_peak_bytes"],
                             monitor_overhead=ms["monitor_overhead"])
            if "l3_mb" in levels:
                responses["ll_mpki"] = self._ll_mpki(float(levels["l3_mb"]),
                                                     bool(levels.get("accel", 1)), cores,
                                                     jobs, scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        rec = {"experiment": self.d.id, "point": point, "rep": rep, "warmup": rep < 0,
               "levels": levels, "responses": responses, "jobs": len(spans),
               "cpus": list(cores), "context": self.context,
               "finished_at": datetime.now().isoformat(timespec="seconds"),
               "monitor": {"host": mon.host, "interval_s": self.interval,
                           "rows": [list(x) for x in mon.all_rows()]}}
        _write_atomic(point_file(self.out, point, rep), rec)
        self.say(f"  {label}: {responses['throughput']:.3f} jobs/s, "
                 f"wall {responses['wall_s']:.1f} s, busy {ms['busy']:.2f}")
        return rec

    def _ll_mpki(self, mb: float, gold: bool, cores: Sequence[int], jobs: Sequence[Job],
                 scratch: Path) -> float:
        srcs = cachegrind_sources(jobs, self.d.cachegrind_sources)
        if not srcs:
            raise GradelineError("l3_mb needs C++ sources in the corpus")
        rows = cachegrind_sweep(srcs, [mb], cores, scratch,
                                extra_flags=["-fuse-ld=gold"] if gold else [])
        ir = sum(int(r["Ir"]) for r in rows)
        return 1000 * sum(int(r["ll_misses"]) for r in rows) / ir if ir else float("nan")

    # -- the whole design -----------------------------------------------------------
    def done(self, point: int, rep: int) -> dict[str, Any] | None:
        p = point_file(self.out, point, rep)
        with contextlib.suppress(OSError, ValueError):
            return dict(json.loads(p.read_text()))
        return None

    def run(self) -> None:
        """Every point, replications interleaved across points (rep 0 of every point,
        then rep 1, ...), so a drift of the machine lands on all points alike. The
        warm-up is one run of the first point, discarded. Adaptive: stop once every
        point's throughput has CI95/mean below ``rel_ci``. What is on disk is kept."""
        d = self.d
        self.say(f"experiment {d.id}: {len(d.points)} points ({d.kind}) x "
                 f"{'adaptive ' if d.adaptive else ''}{d.reps} reps, factors "
                 + ", ".join(f"{k}={'/'.join(map(str, v))}" for k, v in d.factors.items()))
        if d.warmup and self.done(0, -1) is None:
            self.run_point(0, -1)
        top = d.max_reps if d.adaptive else d.reps
        for rep in range(top):
            for p in range(len(d.points)):
                if self.done(p, rep) is None:
                    self.run_point(p, rep)
            if d.adaptive and rep + 1 >= d.reps and all(
                    precise_enough([self.done(p, k)["responses"]["throughput"]  # type: ignore[index]
                                    for k in range(rep + 1)], d.rel_ci)
                    for p in range(len(d.points))):
                self.say(f"  CI95/mean < {d.rel_ci:.0%} at every point after {rep + 1} reps")
                break


def _describe(levels: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in levels.items())


def write_design(out: Path, design: Design, cpus: Sequence[int]) -> Path:
    """``experiment.json``: the design, the machine, and when."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / schema.EXPERIMENT_META
    started = datetime.now().isoformat(timespec="seconds")
    if path.exists():  # a resumed experiment keeps its identity and start
        with contextlib.suppress(OSError, ValueError, KeyError):
            old = json.loads(path.read_text())
            if old["design"]["factors"] == design.to_json()["factors"]:
                design.id, started = str(old["id"]), str(old["started_at"])
    meta = {"id": design.id, "kind": "experiment", "design": design.to_json(),
            "started_at": started, "machine": machine_facts(cpus)}
    _write_atomic(path, meta)
    return path


def new_id(prefix: str = "experiment") -> str:
    return datetime.now().strftime(f"{prefix}-%Y%m%dT%H%M%S")


def collect(out: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The experiment's meta and every point file on disk (warm-up included)."""
    try:
        meta = dict(json.loads((out / schema.EXPERIMENT_META).read_text()))
    except (OSError, ValueError) as e:
        raise GradelineError(f"{out}: no experiment here ({e})") from e
    recs = []
    for p in sorted((out / "points").glob("p*.json")):
        with contextlib.suppress(OSError, ValueError):
            recs.append(dict(json.loads(p.read_text())))
    return meta, recs


def write_tables(out: Path) -> dict[str, Any]:
    """points.csv (tidy: one row per point x rep x response) and monitor.csv from the
    point files, in the schema the store and the analysis read; returns the meta."""
    meta, recs = collect(out)
    points, monitor = [], []
    for r in recs:
        for resp, v in r["responses"].items():
            points.append({"campaign": meta["id"], "point": r["point"], "rep": r["rep"],
                           "warmup": r["warmup"], "levels": json.dumps(r["levels"],
                                                                       sort_keys=True),
                           "response": resp, "value": v})
        run = f"p{r['point']}-r{r['rep']}"
        host = r["monitor"]["host"]
        for t, cpu, metric, v in r["monitor"]["rows"]:
            monitor.append({"campaign": meta["id"], "run": run, "host": host, "t_s": t,
                            "cpu": "" if cpu is None else cpu, "metric": metric,
                            "value": v})
    write_csv(out / "points.csv", schema.POINTS, points)
    write_csv(out / "monitor.csv", schema.MONITOR, monitor)
    return meta
