"""The handlers of ``gradeline experiment`` (loaded only when an experiment command runs:
the analysis stack takes seconds to import)."""

from __future__ import annotations

import argparse
from pathlib import Path

from analysis.experiment import write_report
from grader.adapters.browser import render_check
from grader.cli.format import Progress
from grader.compose.context import Context
from grader.core.errors import GradelineError
from grader.measure import experiment as ex
from grader.measure import persist, schema


def _design(args: argparse.Namespace, ctx: Context, kind: str,
            factors: dict[str, list[object]]) -> ex.Design:
    if kind == "2k":
        for name, lv in factors.items():
            if len(lv) != 2:
                raise GradelineError(f"--factor {name}: a 2^k design needs two levels, "
                                     f"got {len(lv)}")
    return ex.Design(ex.new_id(), kind, factors, reps=args.reps, warmup=not args.no_warmup,
                     adaptive=args.adaptive, max_reps=max(args.max_reps, args.reps),
                     work=args.work, seed=args.seed,
                     cachegrind_sources=args.cachegrind_sources)


def _runner(ctx: Context, out: Path, design: ex.Design, cpus_text: str | None,
            interval: float = 0.5) -> ex.Runner:
    cpus = ctx.cpus(cpus_text)
    need = max((int(p.get("cores", 1)) for p in design.points), default=1)
    if need > len(cpus):
        raise GradelineError(f"the design wants {need} cores; --cpus gives {cpus}")
    worker = None
    if any(p.get("workload", "pipeline") == "pipeline" for p in design.points):
        for rt in sorted({str(p["runtime"]) for p in design.points if "runtime" in p}):
            ctx.prepare_image(rt)
        ctx.prepare_image()
        worker = ctx.worker()
    slurm = ctx.settings.slurm
    context = {"slurm_job": slurm.job_id, "slurm_node": slurm.node} if slurm.job_id else {}
    return ex.Runner(design, out, cpus, worker, out / "work",
                     progress=lambda label: Progress(f"  {label}"),
                     monitor_interval_s=interval, context=context)


def _finish(args: argparse.Namespace, ctx: Context, out: Path) -> int:
    meta = ex.write_tables(out)
    if getattr(args, "store", False):
        with ctx.store() as st:
            st.migrate()
            n = persist.save(out, st, schema.EXPERIMENT_FILES, schema.EXPERIMENT_META)
        print(f"stored experiment {meta['id']}: {n} rows in PostgreSQL")
    page = write_report(out)
    print(f"report: {page}")
    if getattr(args, "check", False):
        r = render_check(page, page.with_name("screenshot.png"), title="gradeline experiment")
        print(f"headless Chromium: {r['images_loaded']}/{r['images']} images loaded, "
              f"{r['dom_chars']} characters of DOM")
        if not r["images"] or r["images_loaded"] != r["images"] or not r["title"]:
            return 1
    return 0


def _run(args: argparse.Namespace, ctx: Context, design: ex.Design) -> int:
    out = Path(args.out)
    runner = _runner(ctx, out, design, args.cpus, args.monitor_interval)
    ex.write_design(out, design, runner.cpus)
    runner.run()
    return _finish(args, ctx, out)


def cmd_run(args: argparse.Namespace, ctx: Context) -> int:
    if not args.factor:
        raise GradelineError("give at least one --factor NAME=LOW,HIGH")
    return _run(args, ctx, _design(args, ctx, "2k", ex.parse_factors(args.factor)))


def cmd_grid(args: argparse.Namespace, ctx: Context) -> int:
    cpus = ctx.cpus(args.cpus)
    cores = [ex.parse_level("cores", c) for c in args.cores.split(",") if c.strip()] \
        or list(range(1, len(cpus) + 1))
    work = [ex.parse_level("work", w) for w in args.work_sizes.split(",") if w.strip()]
    if len(set(work)) < 2:
        raise GradelineError("--work-sizes needs at least two sizes to separate fixed and "
                             "per-task cost")
    return _run(args, ctx, _design(args, ctx, "grid", {"cores": cores, "work": work}))


def cmd_design(args: argparse.Namespace, ctx: Context) -> int:
    design = _design(args, ctx, args.kind, ex.parse_factors(args.factor))
    path = ex.write_design(Path(args.out), design, ctx.cpus(args.cpus))
    print(f"{path}: {len(design.points)} points x {design.reps} reps")
    return 0


def cmd_point(args: argparse.Namespace, ctx: Context) -> int:
    out = Path(args.out)
    design = ex.Design.load(out / schema.EXPERIMENT_META)
    if not 0 <= args.point < len(design.points) or args.rep < -1:
        raise GradelineError(f"point {args.point} rep {args.rep}: the design has points "
                             f"0..{len(design.points) - 1} and reps -1 (warm-up), 0, 1, ...")
    _runner(ctx, out, design, args.cpus).run_point(args.point, args.rep)
    return 0


def cmd_report(args: argparse.Namespace, ctx: Context) -> int:
    return _finish(args, ctx, Path(args.out))
