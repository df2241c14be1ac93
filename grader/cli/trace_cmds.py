"""The handlers of ``gradeline trace`` (registered lazily by ``cli.trace``: numpy and
the plotting stack load only when a trace command runs)."""

from __future__ import annotations

import argparse
import csv
import json
import os
from datetime import datetime
from pathlib import Path

from analysis.responses import write_report
from grader.adapters.browser import render_check
from grader.compose.context import Context
from grader.core.errors import GradelineError
from grader.core.finished import Finished
from grader.planning import trace as tr
from grader.planning.replay import replay_closed, replay_open
from grader.planning.response import analyse


def _pool(corpus: Path, rel_to: Path) -> list[tr.Work]:
    """The submissions of a ``gradeline corpus`` directory (its manifest.csv), with
    paths relative to where the trace is written."""
    manifest = corpus / "manifest.csv"
    try:
        with manifest.open(newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise GradelineError(f"--corpus: cannot read {manifest}: {e} (make one with "
                             "'gradeline corpus DIR')") from e
    return [tr.Work(r["student"], r["assignment"],
                    os.path.relpath((corpus / r["path"]).resolve(), rel_to.resolve()))
            for r in rows]


def _write(rows: list[tr.TraceRow], out: Path) -> None:
    out.write_text(tr.write_csv(rows))
    print(f"wrote {len(rows)} submissions to {out}")


def cmd_gen(args: argparse.Namespace, ctx: Context) -> int:
    out = Path(args.out)
    pool = _pool(Path(args.corpus), out.parent)
    try:
        if args.kind == "poisson":
            rows = tr.poisson(pool, args.rate, args.count, args.seed)
        elif args.kind == "rush":
            growth = args.growth
            if args.fit_from:
                times = [float(line.split(",")[0]) for line in
                         Path(args.fit_from).read_text().splitlines()[1:] if line.strip()]
                growth = tr.fit_growth(times, args.duration)
                print(f"fitted growth {growth:.3f} from {len(times)} arrival times")
            rows = tr.deadline_rush(pool, args.count, args.duration, growth, args.seed)
        else:
            rows = tr.closed_loop(pool, args.students, args.attempts, args.think, args.seed,
                                  exponential=args.exponential)
    except ValueError as e:
        raise GradelineError(f"trace gen {args.kind}: {e}") from e
    _write(rows, out)
    return 0


def _since(args: argparse.Namespace) -> datetime | None:
    try:
        return datetime.fromisoformat(args.since) if args.since else None
    except ValueError as e:
        raise GradelineError(f"--since: {e}") from e


def _finished(args: argparse.Namespace, ctx: Context) -> list[Finished]:
    with ctx.store() as store:
        rows = store.finished(ctx.course(), _since(args))
    if not rows:
        raise GradelineError(f"course {ctx.course()!r} has no finished submissions"
                             + (f" since {args.since}" if args.since else ""))
    return rows


def cmd_capture(args: argparse.Namespace, ctx: Context) -> int:
    spool = ctx.spool()
    out = Path(args.out)

    def ref(r: Finished) -> str:
        payload = spool.done(str(r.spool_id)).payload
        files = sorted(payload.iterdir()) if payload.is_dir() else []
        return os.path.relpath(files[0], out.parent.resolve()) if files else \
            f"spool:{r.spool_id}"

    _write(tr.capture(_finished(args, ctx), ref), out)
    return 0


def cmd_swf(args: argparse.Namespace, ctx: Context) -> int:
    text = tr.swf(_finished(args, ctx), note=f"gradeline course {ctx.course()}")
    Path(args.out).write_text(text)
    print(f"wrote {text.count(chr(10)) - 6} jobs to {args.out}")
    return 0


def cmd_replay(args: argparse.Namespace, ctx: Context) -> int:
    path = Path(args.trace)
    try:
        rows = tr.read_csv(path.read_text())
    except (OSError, ValueError) as e:
        raise GradelineError(f"{path}: {e}") from e
    spool, course = ctx.spool(create=True), ctx.course()
    if args.mode == "closed":
        r = replay_closed(spool, rows, path.parent, course, compression=args.compression,
                          timeout_s=args.timeout)
    else:
        r = replay_open(spool, rows, path.parent, course, compression=args.compression)
    print(f"replayed {r.submitted} submissions ({args.mode} loop) into {spool.root} in "
          f"{r.elapsed_s:.1f} s")
    return 0


def cmd_analyse(args: argparse.Namespace, ctx: Context) -> int:
    try:
        a = analyse(_finished(args, ctx), cores=args.cores, students=args.students,
                    think_s=args.think)
    except ValueError as e:
        raise GradelineError(str(e)) from e
    d: dict[str, object] = a.to_dict()
    d["offered"] = args.offered
    if args.json:
        Path(args.json).write_text(json.dumps(d, indent=1))
    r = a.response
    print(f"{a.count} submissions in {a.window_s:.1f} s: X = {a.throughput:.3f}/s; response "
          f"p50 {r['p50']:.2f} p90 {r['p90']:.2f} p95 {r['p95']:.2f} p99 {r['p99']:.2f} "
          f"max {r['max']:.2f} s")
    if a.queueing:
        print(f"queueing mean {a.queueing['mean']:.2f} s, service mean "
              f"{a.service['mean']:.2f} s, storing mean {a.storing['mean']:.2f} s")
    print(f"Little's law: backlog L = {a.little_l_sampled:.2f}, X*R = {a.little_xr:.2f}")
    if a.closed is not None:
        c = a.closed
        print(f"interactive law: R measured {c.response_measured:.2f} s, N/X - Z = "
              f"{c.response_law:.2f} s (N={c.students}, Z={c.think_s:g} s, "
              f"X={c.throughput:.3f}/s): difference {c.error:.1%}")
    if args.report:
        runs = {ctx.course(): d}
        for extra in args.add or []:
            runs[Path(extra).stem] = json.loads(Path(extra).read_text())
        page = write_report(runs, Path(args.report))
        print(f"report: {page}")
        if args.check:
            res = render_check(page, page.with_name("screenshot.png"),
                               title="gradeline response times")
            print(f"headless Chromium: {res['images_loaded']}/{res['images']} images loaded")
            if not res["images"] or res["images_loaded"] != res["images"]:
                return 1
    return 0


