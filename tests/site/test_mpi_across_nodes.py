"""MPI ranks across nodes, as a site runs them: gradeline as an ordinary account, a
pilot that holds two nodes of the local cluster, each test's ranks started by `srun
--mpi=pmix` in a sandbox of their own on their node (bubblewrap and Apptainer). A probe
program's ranks report different nodes, cannot reach slurmctld on their node's loopback
and cannot write beside the worker's other submissions; the example's accepted program
is AC, its deadlock TLE, and its crashing rank RE naming the rank; nothing is left
running."""

from __future__ import annotations

import csv
import json

import pytest

from ..support import BIN, FIXTURES, ROOT, USER

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
MPISUM = ROOT / "grader/examples/mpisum"


@pytest.mark.parametrize("runtime", ["bwrap", "apptainer"])
def test_mpi_ranks_run_on_two_nodes_each_in_its_sandbox(site_user, slurm_conf, runtime):
    run, scratch = site_user
    extra = {"SLURM_CONF": slurm_conf, "GRADELINE_RUNTIME": runtime}
    spool, pk = scratch / f"spool-mpi-{runtime}", scratch / f"pk-mpi-{runtime}"
    run(["mkdir", "-p", pk], extra)
    for name, src in (("mpinodes", FIXTURES / "mpinodes"), ("mpisum", MPISUM)):
        assert run(["cp", "-r", src, pk / name], extra).returncode == 0
    subs = {("mpinodes", "ann"): FIXTURES / "mpinodes/probe.c",
            ("mpisum", "ben"): MPISUM / "submissions/accepted/reduce.c",
            ("mpisum", "cat"): MPISUM / "submissions/run_time_error/rank_one_crashes.c",
            ("mpisum", "dan"): MPISUM / "submissions/time_limit_exceeded/both_receive.c"}
    steps = [[BIN, "db", "start"]]
    for (assignment, student), src in subs.items():
        steps.append([BIN, "submit", assignment, student, src, "--spool", spool,
                      "--assignments", pk])
    steps.append([BIN, "run", "--spool", spool, "--assignments", pk, "--executor", "slurm",
                  "--dispatch", "pilots"])
    for argv in steps:
        r = run(argv, extra, timeout=1200)
        assert r.returncode == 0, f"{argv[1]} as {USER}: {(r.stdout + r.stderr)[-3000:]}"
    verdicts, feedback = {}, {}
    for assignment in ("mpinodes", "mpisum"):
        r = run([BIN, "results", "--spool", spool, "--assignments", pk, "--assignment",
                 assignment], extra)
        assert r.returncode == 0, r.stderr[-1000:]
        for row in csv.DictReader(r.stdout.splitlines()):
            verdicts[row["student"]] = row["verdict"]
        g = run([BIN, "results", "--spool", spool, "--assignments", pk, "--assignment",
                 assignment, "--format", "gradescope"], extra)
        feedback[assignment] = g.stdout
    assert verdicts == {"ann": "AC", "ben": "AC", "cat": "RE", "dan": "TLE"}, \
        (verdicts, feedback)
    assert "rank 1 was killed by SIGSEGV" in json.dumps(feedback["mpisum"]), feedback
    left = run(["pgrep", "-u", USER, "-f", "mpisum|mpinodes|/sol"], extra)
    assert left.stdout.strip() == "", f"left running as {USER}: {left.stdout}"
