"""The handlers of ``gradeline plan`` (loaded only when a plan command runs)."""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path

from grader.compose.context import Context
from grader.core.errors import GradelineError
from grader.planning import demands as dm
from grader.planning import simulate as sim
from grader.planning import trace as tr
from grader.planning.queueing import OpenModel, Station, bounds, mva, smallest_servers


def cmd_demands(args: argparse.Namespace, ctx: Context) -> int:
    try:
        since = datetime.fromisoformat(args.since) if args.since else None
    except ValueError as e:
        raise GradelineError(f"--since: {e}") from e
    with ctx.store() as store:
        rows = store.finished(ctx.course(), since)
    try:
        d = dm.demands_from(rows)
    except ValueError as e:
        raise GradelineError(f"course {ctx.course()!r}: {e}") from e
    out = dm.to_json(d)
    if args.against:
        batch = dm.load_demands(args.against)
        out["cold_factor"], out["warm_factor"] = dm.serving_factors(batch.by_content,
                                                                     d.served)
        print(f"grading while serving vs {args.against}: x{out['cold_factor']:.3f} after an "
              f"idle pilot, x{out['warm_factor']:.3f} back to back (predict takes the batch "
              f"time for back-to-back work)")
    Path(args.out).write_text(json.dumps(out, indent=1))
    s = d.describe()
    print(f"{sum(len(v) for v in d.service.values())} graded submissions, "
          f"{len(d.by_content)} distinct: mean grading {s['service_mean_s']:.3f} s "
          f"(cs^2 {s['service_cs2']:.2f}), intake {s['intake_mean_s']:.3f} s, store "
          f"{s['storing_mean_s']:.3f} s; wrote {args.out}")
    return 0


def cmd_predict(args: argparse.Namespace, ctx: Context) -> int:
    path = Path(args.trace)
    try:
        rows = tr.read_csv(path.read_text())
    except (OSError, ValueError) as e:
        raise GradelineError(f"{path}: {e}") from e
    if not rows:
        raise GradelineError(f"{path}: the trace is empty")
    if args.nodes < 1 or args.cores < 1 or args.replications < 1:
        raise GradelineError("--nodes, --cores and --replications must be >= 1")
    d = dm.load_demands(args.demands, args.overheads)
    keys = sim.trace_keys(rows, path.parent)
    known = sum(1 for k in keys if k is not None and k in d.by_content)
    infl = dm.inflation_from_speedup(dm.parse_speedup(args.speedup)) if args.speedup else {}
    lay = sim.Layout(args.nodes, args.cores, infl, host_cpu_s=args.host_cpu,
                     host_cores=args.host_cores)
    closed = args.mode == "closed"
    print(f"{len(rows)} submissions ({args.mode} loop), {known} with their own measured "
          f"grading time, the rest drawn from their assignment's; {args.replications} "
          f"replications; grading after an idle pilot x{d.cold_factor:.3f} the batch time")
    out: dict[str, object] = {"trace": str(path), "mode": args.mode, "measured": known}
    if args.target_p95 is not None:
        found = sim.smallest_layout(d, rows, args.target_p95, cores_per_node=args.cores,
                                    base=lay, closed=closed,
                                    replications=args.replications,
                                    max_cores=args.max_cores, keys=keys)
        if found is None:
            print(f"no layout up to {args.max_cores} cores meets p95 <= {args.target_p95:g} s")
            out["target"] = None
            if args.json:
                Path(args.json).write_text(json.dumps(out, indent=1))
            return 1
        cores, pred = found
        print(f"smallest layout meeting p95 <= {args.target_p95:g} s: {pred.nodes} node(s) x "
              f"{args.cores} cores = {cores} cores")
        out["target"] = {"p95_s": args.target_p95, "cores": cores}
    else:
        pred = sim.predict(d, lay, rows, closed=closed, replications=args.replications,
                           seed=args.seed, keys=keys)
    print(f"{pred.nodes} x {pred.cores} cores: makespan {pred.makespan:.1f} s, "
          f"X {pred.throughput:.3f}/s, utilization {pred.utilization:.2f}; response mean "
          f"{pred.mean:.2f} p50 {pred.p50:.2f} p95 {pred.p95:.2f} (+-{pred.p95_ci:.2f}) "
          f"p99 {pred.p99:.2f} s")
    out["prediction"] = pred.to_dict()
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


def cmd_models(args: argparse.Namespace, ctx: Context) -> int:
    d = dm.load_demands(args.demands)
    s = d.describe()
    svc, cs2 = s["service_mean_s"], s["service_cs2"]
    pooled = d.pooled()
    if args.rate is None and args.students is None:
        raise GradelineError("give --rate (open arrivals) or --students (closed loop)")
    if args.rate is not None:
        m = OpenModel(args.rate, svc, args.cores, cs2)
        if not m.stable:
            print(f"M/G/{args.cores}: offered load {m.offered:.2f} erlangs exceeds "
                  f"{args.cores} cores: the backlog grows without bound")
        else:
            print(f"M/G/{args.cores} (Allen-Cunneen, cs^2 {cs2:.2f}): utilization "
                  f"{m.utilization:.2f}, P(wait) {m.p_wait:.3f}, mean wait {m.wait_s:.2f} s, "
                  f"response mean {m.response_s:.2f} s, p95 "
                  f"{m.response_quantile(0.95, pooled):.2f} s")
        if args.target_p95 is not None:
            try:
                n = smallest_servers(args.rate, svc, args.target_p95, cs2=cs2,
                                     services=pooled)
            except ValueError as e:
                raise GradelineError(str(e)) from e
            print(f"fewest cores with p95 <= {args.target_p95:g} s: {n}")
    if args.students is not None:
        st = [Station("cores", svc, args.cores)]
        b = bounds(st, args.think)
        p = mva(st, args.think, args.students)[-1]
        print(f"closed loop, N={args.students}, Z={args.think:g} s, {args.cores} cores "
              f"(exact MVA): X {p.throughput:.3f}/s, R {p.response_s:.2f} s, utilization "
              f"{p.utilization['cores']:.2f}; bounds X <= {b.throughput_max(args.students):.3f}"
              f"/s, R >= {b.response_min(args.students):.2f} s; knee N* = {b.knee:.1f}")
    return 0
