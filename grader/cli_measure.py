"""``gradeline metrics|cache|campaign``: the measurement side of the command line.

Kept apart from the grading commands in ``__main__`` so each stays readable.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

from grader.errors import GradelineError

log = logging.getLogger("gradeline")


# ------------------------------------------------------------------ metrics

def cmd_metrics(args: argparse.Namespace) -> int:
    from grader import metrics

    if args.action == "check":
        for a in metrics.check_all():
            print(a)
        return 0
    # wrap: run a command under one source, print the samples as JSON lines
    src = metrics.SOURCES[args.source]() if args.source != "cachegrind" else \
        metrics.Cachegrind(int(args.ll_mb * 2**20))
    a = src.availability()
    if not a.usable:
        raise GradelineError(f"{args.source} is unusable here: {a.reason}")
    out = Path(args.out)
    cores = metrics.parse_cpulist(args.cpus) if args.cpus else sorted(os.sched_getaffinity(0))
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        raise GradelineError("metrics wrap needs a command after --")
    rc = subprocess.run(src.wrap(cmd, cores, out), check=False).returncode
    for s in src.collect(out):
        print(json.dumps({"source": s.source, "event": s.event, "value": s.value,
                          "unit": s.unit, "cpu": s.cpu, "context": s.context}))
    return rc


# ------------------------------------------------------------------ cache (resctrl)

def _job_cpus(job: str) -> list[int]:
    """The job's CPUs on this node: $GRADELINE_CACHE_CPUS, else ``scontrol -d show job``."""
    from grader.metrics import parse_cpulist

    if os.environ.get("GRADELINE_CACHE_CPUS"):
        return parse_cpulist(os.environ["GRADELINE_CACHE_CPUS"])
    out = subprocess.run(["scontrol", "-d", "show", "job", job], capture_output=True,
                         text=True, timeout=30, check=False).stdout
    node = os.environ.get("SLURMD_NODENAME", "")
    for m in re.finditer(r"Nodes=(\S+) CPU_IDs=([\d,-]+)", out):
        if not node or node in m.group(1) or len(out.split("CPU_IDs=")) == 2:
            return parse_cpulist(m.group(2))
    raise GradelineError(f"no CPU_IDs for job {job} in scontrol -d show job")


def _mb_per_core(job: str | None, default: float) -> float:
    """A job may ask for its own size: ``sbatch --comment=l3_mb_per_core=4``."""
    if job and not os.environ.get("GRADELINE_CACHE_CPUS"):
        out = subprocess.run(["scontrol", "show", "job", job], capture_output=True, text=True,
                             timeout=30, check=False).stdout
        m = re.search(r"Comment=\S*l3_mb_per_core=([\d.]+)", out)
        if m:
            return float(m.group(1))
    return float(os.environ.get("GRADELINE_L3_MB_PER_CORE", default))


def cmd_cache(args: argparse.Namespace) -> int:
    from grader.metrics import cpulist, parse_cpulist
    from grader.resctrl import Resctrl

    rc = Resctrl(args.root, args.sysfs_cpu)
    ok, why = rc.status()
    if args.action == "plan":
        cpus = parse_cpulist(args.cpus) if args.cpus else sorted(os.sched_getaffinity(0))
        print(f"resctrl: {why}")
        try:
            print(f"L3 per instance: {rc.l3_bytes(cpus[0]) / 2**20:g} MiB; "
                  f"{args.mb_per_core:g} MB/core for {len(cpus)} cores = "
                  f"{args.mb_per_core * len(cpus):g} MB")
        except (OSError, GradelineError) as e:
            print(f"L3 size unknown: {e}")
        if ok:
            info = rc.info()
            print(f"info/L3: cbm_mask {info.cbm_mask:#x} ({info.ways} ways), min_cbm_bits "
                  f"{info.min_cbm_bits}, num_closids {info.num_closids}, shareable_bits "
                  f"{info.shareable_bits:#x}, masks "
                  f"{'sparse' if info.sparse_masks else 'contiguous'}"
                  f"; groups now: {', '.join(rc.groups()) or 'none'}")
        plan = rc.plan(args.job or "PLAN", cpus, args.mb_per_core)
        print(("would create " if plan.possible else "would do nothing: ") + plan.describe())
        return 0
    job = args.job or os.environ.get("SLURM_JOB_ID")
    if not job:
        raise GradelineError("no job id (--job or $SLURM_JOB_ID)")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    if args.action == "epilog":
        removed = rc.remove(job) if ok or Path(args.root).is_dir() else False
        print(f"{stamp} epilog job {job}: {'removed its L3 group' if removed else 'no L3 group'}")
        return 0
    if not ok:  # prolog on hardware without RDT: say so, let the job run
        print(f"{stamp} prolog job {job}: runs without an L3 partition: {why}")
        return 0
    cpus = _job_cpus(job)
    plan = rc.plan(job, cpus, _mb_per_core(job, args.mb_per_core))
    if plan.possible:
        rc.apply(plan)
    print(f"{stamp} prolog job {job} cpus {cpulist(cpus)}: "
          + ("" if plan.possible else "runs without an L3 partition: ") + plan.describe())
    return 0


# ------------------------------------------------------------------ campaign

