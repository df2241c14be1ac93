"""``gradeline campaign run | report | store``: the scaling campaign and its report.

A module of its own, loaded only when the command runs (``cli.common.lazy``): the
campaign's statistics and the analysis stack (scipy, pandas, matplotlib) take about
2 s to import, which every other command would otherwise pay."""

from __future__ import annotations

import argparse
from pathlib import Path

from analysis.report import write_report
from grader.adapters.browser import render_check
from grader.adapters.metrics import hardware_source
from grader.cli.format import Progress
from grader.compose.context import Context
from grader.measure import persist
from grader.measure.campaign import Campaign, Config


def cmd_campaign(args: argparse.Namespace, ctx: Context) -> int:
    out = Path(args.out)
    if args.action == "run":
        cpus = ctx.cpus(args.cpus)
        worker = None
        if "pipeline" in args.workloads.split(","):
            ctx.prepare_image()
            worker = ctx.worker()
        counter, _ = hardware_source()
        cfg = Config(workdir=Path(args.workdir) if args.workdir else out / "work",
                     worker=worker, count=args.count, seed=args.seed,
                     ns=[int(n) for n in args.n.split(",")] if args.n else [],
                     workloads=tuple(args.workloads.split(",")), reps=args.reps,
                     adaptive=args.adaptive, max_reps=args.max_reps,
                     warmup_reps=args.warmup_reps, trim=args.trim,
                     ll_mb=tuple(float(x) for x in args.ll_mb.split(",")) if args.ll_mb else (),
                     cachegrind_sources=args.cachegrind_sources)
        Campaign(cfg, out, cpus, progress=lambda label: Progress(f"  {label}"),
                 counter=counter).run()
        if args.store:
            _store_campaign(ctx, out)
        return 0 if args.no_report else _report(out, check=args.check)
    if args.action == "store":
        _store_campaign(ctx, out)
        return 0
    return _report(out, check=args.check)


def _report(out: Path, *, check: bool = False) -> int:
    """Write the HTML report; with ``check``, load it in headless Chromium and fail
    unless every plot decoded."""
    page = write_report(out)
    print(f"report: {page}")
    if check:
        r = render_check(page, page.with_name("screenshot.png"), title="gradeline campaign")
        print(f"headless Chromium: {r['images_loaded']}/{r['images']} images loaded, "
              f"{r['dom_chars']} characters of DOM, screenshot {r.get('screenshot_bytes')} B")
        if not r["images"] or r["images_loaded"] != r["images"] or not r["title"]:
            return 1
    return 0


def _store_campaign(ctx: Context, out: Path) -> None:
    with ctx.store() as st:
        st.migrate()
        n = persist.save(out, st)
    print(f"stored campaign {out.name}: {n} rows in PostgreSQL")
