"""Scaling campaigns: the same corpus at N = 1..cores pinned workers, three workloads
(``workloads``), then the cachegrind L3 sweep (``sweep``).

The thesis measured exactly these three and found g++ (in both of the first two)
stops scaling long before the CPU loop does. Each (workload, N) is repeated after
discarded warm-up repetitions, interleaved across N; reps stop early once CI95/mean
< 5% when adaptive. With a usable hardware-counter source each repetition is
counted on its cores (``counters.csv``). Everything lands as the tidy CSV files of
``schema``, and in PostgreSQL when asked (``persist``).
"""

from __future__ import annotations

import contextlib
import csv
import json
import platform
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from grader.adapters.metrics import check_all
from grader.adapters.metrics.base import MetricsSource, counting
from grader.adapters.procfs import Monitor
from grader.adapters.resctrl import Resctrl
from grader.core.cpuset import CpuSet
from grader.core.errors import GradelineError
from grader.examples import example_dirs
from grader.measure import schema
from grader.measure.corpus import shared_course
from grader.measure.stats import mean_ci, precise_enough
from grader.measure.sweep import DEFAULT_LL_MB, cachegrind_sources, cachegrind_sweep
from grader.measure.workloads import (
    CPU_LOOP_ITERS,
    WORKLOADS,
    Job,
    Progress,
    Rep,
    run_workload,
    summarize,
)
from grader.pipeline.local_executor import WorkerSpec


@dataclass(slots=True)
class Config:
    """What a campaign runs.

    :param trim: 0 -- throughput from the first job's start to the last finish
        (start-up excluded); a window trimmed by completion count (e.g. 0.1) suits
        long runs of uniform jobs, but with a mixed corpus it changes the job mix
        between N and biases S(N).
    """

    workdir: Path
    worker: WorkerSpec | None = None  # the pipeline workload's sandbox
    count: int = 40
    seed: int = 1
    ns: list[int] = field(default_factory=list)
    workloads: tuple[str, ...] = WORKLOADS
    reps: int = 3
    adaptive: bool = False
    max_reps: int = 20
    rel_ci: float = 0.05
    trim: float = 0.0
    warmup_reps: int = 1
    ll_mb: tuple[float, ...] = DEFAULT_LL_MB
    cachegrind_sources: int = 3
    cpu_iters: int = CPU_LOOP_ITERS
    monitor_interval_s: float = 0.5


def corpus_jobs(workdir: Path, count: int, seed: int) -> list[Job]:
    """The campaign's corpus: a generated course over the bundled assignments."""
    dest = workdir / "course"
    entries = shared_course(dest, count=count, seed=seed)
    problems = {d.name: d for d in example_dirs()}
    return [Job(str(problems[e.assignment]), str(dest / e.path)) for e in entries]


def machine_facts(cpus: Sequence[int]) -> dict[str, Any]:
    """The machine and why each counter source is or is not usable (campaign.json),
    with its L3 domains (which CPUs share which L3) for the partition advice."""
    rc = Resctrl()
    try:
        l3: int | None = rc.l3_bytes(cpus[0])
    except (OSError, GradelineError):
        l3 = None
    info = _cpuinfo()
    model = info.get("model name", platform.processor())
    domains: dict[int, dict[str, Any]] = {}
    for c in sorted({*CpuSet.allowed(), *cpus}):
        dom = domains.setdefault(rc.domain_of(c), {"cpus": [], "bytes": None})
        dom["cpus"].append(c)
        if dom["bytes"] is None:
            with contextlib.suppress(OSError, GradelineError):
                dom["bytes"] = rc.l3_bytes(c)
    vendor = {"AuthenticAMD": "amd", "GenuineIntel": "intel"}.get(info.get("vendor_id", ""),
                                                                  "unknown")
    return {"host": platform.node(), "cpu_model": model, "vendor": vendor,
            "cpus": list(cpus), "l3_bytes": l3,
            "l3_domains": [{"id": k, **v} for k, v in sorted(domains.items())],
            "kernel": platform.release(), "resctrl": rc.status()[1],
            "sources": {a.source: {"usable": a.usable, "reason": a.reason}
                        for a in check_all()}}


def _cpuinfo() -> dict[str, str]:
    """The first processor's fields of /proc/cpuinfo."""
    out: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if not ln.strip():
                break
            k, _, v = ln.partition(":")
            out.setdefault(k.strip(), v.strip())
    return out


