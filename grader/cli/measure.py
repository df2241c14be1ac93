"""``gradeline metrics | cache | campaign``: counters, L3 partitions, scaling campaigns."""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from grader.adapters.metrics import SOURCES, check_all
from grader.adapters.metrics.base import MetricsSource, run_counted
from grader.adapters.metrics.cachegrind import Cachegrind
from grader.adapters.resctrl import Resctrl
from grader.adapters.scheduler.base import SchedulerError
from grader.adapters.scheduler.slurm import SlurmCLI
from grader.cli.common import Commands, lazy
from grader.compose.context import Context
from grader.core.cpuset import CpuSet
from grader.core.errors import GradelineError


def cmd_metrics(args: argparse.Namespace, ctx: Context) -> int:
    if args.action == "check":
        for a in check_all():
            print(a)
        return 0
    # wrap: run a command under one source, print the samples as JSON lines
    src: MetricsSource = Cachegrind(int(args.ll_mb * 2**20)) if args.source == "cachegrind" \
        else SOURCES[args.source]()
    a = src.availability()
    if not a.usable:
        raise GradelineError(f"{args.source} is unusable here: {a.reason}")
    out = Path(args.out)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        raise GradelineError("metrics wrap needs a command after --")
    rc, samples = run_counted(src, cmd, ctx.cpus(args.cpus), out)
    for s in samples:
        print(json.dumps(s.to_json()))
    return rc


def l3_request(comment: str, default: float, lo: float, hi: float) -> tuple[float, str]:
    """(MB per core, a note when clamped): a job may ask for its own size with
    ``sbatch --comment=l3_mb_per_core=N``, within the admin's [lo, hi] -- else one
    user could take every free cache way of a node."""
    m = re.search(r"l3_mb_per_core=([\d.]+)", comment)
    if m is None:
        return default, ""
    try:
        asked = float(m.group(1))
    except ValueError:
        return default, f"ignored l3_mb_per_core={m.group(1)!r}"
    got = min(max(asked, lo), hi)
    return got, (f"asked l3_mb_per_core={asked:g}, clamped to {got:g} (allowed {lo:g}..{hi:g})"
                 if got != asked else "")


def cmd_cache(args: argparse.Namespace, ctx: Context) -> int:
    st = ctx.settings
    rc = Resctrl(args.root or st.resctrl_root, args.sysfs_cpu or st.sysfs_cpu)
    mb = args.mb_per_core or st.l3_mb_per_core
    ok, why = rc.status()
    if args.action == "plan":
        cpus = ctx.cpus(args.cpus)
        print(f"resctrl: {why}")
        try:
            print(f"L3 per instance: {rc.l3_bytes(cpus[0]) / 2**20:g} MiB; "
                  f"{mb:g} MB/core for {len(cpus)} cores = {mb * len(cpus):g} MB")
        except (OSError, GradelineError) as e:
            print(f"L3 size unknown: {e}")
        if ok:
            info = rc.info()
            print(f"info/L3: cbm_mask {info.cbm_mask:#x} ({info.ways} ways), min_cbm_bits "
                  f"{info.min_cbm_bits}, num_closids {info.num_closids}, shareable_bits "
                  f"{info.shareable_bits:#x}, masks "
                  f"{'sparse' if info.sparse_masks else 'contiguous'}"
                  f"; groups now: {', '.join(rc.groups()) or 'none'}")
        plan = rc.plan(args.job or "PLAN", list(cpus), mb)
        print(("would create " if plan.possible else "would do nothing: ") + plan.describe())
        return 0
    job = args.job or st.slurm.job_id
    if not job:
        raise GradelineError("no job id (--job or $SLURM_JOB_ID)")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    if args.action == "epilog":
        removed = rc.remove(job) if ok or rc.root.is_dir() else False
        print(f"{stamp} epilog job {job}: {'removed its L3 group' if removed else 'no L3 group'}")
        return 0
    if not ok:  # prolog on hardware without RDT: say so, let the job run
        print(f"{stamp} prolog job {job}: runs without an L3 partition: {why}")
        return 0
    if st.cache_cpus:
        cpus = CpuSet.parse(st.cache_cpus)
    else:
        try:
            slurm = SlurmCLI()
            cpus = slurm.job_cpus(job, st.slurm.node)
            mb, clamped = l3_request(slurm.job_comment(job), mb, st.l3_mb_per_core_min,
                                     st.l3_mb_per_core_max)
        except SchedulerError as e:
            raise GradelineError(f"prolog job {job}: {e}") from e
        if clamped:
            print(f"{stamp} prolog job {job}: {clamped}")
    plan = rc.plan(job, list(cpus), mb)
    if plan.possible:
        rc.apply(plan)
    print(f"{stamp} prolog job {job} cpus {cpus}: "
          + ("" if plan.possible else "runs without an L3 partition: ") + plan.describe())
    return 0


def register(sub: Commands) -> None:
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
    c.add_argument("--root", type=Path, help="resctrl mount (default $GRADELINE_RESCTRL_ROOT "
                                             "or /sys/fs/resctrl)")
    c.add_argument("--sysfs-cpu", type=Path, help="default $GRADELINE_SYSFS_CPU or "
                                                  "/sys/devices/system/cpu")
    c.add_argument("--cpus", help="plan: the cores of the job (default: this process's)")
    c.add_argument("--job", help="job id (default $SLURM_JOB_ID)")
    c.add_argument("--mb-per-core", type=float,
                   help="L3 MB per core (default $GRADELINE_L3_MB_PER_CORE or 2.5)")
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
    k.set_defaults(func=lazy("grader.cli.campaign", "cmd_campaign"))
