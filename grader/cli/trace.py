"""``gradeline trace gen | capture | swf | replay | analyse``: submission traces for
research -- generate, record from a finished run, export for scheduler simulators,
replay against ``gradeline serve``, and analyse response times."""

from __future__ import annotations

import argparse

from grader.cli.common import Commands, lazy, spool_options

M = "grader.cli.trace_cmds"


def register(sub: Commands) -> None:
    t = sub.add_parser("trace", help="submission traces: generate, capture, export, "
                                     "replay, analyse")
    ts = t.add_subparsers(dest="trace_command", required=True)

    g = ts.add_parser("gen", help="generate a trace (seeded) from a corpus's submissions")
    g.add_argument("kind", choices=["poisson", "rush", "closed"])
    g.add_argument("--corpus", required=True, help="a 'gradeline corpus' directory")
    g.add_argument("-o", "--out", required=True, help="the trace CSV to write")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--count", type=int, default=100, help="poisson, rush: submissions")
    g.add_argument("--rate", type=float, default=1.0, help="poisson: arrivals per second")
    g.add_argument("--duration", type=float, default=3600.0,
                   help="rush: seconds up to the deadline")
    g.add_argument("--growth", type=float, default=3.0,
                   help="rush: rate grows as exp(growth * t / duration)")
    g.add_argument("--fit-from", help="rush: fit the growth to this trace's arrival times "
                                      "(first column, seconds; deadline at --duration)")
    g.add_argument("--students", type=int, default=8, help="closed: students N")
    g.add_argument("--attempts", type=int, default=5, help="closed: attempts per student")
    g.add_argument("--think", type=float, default=15.0, help="closed: think time Z (s)")
    g.add_argument("--exponential", action="store_true",
                   help="closed: exponentially distributed think times (mean --think)")
    g.set_defaults(func=lazy(M, "cmd_gen"))

    def run_options(p: argparse.ArgumentParser) -> None:
        spool_options(p)
        p.add_argument("--since", help="only submissions arrived at or after (ISO time)")
        p.add_argument("-o", "--out", required=True)

    c = ts.add_parser("capture", help="the trace of a finished run (from its stamps)")
    run_options(c)
    c.set_defaults(func=lazy(M, "cmd_capture"))
    s = ts.add_parser("swf", help="a finished run in the Standard Workload Format")
    run_options(s)
    s.set_defaults(func=lazy(M, "cmd_swf"))

    r = ts.add_parser("replay", help="feed a trace into the spool in real time")
    r.add_argument("trace")
    spool_options(r)
    r.add_argument("--mode", choices=["open", "closed"], default="open",
                   help="open: by time stamps; closed: each attempt waits for the "
                        "previous result plus the think time")
    r.add_argument("--compression", type=float, default=1.0,
                   help="divide every time and think time by this")
    r.add_argument("--timeout", type=float, default=3600.0,
                   help="closed: give up when a result takes longer (s)")
    r.set_defaults(func=lazy(M, "cmd_replay"))

    a = ts.add_parser("analyse", help="response times of a finished run, with law checks")
    spool_options(a)
    a.add_argument("--since", help="only submissions arrived at or after (ISO time)")
    a.add_argument("--cores", type=int, help="cores that graded (for the utilization)")
    a.add_argument("--students", type=int, help="closed loop: N (checks R = N/X - Z)")
    a.add_argument("--think", type=float, help="closed loop: think time Z (s)")
    a.add_argument("--offered", type=float, help="open loop: offered load (/s), for the "
                                                 "load curve")
    a.add_argument("--json", help="also write the analysis here")
    a.add_argument("--report", metavar="DIR", help="write an HTML report with plots")
    a.add_argument("--add", action="append", help="more runs' --json files for the report")
    a.add_argument("--check", action="store_true", help="load the report in headless Chromium")
    a.set_defaults(func=lazy(M, "cmd_analyse"))

