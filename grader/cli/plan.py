"""``gradeline plan demands | predict | models``: capacity planning from measurements --
what a course's submissions cost, and how many cores keep feedback fast."""

from __future__ import annotations

from typing import Any

from grader.cli.common import lazy, spool_options

M = "grader.cli.plan_cmds"


def register(sub: Any) -> None:
    p = sub.add_parser("plan", help="capacity planning: measured demands, simulated cluster, "
                                    "queueing models")
    ps = p.add_subparsers(dest="plan_command", required=True)

    d = ps.add_parser("demands", help="what a finished run says submissions cost (JSON)")
    spool_options(d)
    d.add_argument("--since", help="only submissions arrived at or after (ISO time)")
    d.add_argument("-o", "--out", required=True, help="the demands JSON to write")
    d.set_defaults(func=lazy(M, "cmd_demands"))

    r = ps.add_parser("predict", help="simulate a trace on a cluster layout: makespan and "
                                      "response-time percentiles")
    r.add_argument("--trace", required=True, help="a trace CSV (gradeline trace gen/capture)")
    r.add_argument("--demands", required=True, help="'plan demands' JSON: grading times")
    r.add_argument("--overheads", help="'plan demands' JSON whose pipeline delays (intake, "
                                       "store, pilot start) replace those of --demands")
    r.add_argument("--mode", choices=["open", "closed"], default="open",
                   help="closed: each attempt waits for the previous result + think time")
    r.add_argument("--nodes", type=int, default=1)
    r.add_argument("--cores", type=int, default=1, help="cores per node (one pilot each)")
    r.add_argument("--speedup", default="",
                   help="measured S(N) of a node as N:S pairs, e.g. 16:11.2,64:29.6 (the "
                        "service inflation N/S(N)); none: perfect scaling")
    r.add_argument("--host-cpu", type=float, default=0.0,
                   help="CPU seconds serve spends per submission on the same cores (a "
                        "one-machine setup); 0 when serve has a host of its own")
    r.add_argument("--replications", type=int, default=10)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--target-p95", type=float,
                   help="search the fewest nodes of --cores whose p95 response meets this (s)")
    r.add_argument("--max-cores", type=int, default=4096, help="--target-p95: give up above")
    r.add_argument("--json", help="also write the prediction here")
    r.set_defaults(func=lazy(M, "cmd_predict"))

    q = ps.add_parser("models", help="analytic answers: Erlang C / M/G/m for an arrival "
                                     "rate, exact MVA for N students")
    q.add_argument("--demands", required=True, help="'plan demands' JSON")
    q.add_argument("--rate", type=float, help="open: arrivals per second")
    q.add_argument("--cores", type=int, default=1)
    q.add_argument("--students", type=int, help="closed: N students")
    q.add_argument("--think", type=float, default=60.0, help="closed: think time Z (s)")
    q.add_argument("--target-p95", type=float, help="open: the fewest cores meeting it (s)")
    q.set_defaults(func=lazy(M, "cmd_models"))
