"""What grading a parallel program needs around each run (``core.shape``): the cores
it runs on and the threads it is told to use, the compiler's parallel flags, a failed
test run again to tell a data race from a wrong answer, and the feedback that says a
program started more threads than its cores.

A run sees exactly its shape's cores: its CPU affinity (and its cgroup's cpuset, where
there is one) is the worker's first ``cores`` CPUs, so ``nproc``, ``sched_getaffinity``
and ``OMP_NUM_THREADS`` agree. A worker with fewer CPUs than the shape is a placement
fault of ours (judge error), never the student's.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from grader.core.errors import SandboxError
from grader.core.limits import Limits
from grader.core.result import FEEDBACK_LIMIT, TestResult
from grader.core.runmeta import RunMeta, describe_termination
from grader.core.shape import Shape
from grader.core.textfile import head, tail
from grader.core.verdict import Validation, Verdict
from grader.judge.ports import GPU_LIBRARIES

#: verdicts a data race can give; a run that timed out is not run again (it costs a
#: whole wall limit each time)
RERUN = frozenset({Verdict.WA, Verdict.RE})
#: languages whose compilers take OpenMP and pthreads flags
OPENMP_LANGUAGES = {"c": ("-fopenmp", "-pthread"), "cpp": ("-fopenmp", "-pthread"),
                    "fortran": ("-fopenmp", "-pthread")}
#: an MPI assignment's compilers: Open MPI's wrappers around the languages' own
MPI_COMPILERS = {"gcc": "mpicc", "g++": "mpicxx", "gfortran": "mpifort"}
#: how one node's ranks start inside one run (``mpirun``: they share its namespaces,
#: and shared memory between them works); only rank 0's output is the program's
RANK0_ONLY = ('if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then exec "$@"; else exec "$@" '
              '>/dev/null; fi')
#: Open MPI inside one run: no remote launcher to look for, ranks may outnumber cores;
#: ranks talk TCP over the run's loopback, never shared memory (its segment, a file of
#: megabytes, would meet the run's file-size limit: SIGXFSZ), as across nodes
MPI_ENV = {"OMPI_MCA_plm_rsh_agent": "false", "OMPI_MCA_rmaps_base_oversubscribe": "1",
           "OMPI_MCA_btl": "self,tcp", "OMPI_MCA_btl_tcp_if_include": "lo",
           "OMPI_MCA_oob_tcp_if_include": "lo", "OMPI_MCA_orte_tmpdir_base": "/tmp",
           "PMIX_MCA_gds": "hash"}


def run_cpus(shape: Shape, cpus: Sequence[int]) -> list[int]:
    """The CPUs a run of ``shape`` is pinned to: the first ``shape.cores`` of the
    worker's.

    :raises SandboxError: when the worker has fewer (a placement fault: JE).
    """
    if len(cpus) < shape.cores:
        raise SandboxError(f"this worker has {len(cpus)} CPU(s) but the assignment's shape "
                           f"is {shape.describe()}: it was placed on the wrong pilot")
    return list(cpus)[:shape.cores]


def run_gpus(shape: Shape, gpus: Sequence[int]) -> list[int]:
    """The GPUs a run of ``shape`` uses: the first ``shape.gpus`` of the worker's.

    :raises SandboxError: when the worker has fewer (a placement fault: JE, never the
        student's "no CUDA-capable device").
    """
    if len(gpus) < shape.gpus:
        raise SandboxError(f"this worker has {len(gpus)} GPU(s) but the assignment's shape "
                           f"is {shape.describe()}: it was placed where its GPU is not")
    return list(gpus)[:shape.gpus]


def mpi_interfaces(peers: Sequence[str]) -> str:
    """Open MPI's ``btl_tcp_if_include`` for ranks across nodes: the nodes' own addresses
    (each node's interface on the MPI network), or the loopback where the nodes share
    one host (the local cluster's)."""
    if not peers or all(p.startswith("127.") for p in peers):
        return "127.0.0.1/8"
    return ",".join(f"{p}/32" for p in peers)


def run_env(shape: Shape, env: Mapping[str, str], gpus: Sequence[int] = (),
            peers: Sequence[str] = ()) -> dict[str, str]:
    """A run's environment: OpenMP told the shape's threads (a program may ask for more
    itself; the feedback then says it oversubscribed its cores); CUDA told its GPUs and
    where the driver's libraries are bound in (``adapters.gpus``)."""
    out = dict(env)
    if not shape.serial:
        out["OMP_NUM_THREADS"] = str(shape.threads)
    if shape.mpi:
        out.update(MPI_ENV)
        if shape.nodes > 1:  # srun's ranks (adapters.sandbox.ranks): TCP between nodes
            out.update(OMPI_MCA_btl_tcp_if_include=mpi_interfaces(peers),
                       OMPI_MCA_orte_top_session_dir="/tmp")
            out.pop("OMPI_MCA_oob_tcp_if_include", None)
    if gpus:
        out["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, gpus))
        out["LD_LIBRARY_PATH"] = GPU_LIBRARIES
    return out


def compile_argv(shape: Shape, argv: list[str]) -> list[str]:
    """An MPI shape's compile: the language's compiler through Open MPI's wrapper."""
    if not shape.mpi or not argv:
        return argv
    return [MPI_COMPILERS.get(argv[0], argv[0]), *argv[1:]]


def run_argv(shape: Shape, argv: list[str]) -> list[str]:
    """An MPI shape's run on one node: ``mpirun`` starting its ranks in the run, rank 0's
    output the program's (the others' dropped), standard input to rank 0."""
    if not shape.mpi or shape.nodes > 1:
        return argv
    return ["mpirun", "-np", str(shape.ranks), "--bind-to", "none", "sh", "-c", RANK0_ONLY,
            "rank", *argv]


def compile_flags(shape: Shape, language: str, flags: Sequence[str] | None
                  ) -> tuple[str, ...] | None:
    """The package's flags for ``language``, with OpenMP and pthreads added for a shape
    of more than one thread or core (what a course that asks for 4 cores expects)."""
    extra = OPENMP_LANGUAGES.get(language, ())
    if (shape.threads == 1 and shape.cores == 1) or not extra:
        return tuple(flags) if flags is not None else None
    have = tuple(flags or ())
    return have + tuple(f for f in extra if f not in have)


def settle(first: TestResult, again: Callable[[], tuple[TestResult, float, float]],
           reruns: int) -> TestResult:
    """A failed test's verdict after running it ``reruns`` times more: the first
    failure stands, and the feedback says how many runs passed -- "passed 2 of 5 runs:
    likely a data race" -- rather than a plain wrong answer."""
    if reruns <= 0 or first.verdict not in RERUN:
        return first
    results = [again()[0] for _ in range(reruns)]
    if any(r.verdict is Verdict.JE for r in results):
        return first  # our fault in a rerun: the first run's verdict is still the student's
    passed = sum(r.verdict is Verdict.AC for r in results)
    runs = reruns + 1
    if passed:
        note = (f"passed {passed} of {runs} runs: likely a data race (the result changes "
                "from run to run)")
    else:
        note = f"the same in all {runs} runs"
    feedback = f"{note}; first failure: {first.feedback}" if first.feedback else note
    return replace(first, feedback=feedback[:FEEDBACK_LIMIT])


def oversubscribed(shape: Shape, threads_peak: int | None) -> str:
    """A note when a run had more threads than its cores ("" when not, or unmeasured)."""
    if threads_peak is None or threads_peak <= shape.cores:
        return ""
    return (f"ran {threads_peak} threads on {shape.cores} core(s): oversubscribed, so "
            "they took turns (slower than one per core)")


#: what Open MPI's launcher says of a rank that died, and of MPI_Abort
RANK_SIGNAL = re.compile(r"process rank (\d+) with PID \S+ on node \S+ exited on signal "
                         r"(\d+)")
RANK_ABORT = re.compile(r"MPI_ABORT was invoked on rank (\d+) in communicator \S+\s+with "
                        r"errorcode (-?\d+)")


def rank_failure(stderr: str) -> str:
    """Which rank ended an MPI program, in words ("" when the launcher said nothing)."""
    m = RANK_ABORT.search(stderr)
    if m:
        return f"rank {m.group(1)} called MPI_Abort with error code {m.group(2)}"
    m = RANK_SIGNAL.search(stderr)
    if m:
        try:
            name = signal.Signals(int(m.group(2))).name
        except ValueError:
            name = f"signal {m.group(2)}"
        return f"rank {m.group(1)} was killed by {name}"
    return ""


def feedback(shape: Shape, meta: RunMeta, limits: Limits, validation: Validation | None,
             verdict: Verdict, stderr: Path) -> str:
    """A test's feedback: the validator's (or why the run ended, with the end of its
    standard error for a run-time error), after what a parallel program needs said:
    that it oversubscribed its cores, which MPI rank ended it."""
    notes = [oversubscribed(shape, meta.threads_peak)]
    if validation is not None:
        text = validation.judge_error or validation.feedback
    else:
        text = describe_termination(meta, limits)
        if verdict is Verdict.RE:
            if shape.mpi:  # mpirun's word on one node, srun's ranks' (their message) across
                notes.append(rank_failure(head(stderr, 16000)) or meta.message)
            err = tail(stderr, 400).strip()
            if err:
                text += f"; stderr: {err}"
    return "; ".join(n for n in [*notes, text] if n)
