"""``gradeline plan partition | report``: the admin's partition advice and the
capacity-planning page (these need the analysis stack, so they load on their own)."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pandas as pd

from analysis import capacity
from analysis import partition as pa
from analysis import tables as ca
from grader.adapters.browser import render_check
from grader.compose.context import Context
from grader.core.errors import GradelineError
from grader.planning.demands import load_demands
from grader.planning.queueing import model_curves, mva_curves


def _campaign(path: str) -> ca.CampaignData:
    try:
        return ca.load(Path(path))
    except (OSError, ValueError, KeyError) as e:
        raise GradelineError(f"{path}: not a campaign directory ({e})") from e


def _target(args: argparse.Namespace, d: ca.CampaignData) -> pa.Target:
    """The node being planned: the options given, the campaign's machine for the rest."""
    m = d.meta.get("machine", {})
    doms = m.get("l3_domains") or [{"cpus": m.get("cpus", [0]), "bytes": m.get("l3_bytes")}]
    l3 = args.l3_mb if args.l3_mb else (doms[0]["bytes"] or 0) / 2**20
    cores = args.cores_per_l3 or len(doms[0]["cpus"])
    if not l3 or cores < 1:
        raise GradelineError("the campaign's machine reported no L3 size: give --l3-mb and "
                             "--cores-per-l3 of the node being planned")
    return pa.Target(float(l3), int(cores), args.l3_domains or len(doms), args.nodes,
                     args.vendor or m.get("vendor", "unknown"), memory_mb=args.memory_mb,
                     partition=args.partition)


def _advice(args: argparse.Namespace) -> pa.Advice:
    d = _campaign(args.campaign)
    try:
        return pa.advise(pa.evidence(d, args.tolerance), _target(args, d))
    except ValueError as e:
        raise GradelineError(f"{args.campaign}: {e}") from e


def cmd_partition(args: argparse.Namespace, ctx: Context) -> int:
    adv = _advice(args)
    print(f"{adv.mb_per_core:.2f} MB of L3 per grading core ({adv.basis}); "
          f"{adv.cores_per_domain} grading core(s) per L3 domain")
    for n in adv.evidence:
        print(f"  - {n}")
    print(adv.table.to_string(index=False))
    print()
    print(adv.snippet, end="")
    if args.json:
        Path(args.json).write_text(json.dumps(adv.to_json(), indent=1))
    return 0


def cmd_report(args: argparse.Namespace, ctx: Context) -> int:
    d = load_demands(args.demands)
    s = d.describe()
    validation = pd.DataFrame()
    if args.validation:
        try:
            validation = pd.read_csv(args.validation)
        except (OSError, ValueError) as e:
            raise GradelineError(f"{args.validation}: {e}") from e
    cores = sorted({int(c) for c in args.cores.split(",") if c.strip()}
                   | ({int(c) for c in validation["cores"]} if not validation.empty else set()))
    if not cores:
        raise GradelineError("--cores: give at least one core count")
    models = pd.DataFrame(model_curves(s["service_mean_s"], s["service_cs2"], d.pooled(), cores))
    closed = pd.DataFrame(mva_curves(s["service_mean_s"], args.think, cores))
    out = Path(args.out)
    links = {}
    for name, p in (("experiment report", args.experiment), ("campaign report", args.campaign)):
        if p:
            page = Path(p) / "report" / "index.html"
            if page.exists():
                links[name] = os.path.relpath(page.resolve(), out.resolve())
    adv = _advice(args) if args.campaign else None
    page = capacity.write_report(out, models=models, mva=closed, validation=validation,
                                 demands=s, think_s=args.think, advice=adv, links=links,
                                 commands={"validation": args.validation_command}
                                 if args.validation_command else None)
    print(f"report: {page}")
    if args.check:
        r = render_check(page, page.with_name("screenshot.png"), title="gradeline capacity")
        print(f"headless Chromium: {r['images_loaded']}/{r['images']} images loaded, "
              f"{r['dom_chars']} characters of DOM")
        if not r["images"] or r["images_loaded"] != r["images"] or not r["title"]:
            return 1
    return 0
