"""``gradeline plan performance``: what an assignment's performance phase costs, from
its declaration and its reference timed here by the judge's own protocol (the
reference graded against itself)."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from grader.compose.context import Context
from grader.core.errors import ConfigError, GradelineError
from grader.formats.load import load_problem
from grader.formats.problem import Problem
from grader.planning.perfplan import PerfDemand, fixed_cost, predict


def _given(text: str) -> list[PerfDemand]:
    out = []
    for part in text.split(","):
        n, sep, t = part.partition(":")
        try:
            out.append(PerfDemand(int(n), float(t), 0.0))
        except ValueError:
            raise GradelineError(f"--reference-times: {part!r} is not N:seconds (e.g. "
                                 "1:0.42,2:0.22)") from None
        if not sep:
            raise GradelineError(f"--reference-times: {part!r} is not N:seconds")
    return out


def _measured(args: argparse.Namespace, ctx: Context, problem: Problem
              ) -> tuple[list[PerfDemand], float]:
    """The reference at each core count, timed against itself on this machine, and
    what its phase took beyond those rounds (``perfplan.fixed_cost``)."""
    assert problem.performance is not None
    cpus = ctx.cpus(args.cpus)
    ctx.prepare_image(problems={problem.short_name: problem}, local=cpus)
    judge = ctx.judge(cpus)
    try:
        r = judge.grade(problem, problem.performance.reference)
    finally:
        judge.close()
    perf = r.performance
    if perf is None or perf.gate:
        raise GradelineError(f"{problem.short_name}: its reference could not be timed: "
                             f"{perf.gate if perf else r.message or r.verdict.value}")
    if perf.not_in_force:
        print(f"timed on CPUs {cpus} with {', '.join(perf.not_in_force)} not in force: the "
              "times may be longer or noisier than on the grading nodes")
    demands = [PerfDemand(m.cores, m.reference.median_s, float(m.reference.runs))
               for m in perf.measurements]
    return demands, fixed_cost(problem.performance, demands,
                               float(r.timing.get("performance_s", 0.0)))


def cmd_performance(args: argparse.Namespace, ctx: Context) -> int:
    problem = load_problem(args.assignment)
    spec = problem.performance
    if spec is None:
        raise ConfigError(f"{problem.short_name}: gradeline.yaml declares no performance: "
                          "tests")
    demands, fixed = (_given(args.reference_times), 0.0) if args.reference_times else \
        _measured(args, ctx, problem)
    cores = args.cores or len(os.sched_getaffinity(0))
    try:
        plan = predict(spec, demands, students=args.students, shape_cores=problem.shape.cores,
                       cores=cores, accepted=args.accepted, ratio=args.ratio,
                       time_limit_s=problem.limits.wall_s, fixed_s=fixed)
    except ValueError as e:
        raise GradelineError(f"{problem.short_name}: {e}") from None
    print(plan.describe())
    if args.json:
        Path(args.json).write_text(json.dumps(plan.to_dict(), indent=1))
    return 0
