"""``gradeline experiment run | grid | design | point | report | store``: factorial
experiments (2^k·r, effects and allocation of variation) and the cores x work grid."""

from __future__ import annotations

import argparse

from grader.cli.common import Commands, lazy

M = "grader.cli.experiment_cmds"


def register(sub: Commands) -> None:
    e = sub.add_parser("experiment", help="factorial experiments (2^k·r) and the cores x "
                                          "work grid: which factor matters, fixed vs "
                                          "per-task cost")
    es = e.add_subparsers(dest="experiment_command", required=True)

    def common(p: argparse.ArgumentParser, *, design: bool) -> None:
        p.add_argument("--out", default="experiment", help="results directory")
        if not design:
            return
        p.add_argument("--cpus", help="cores to use (default: all allowed)")
        p.add_argument("--reps", type=int, default=3, help="replications per point")
        p.add_argument("--adaptive", action="store_true",
                       help="more replications until CI95/mean < 5%% at every point "
                            "(up to --max-reps)")
        p.add_argument("--max-reps", type=int, default=10)
        p.add_argument("--no-warmup", action="store_true",
                       help="no discarded warm-up run before the first point")
        p.add_argument("--work", type=int, default=20,
                       help="submissions per point (when work is not a factor)")
        p.add_argument("--seed", type=int, default=1, help="the generated course's seed")
        p.add_argument("--cachegrind-sources", type=int, default=2,
                       help="l3_mb: C++ sources compiled under cachegrind per point")
        p.add_argument("--monitor-interval", type=float, default=0.5,
                       help="seconds between node monitor samples")

    r = es.add_parser("run", help="a 2^k·r design: every point, replications interleaved, "
                                  "then the report")
    common(r, design=True)
    r.add_argument("--factor", action="append", default=[], metavar="NAME=LOW,HIGH",
                   help="a factor and its two levels (repeat); NAME one of cores, runtime, "
                        "cache, accel, on_reject, workload, work, l3_mb")
    r.add_argument("--store", action="store_true", help="also store in PostgreSQL")
    r.add_argument("--check", action="store_true",
                   help="load the report in headless Chromium; fail unless it renders")
    r.set_defaults(func=lazy(M, "cmd_run"))

    g = es.add_parser("grid", help="cores x work: per core count, wall time against "
                                   "submissions graded (fixed overhead vs per-task cost)")
    common(g, design=True)
    g.add_argument("--cores", default="", help="core counts (default 1..cpus)")
    g.add_argument("--work-sizes", default="10,20,40", help="submissions per run")
    g.add_argument("--store", action="store_true")
    g.add_argument("--check", action="store_true")
    g.set_defaults(func=lazy(M, "cmd_grid"))

    d = es.add_parser("design", help="write the design only (experiment.json): the "
                                     "workflow's first step")
    common(d, design=True)
    d.add_argument("--factor", action="append", default=[], metavar="NAME=LOW,HIGH")
    d.add_argument("--kind", choices=["2k", "grid"], default="2k")
    d.set_defaults(func=lazy(M, "cmd_design"))

    p = es.add_parser("point", help="run one design point once (the workflow's job)")
    common(p, design=False)
    p.add_argument("--point", type=int, required=True)
    p.add_argument("--rep", type=int, required=True, help="replication (-1: the warm-up)")
    p.add_argument("--cpus", help="cores to use (default: all allowed)")
    p.set_defaults(func=lazy(M, "cmd_point"))

    t = es.add_parser("report", help="analyse what is on disk and write report/index.html")
    common(t, design=False)
    t.add_argument("--store", action="store_true")
    t.add_argument("--check", action="store_true")
    t.set_defaults(func=lazy(M, "cmd_report"))
