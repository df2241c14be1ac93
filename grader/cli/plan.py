"""``gradeline plan demands | predict | performance | models | partition | report``:
capacity planning from measurements -- what a course's submissions cost, how many cores
keep feedback fast, what an assignment's performance phase costs, and how a grading
partition should be laid out."""

from __future__ import annotations

import argparse

from grader.cli.common import Commands, lazy, spool_options

M = "grader.cli.plan_cmds"


def register(sub: Commands) -> None:
    p = sub.add_parser("plan", help="capacity planning: measured demands, simulated cluster, "
                                    "queueing models")
    ps = p.add_subparsers(dest="plan_command", required=True)

    d = ps.add_parser("demands", help="what a finished run says submissions cost (JSON)")
    spool_options(d)
    d.add_argument("--since", help="only submissions arrived at or after (ISO time)")
    d.add_argument("-o", "--out", required=True, help="the demands JSON to write")
    d.add_argument("--against", help="a batch run's demands JSON: record how this (served)"
                                     " run's grading compares with it for the same "
                                     "content (the cold and warm factors predict uses)")
    d.set_defaults(func=lazy(M, "cmd_demands"))

    _predict(ps)

    pf = ps.add_parser("performance", help="the performance phase's core-hours and finishing "
                                           "time for N students, from the package's "
                                           "declaration and its reference timed here")
    pf.add_argument("assignment", help="problem package directory (with performance:)")
    pf.add_argument("--students", type=int, required=True)
    pf.add_argument("--cores", type=int, help="cores grading may use at once (default: "
                                              "this machine's)")
    pf.add_argument("--accepted", type=float, default=1.0,
                    help="share of students whose submission is accepted, so timed")
    pf.add_argument("--ratio", type=float, default=1.0,
                    help="the submissions' time over the reference's")
    pf.add_argument("--cpus", help="CPUs to time the reference on (default: all allowed)")
    pf.add_argument("--reference-times", help="N:seconds pairs instead of timing it here, "
                                              "e.g. 1:0.42,2:0.22")
    pf.add_argument("--json", help="also write the plan here")
    pf.set_defaults(func=lazy("grader.cli.plan_perf", "cmd_performance"))

    q = ps.add_parser("models", help="analytic answers: Erlang C / M/G/m for an arrival "
                                     "rate, exact MVA for N students")
    q.add_argument("--demands", required=True, help="'plan demands' JSON")
    q.add_argument("--rate", type=float, help="open: arrivals per second")
    q.add_argument("--cores", type=int, default=1)
    q.add_argument("--students", type=int, help="closed: N students")
    q.add_argument("--think", type=float, default=60.0, help="closed: think time Z (s)")
    q.add_argument("--target-p95", type=float, help="open: the fewest cores meeting it (s)")
    q.set_defaults(func=lazy(M, "cmd_models"))

    def target(p: argparse.ArgumentParser) -> None:
        p.add_argument("--campaign", help="a campaign directory (gradeline campaign run)")
        p.add_argument("--l3-mb", type=float, help="L3 of one domain of the node being "
                                                   "planned, MB (default: the campaign's)")
        p.add_argument("--cores-per-l3", type=int, help="cores sharing one L3 domain")
        p.add_argument("--l3-domains", type=int, help="L3 domains per node")
        p.add_argument("--vendor", choices=["amd", "intel", "unknown"])
        p.add_argument("--nodes", default="grader[01-04]", help="slurm.conf NodeName")
        p.add_argument("--partition", default="grading", help="slurm.conf PartitionName")
        p.add_argument("--memory-mb", type=int, help="slurm.conf RealMemory")
        p.add_argument("--tolerance", type=float, default=0.10,
                       help="simulated L3: misses within this of their floor count as flat")

    pa = ps.add_parser("partition", help="L3 per core and cores per L3 domain for a grading "
                                         "partition, with the slurm.conf lines and evidence")
    target(pa)
    pa.add_argument("--json", help="also write the advice here")
    pa.set_defaults(func=lazy("grader.cli.plan_report", "cmd_partition"))

    rp = ps.add_parser("report", help="the capacity-planning page: models vs replays, the "
                                      "simulator's validation, partition advice")
    target(rp)
    rp.add_argument("--demands", required=True, help="'plan demands' JSON")
    rp.add_argument("--validation", help="bench/plan_validate.py's validation.csv")
    rp.add_argument("--validation-command", help="the command that produced it (shown)")
    rp.add_argument("--experiment", help="an experiment directory to link")
    rp.add_argument("--cores", default="1,2", help="core counts for the model curves")
    rp.add_argument("--think", type=float, default=30.0, help="closed loop: think time Z")
    rp.add_argument("--out", default="capacity", help="where index.html goes")
    rp.add_argument("--check", action="store_true",
                    help="load the page in headless Chromium; fail unless it renders")
    rp.set_defaults(func=lazy("grader.cli.plan_report", "cmd_report"))


def _predict(ps: Commands) -> None:
    """``plan predict``: the simulator's options."""
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
    r.add_argument("--host-cores", type=int, default=0,
                   help="cores that --host-cpu's work queues for (a control plane that "
                        "saturates: its ceiling is host-cores / host-cpu submissions/s); "
                        "0: it only slows grading")
    r.add_argument("--replications", type=int, default=10)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--target-p95", type=float,
                   help="search the fewest nodes of --cores whose p95 response meets this (s)")
    r.add_argument("--max-cores", type=int, default=4096, help="--target-p95: give up above")
    r.add_argument("--json", help="also write the prediction here")
    r.set_defaults(func=lazy(M, "cmd_predict"))