def write_csv(path: Path, columns: Sequence[str], rows: Sequence[Mapping[str, object]]
              ) -> None:
    """One of the schema's files: ``campaign`` first, then ``columns``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["campaign", *columns])
        w.writeheader()
        w.writerows(rows)


class Campaign:
    """Runs the whole campaign into ``out`` (the schema's CSV files and campaign.json).

    :param counter: a usable hardware-counter source, or None (nothing is counted).
    """

    def __init__(self, cfg: Config, out: Path, cpus: Sequence[int],
                 say: Callable[[str], None] = print,
                 progress: Callable[[str], Progress | None] = lambda _: None,
                 counter: MetricsSource | None = None) -> None:
        self.cfg, self.out, self.cpus, self.say, self.progress = cfg, out, list(cpus), say, \
            progress
        self.counter = counter
        # every job does all its work: no compile cache (and no dedupe: not a run)
        self.worker = replace(cfg.worker, compile_cache=False) if cfg.worker else None
        self.id = datetime.now().strftime("campaign-%Y%m%dT%H%M%S")
        self.spans: list[dict[str, object]] = []  # per job: start/finish, seconds from rep start
        self.counts: list[dict[str, object]] = []  # counter samples per rep
        self.monitor: list[dict[str, object]] = []  # node monitor samples per rep

    def one_rep(self, workload: str, n: int, rep: int, jobs: Sequence[Job]) -> Rep:
        cores = self.cpus[:n]
        scratch = self.cfg.workdir / "counters" / f"{workload}-{n}-{rep}"
        with counting(self.counter, cores, scratch) as samples, \
                Monitor(self.cfg.monitor_interval_s, cpus=cores) as mon:
            t0, t1, spans, cpu_s = run_workload(
                workload, jobs, cores, self.cfg.workdir, cpu_iters=self.cfg.cpu_iters,
                worker=self.worker, progress=self.progress(f"{workload} N={n} rep {rep}"))
        r = summarize(workload, n, rep, t0, t1, spans, cpu_s, self.cfg.trim)
        r.warmup = rep < 0
        self.spans.extend({"campaign": self.id, "workload": workload, "n": n, "rep": rep,
                           "start_s": round(s - t0, 6), "finish_s": round(e - t0, 6)}
                          for s, e in sorted(spans))
        self.counts.extend({"campaign": self.id, "workload": workload, "n": n, "rep": rep,
                            "source": s.source, "event": s.event, "cpu": s.cpu,
                            "value": s.value, "unit": s.unit} for s in samples)
        run = f"{workload}/{n}/{rep}"
        self.monitor.extend({"campaign": self.id, "run": run, "host": mon.host, "t_s": t,
                             "cpu": "" if cpu is None else cpu, "metric": m, "value": v}
                            for t, cpu, m, v in mon.all_rows())
        return r

    def reps(self, workload: str, ns: Sequence[int], jobs: Sequence[Job]) -> Iterator[Rep]:
        """Repetitions *interleaved* across N (rep 0 at every N, then rep 1, ...), so a
        slow drift of the machine (a noisy VM neighbour, thermal state) lands on every N
        alike instead of on whichever N happened to run during it. Adaptive: stop once
        every N has CI95/mean < rel_ci (at least 2 reps)."""
        xs: dict[int, list[float]] = {n: [] for n in ns}
        target = self.cfg.max_reps if self.cfg.adaptive else self.cfg.reps
        for i in range(-self.cfg.warmup_reps, target):
            for n in ns:
                r = self.one_rep(workload, n, i, jobs)
                yield r
                if not r.warmup:
                    xs[n].append(r.throughput)
            if self.cfg.adaptive and all(precise_enough(v, self.cfg.rel_ci)
                                         for v in xs.values()):
                break

    def _save(self, rows: Sequence[Mapping[str, object]]) -> None:
        """Rewrite the CSVs (after every rep: an interrupted campaign keeps its data)."""
        write_csv(self.out / "runs.csv", schema.RUNS, rows)
        write_csv(self.out / "jobs.csv", schema.JOBS, self.spans)
        write_csv(self.out / "counters.csv", schema.COUNTERS, self.counts)
        write_csv(self.out / "monitor.csv", schema.MONITOR, self.monitor)

    def run(self) -> Path:
        cfg = self.cfg
        cfg.workdir.mkdir(parents=True, exist_ok=True)
        self.out.mkdir(parents=True, exist_ok=True)
        ns = cfg.ns or list(range(1, len(self.cpus) + 1))
        if max(ns) > len(self.cpus):
            raise GradelineError(f"N up to {max(ns)} needs that many cpus; have {self.cpus}")
        jobs = corpus_jobs(cfg.workdir, cfg.count, cfg.seed)
        facts = machine_facts(self.cpus)
        config = {k: v for k, v in asdict(cfg).items() if k not in ("workdir", "worker")}
        meta = {"id": self.id, "started_at": datetime.now().isoformat(timespec="seconds"),
                "command": " ".join(sys.argv), "config": {**config, "ns": ns},
                "machine": facts, "counter": self.counter.name if self.counter else None}
        self.say(f"campaign {self.id}: {len(jobs)} submissions, workloads "
                 f"{', '.join(cfg.workloads)}, N = {ns}, cpus {self.cpus}")
        for s, v in facts["sources"].items():
            self.say(f"  counters: {s}: {'usable' if v['usable'] else 'UNUSABLE'} "
                     f"-- {v['reason']}")
        self.say(f"  L3 partitioning: {facts['resctrl']}")
        (self.out / schema.META).write_text(json.dumps(meta, indent=1))
        rows: list[dict[str, Any]] = []
        for w in cfg.workloads:
            xs: dict[int, list[float]] = {n: [] for n in ns}
            for rep in self.reps(w, ns, jobs):
                rows.append({"campaign": self.id, **asdict(rep)})
                self._save(rows)
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
            write_csv(self.out / "cachegrind.csv", schema.CACHEGRIND,
                      [{"campaign": self.id, **r} for r in cg])
        meta["finished_at"] = datetime.now().isoformat(timespec="seconds")
        (self.out / schema.META).write_text(json.dumps(meta, indent=1))
        return self.out
