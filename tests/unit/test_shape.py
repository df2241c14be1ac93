"""A parallel assignment's shape (``gradeline.yaml`` ``resources:``), the limits that
follow from it, the compiler's parallel flags, and what a failed test run again says."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from grader.core.errors import ProblemFormatError
from grader.core.limits import Limits
from grader.core.result import TestResult
from grader.core.runmeta import RunMeta, TerminationReason, describe_termination
from grader.core.shape import SERIAL, Capacity, Shape, refusal
from grader.core.verdict import Verdict
from grader.formats.load import load_problem
from grader.formats.resources import shaped_limits
from grader.judge import parallel

from ..support import EXAMPLES


def package(tmp_path: Path, **extra: object) -> Path:
    pkg = tmp_path / "bigsum"
    shutil.copytree(EXAMPLES / "bigsum", pkg)
    gl = yaml.safe_load((pkg / "gradeline.yaml").read_text())
    (pkg / "gradeline.yaml").write_text(yaml.safe_dump({**gl, **extra}))
    return pkg


def test_a_package_without_resources_is_serial(tmp_path: Path) -> None:
    p = load_problem(package(tmp_path))
    assert p.shape == SERIAL and p.shape.serial and p.reruns == 0
    assert p.limits.cores == 1 and p.limits.cpu_time_s == 1.0


def test_resources_make_the_time_limit_wall_time_on_the_cores(tmp_path: Path) -> None:
    p = load_problem(package(tmp_path, resources={"cores": 4}))
    assert p.shape == Shape(cores=4, threads=4) and p.reruns == 4
    assert (p.limits.wall_s, p.limits.cpu_time_s, p.limits.cores) == (1.0, 4.0, 4)
    assert p.limits.processes is not None and p.limits.processes >= 4 * 4
    mpi = load_problem(package(tmp_path / "m", resources={"nodes": 2, "ranks": 4},
                               reruns=0))
    assert mpi.shape.mpi and mpi.shape.ranks_per_node == 2 and mpi.shape.threads == 1
    assert mpi.reruns == 0 and mpi.shape.key == "c1-n2-r4"


@pytest.mark.parametrize(("resources", "why"), [
    ([4], "resources must be a mapping"),
    ({"cpus": 4}, "unknown keys ['cpus']"),
    ({"cores": 0}, "resources.cores must be a whole number from 1"),
    ({"cores": True}, "resources.cores must be a whole number"),
    ({"nodes": 2, "ranks": 1}, "2 nodes need at least as many ranks"),
    ({"cores": 1, "threads": 8}, "more than 4 per core"),
    ({"exclusive": "socket"}, "resources.exclusive must be one of ['cores', 'node']"),
])
def test_a_bad_shape_is_refused_naming_the_key(tmp_path: Path, resources: object,
                                               why: str) -> None:
    with pytest.raises(ProblemFormatError) as e:
        load_problem(package(tmp_path, resources=resources))
    assert why in str(e.value) and "gradeline.yaml" in str(e.value)


def test_limits_follow_the_shape() -> None:
    base = Limits(cpu_time_s=2.0, processes=32, memory_bytes=256 << 20)
    assert shaped_limits(base, SERIAL) is base
    wide = shaped_limits(base, Shape(cores=8, threads=8))
    assert (wide.wall_s, wide.cpu_time_s, wide.cores) == (2.0, 16.0, 8)
    assert wide.processes == 32 + 32 and wide.memory_bytes == base.memory_bytes
    gpu = shaped_limits(base, Shape(gpus=1, memory_mib=1024))  # one core: serial limits
    assert (gpu.cpu_time_s, gpu.cores, gpu.memory_bytes) == (2.0, 1, 1024 << 20)


def test_openmp_flags_are_added_for_a_parallel_shape_only() -> None:
    four = Shape(cores=4, threads=4)
    assert parallel.compile_flags(four, "c", ("-O2",)) == ("-O2", "-fopenmp", "-pthread")
    assert parallel.compile_flags(four, "c", ("-fopenmp",)) == ("-fopenmp", "-pthread")
    assert parallel.compile_flags(SERIAL, "c", None) is None
    assert parallel.compile_flags(four, "python3", None) is None


def _result(verdict: Verdict, feedback: str = "") -> TestResult:
    return TestResult("t", "g", verdict, feedback=feedback)


@pytest.mark.parametrize(("first", "again", "note"), [
    (Verdict.AC, [], None),  # passed: never run again
    (Verdict.TLE, [Verdict.AC], None),  # a time-out costs a whole limit: not run again
    (Verdict.WA, [Verdict.AC, Verdict.WA, Verdict.AC, Verdict.WA],
     "passed 2 of 5 runs: likely a data race (the result changes from run to run)"),
    (Verdict.RE, [Verdict.RE] * 4, "the same in all 5 runs"),
    (Verdict.WA, [Verdict.AC, Verdict.JE, Verdict.AC, Verdict.AC], None),  # our fault
])
def test_a_failed_test_run_again_says_how_often_it_passed(first: Verdict,
                                                          again: list[Verdict],
                                                          note: str | None) -> None:
    runs = iter(again)
    out = parallel.settle(_result(first, "wrong answer on line 1"),
                          lambda: (_result(next(runs)), 0.0, 0.0), reruns=4)
    assert out.verdict is first
    if note is None:
        assert out.feedback == "wrong answer on line 1"
    else:
        assert out.feedback == f"{note}; first failure: wrong answer on line 1"


def test_a_run_with_more_threads_than_cores_is_told() -> None:
    two = Shape(cores=2)
    assert parallel.oversubscribed(two, 2) == "" and parallel.oversubscribed(two, None) == ""
    assert parallel.oversubscribed(two, 9).startswith("ran 9 threads on 2 core(s)")


def test_a_wall_time_out_without_cpu_says_it_made_no_progress() -> None:
    lim = Limits(cpu_time_s=2.0, wall_time_s=2.0)
    stuck = RunMeta(None, 9, 0.01, 2.0, termination=TerminationReason.WALL_TIME)
    assert "no CPU progress for 2.0 s" in describe_termination(stuck, lim)
    busy = replace(stuck, cpu_time_s=1.5)
    assert "no CPU progress" not in describe_termination(busy, lim)


SCONTROL = """\
NodeName=n1 Arch=x86_64 CPUTot=4 CPUEfctv=3 Gres=gpu:2 Partitions=grading,gpu State=IDLE
NodeName=n2 Arch=x86_64 CPUTot=8 CPUEfctv=8 Gres=(null) Partitions=grading State=IDLE
NodeName=n3 Arch=x86_64 CPUTot=64 CPUEfctv=64 Gres=gpu:a100:4 Partitions=gpu State=DOWN+DRAIN
"""


def test_what_a_partition_can_give_one_allocation() -> None:
    from grader.adapters.scheduler.slurm import node_capacity

    assert node_capacity(SCONTROL, "grading") == Capacity(2, 8, 2, "Slurm partition grading")
    assert node_capacity(SCONTROL, "gpu") == Capacity(1, 3, 2, "Slurm partition gpu")
    assert node_capacity(SCONTROL, None).nodes == 2  # the drained node gives nothing


@pytest.mark.parametrize(("shape", "why"), [
    (Shape(cores=4, threads=4), ""),
    (Shape(cores=16, threads=16), "16 cores on one node, and the most it has on one is 8"),
    (Shape(nodes=3, ranks=3), "3 nodes, and it has 2 up"),
    (Shape(gpus=1), ""),
    (Shape(gpus=4), "4 GPU(s) on a node, and its nodes have at most 2"),
])
def test_a_shape_the_cluster_cannot_give_is_refused_with_the_reason(shape: Shape,
                                                                   why: str) -> None:
    got = refusal(shape, Capacity(2, 8, 2, "Slurm partition grading"))
    assert (why in got and got.startswith("Slurm partition grading cannot give")) if why \
        else got == ""


def test_one_machine_gives_no_nodes_and_no_gpu() -> None:
    here = Capacity(1, 2, 0, "this machine", multi_node=False)
    assert "grade it on Slurm" in refusal(Shape(nodes=2, ranks=2), here)
    assert "it has no GPU" in refusal(Shape(gpus=1), here)


@pytest.mark.parametrize(("stderr", "said"), [
    ("mpirun noticed that process rank 1 with PID 0 on node gradeline exited on signal 11 "
     "(Segmentation fault).", "rank 1 was killed by SIGSEGV"),
    ("MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD\nwith errorcode 3.\n",
     "rank 0 called MPI_Abort with error code 3"),
    ("a plain crash", ""),
])
def test_which_rank_ended_an_mpi_program(stderr: str, said: str) -> None:
    assert parallel.rank_failure(stderr) == said


def test_a_multi_node_shape_on_one_machine_keeps_every_rank_and_core() -> None:
    two = Shape(nodes=2, ranks=4, cores=2)
    one = two.on_one_node()
    assert (one.nodes, one.ranks, one.cores, one.threads) == (1, 4, 4, 1)
    assert parallel.run_argv(one, ["./sol"])[:4] == ["mpirun", "-np", "4", "--bind-to"]
    assert parallel.run_argv(two, ["./sol"]) == ["./sol"]  # across nodes: srun's
    assert parallel.compile_argv(one, ["gcc", "-O2"]) == ["mpicc", "-O2"]


def test_mpi_across_nodes_is_refused_as_root_with_what_to_do() -> None:
    as_root = Capacity(2, 1, 0, "the Slurm cluster", ranks_as_job_user=False)
    why = refusal(Shape(nodes=2, ranks=2), as_root)
    assert "must run as the Slurm job's own user" in why and "ordinary account" in why
    assert refusal(Shape(ranks=2, cores=1), as_root) == ""  # one node: mpirun in one run
    assert refusal(Shape(nodes=2, ranks=2), Capacity(2, 1, 0, "c")) == ""