def cmd_campaign(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if args.action == "run":
        from grader.__main__ import Progress, _cpus, _workroot
        from grader.campaign import Campaign, Config
        from grader.sandbox import open_sandbox

        cpus = _cpus(args.cpus)
        if "pipeline" in args.workloads.split(","):
            open_sandbox(cpus, state_dir=args.state_dir)
        cfg = Config(workdir=Path(args.workdir) if args.workdir else out / "work",
                     sandbox_work=_workroot(args.state_dir), count=args.count, seed=args.seed,
                     ns=[int(n) for n in args.n.split(",")] if args.n else [],
                     workloads=tuple(args.workloads.split(",")), reps=args.reps,
                     adaptive=args.adaptive, max_reps=args.max_reps,
                     warmup_reps=args.warmup_reps, trim=args.trim,
                     ll_mb=tuple(float(x) for x in args.ll_mb.split(",")) if args.ll_mb else (),
                     cachegrind_sources=args.cachegrind_sources)
        Campaign(cfg, out, cpus, progress=lambda label: Progress(f"  {label}")).run()
        if args.store:
            _store_campaign(args, out)
        return 0 if args.no_report else _report(out, check=args.check)
    if args.action == "store":
        _store_campaign(args, out)
        return 0
    return _report(out, check=args.check)


def _report(out: Path, *, check: bool = False) -> int:
    """Write the HTML report; with ``check``, load it in headless Chromium and fail
    unless every plot decoded."""
    from analysis.report import render_check, write_report

    page = write_report(out)
    print(f"report: {page}")
    if check:
        r = render_check(page, page.with_name("screenshot.png"))
        print(f"headless Chromium: {r['images_loaded']}/{r['images']} images loaded, "
              f"{r['dom_chars']} characters of DOM, screenshot {r.get('screenshot_bytes')} B")
        if not r["images"] or r["images_loaded"] != r["images"] or not r["title"]:
            return 1
    return 0


def _store_campaign(args: argparse.Namespace, out: Path) -> None:
    from grader.__main__ import _db
    from grader.store import Store

    url = _db(args)
    with Store(url) as st:
        st.migrate()
        n = st.save_campaign(out)
    print(f"stored campaign {out.name}: {n} rows in PostgreSQL")


def register(sub: Any) -> None:
    """Add the measurement commands to the main parser's subcommands."""
    m = sub.add_parser("metrics", help="L3/CPU counters: which sources work here; wrap a command")
    m.add_argument("action", choices=["check", "wrap"])
    m.add_argument("--source", choices=["likwid", "perf", "cachegrind"], default="cachegrind")
    m.add_argument("--ll-mb", type=float, default=2.5, help="cachegrind: simulated L3 size")
    m.add_argument("--cpus", help="cores to count on (default: this process's)")
    m.add_argument("--out", default="metrics.out", help="where the source writes its output")
    m.add_argument("cmd", nargs=argparse.REMAINDER, help="-- command to measure")
    m.set_defaults(func=cmd_metrics)

    c = sub.add_parser("cache", help="L3 cache partitions (resctrl): plan, Slurm prolog/epilog")
    c.add_argument("action", choices=["plan", "prolog", "epilog"])
    c.add_argument("--root", default=os.environ.get("GRADELINE_RESCTRL_ROOT", "/sys/fs/resctrl"))
    c.add_argument("--sysfs-cpu", default=os.environ.get("GRADELINE_SYSFS_CPU",
                                                          "/sys/devices/system/cpu"))
    c.add_argument("--cpus", help="plan: the cores of the job (default: this process's)")
    c.add_argument("--job", help="job id (default $SLURM_JOB_ID)")
    c.add_argument("--mb-per-core", type=float,
                   default=float(os.environ.get("GRADELINE_L3_MB_PER_CORE", 2.5)))
    c.set_defaults(func=cmd_cache)

    k = sub.add_parser("campaign", help="scaling campaign: S(N) of pipeline/bare/cpu, "
                       "cachegrind L3 sweep, report")
    k.add_argument("action", choices=["run", "report", "store"])
    k.add_argument("--out", default="campaign", help="results directory (CSV, plots, report)")
    k.add_argument("--workdir", help="scratch (default OUT/work)")
    k.add_argument("--cpus", help="cores to use; N runs 1..len(cpus) (default: all allowed)")
    k.add_argument("-n", help="comma list of N (default 1..cores)")
    k.add_argument("--workloads", default="pipeline,bare,cpu")
    k.add_argument("--count", type=int, default=40, help="corpus size (submissions)")
    k.add_argument("--seed", type=int, default=1)
    k.add_argument("--reps", type=int, default=3, help="repetitions per (workload, N)")
    k.add_argument("--adaptive", action="store_true",
                   help="repeat until CI95/mean < 5%% (2..--max-reps runs)")
    k.add_argument("--max-reps", type=int, default=20)
    k.add_argument("--warmup-reps", type=int, default=1, help="unrecorded reps first")
    k.add_argument("--trim", type=float, default=0.0,
                   help="fraction of completions trimmed at each end of a rep (default 0: "
                        "first job start to last finish; trimming suits uniform jobs)")
    k.add_argument("--ll-mb", default="0.5,1,2,2.5,4,8,16,20",
                   help="simulated L3 sizes (MB) for the cachegrind sweep; '' to skip")
    k.add_argument("--cachegrind-sources", type=int, default=3)
    k.add_argument("--store", action="store_true", help="also store in PostgreSQL")
    k.add_argument("--no-report", action="store_true")
    k.add_argument("--check", action="store_true",
                   help="load the report in headless Chromium; fail unless it renders")
    k.set_defaults(func=cmd_campaign)

