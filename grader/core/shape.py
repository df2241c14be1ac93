"""What one grading of an assignment runs on -- its shape: cores, nodes, MPI ranks,
threads, GPUs and memory -- so that a parallel program gets exactly the allocation it
was written for, and a serial one no more than its core.

A shape is declared in a package's ``gradeline.yaml`` (``resources:``); the default is
the serial shape every assignment had before: one core, one process, one thread. The
scheduler sizes pilots and array tasks by shape (one pool per shape, never a 4-core
submission on a 1-core pilot) and the sandbox runs the program on exactly those cores.
Pure: the formats read it, the pipeline places by it, the judge limits by it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Exclusive = Literal["cores", "node"]
EXCLUSIVE: tuple[Exclusive, ...] = ("cores", "node")
#: a run's process and thread limit beyond its threads: the shell, a compiler's
#: helpers, a runtime's own threads (JIT, GC)
PROCESS_MARGIN = 32


@dataclass(frozen=True, slots=True)
class Shape:
    """One grading's allocation.

    :param cores: whole cores per node the program runs on (``nproc``, its affinity and
        its cgroup's cpuset all say this many).
    :param nodes: nodes of one allocation (more than one: an MPI program's ranks span
        them).
    :param ranks: MPI ranks in all (1: not launched by MPI).
    :param threads: threads per rank the program is told to use (``OMP_NUM_THREADS``);
        it may start more, oversubscribing its cores, which the feedback says.
    :param gpus: GPUs per node (Slurm GRES ``gpu``).
    :param memory_mib: memory per node (None: the package's memory limit per run).
    :param exclusive: ``cores`` (the allocation's cores, others' work beside them) or
        ``node`` (the whole node: performance tests).
    """

    cores: int = 1
    nodes: int = 1
    ranks: int = 1
    threads: int = 1
    gpus: int = 0
    memory_mib: int | None = None
    exclusive: Exclusive = "cores"

    def __post_init__(self) -> None:
        for name in ("cores", "nodes", "ranks", "threads"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        if self.gpus < 0:
            raise ValueError(f"gpus must not be negative, not {self.gpus}")
        if self.memory_mib is not None and self.memory_mib < 1:
            raise ValueError(f"memory_mib must be at least 1, not {self.memory_mib}")
        if self.ranks < self.nodes:
            raise ValueError(f"{self.nodes} nodes need at least as many ranks, not "
                             f"{self.ranks}")
        if self.ranks_per_node * self.threads > self.cores * 4:
            raise ValueError(f"{self.ranks_per_node} rank(s) of {self.threads} thread(s) "
                             f"per node on {self.cores} core(s): more than 4 per core")

    @property
    def serial(self) -> bool:
        """The shape of a serial program: one core, one rank, one thread, no GPU."""
        return self == SERIAL

    @property
    def parallel(self) -> bool:
        """More than one core or rank: its time limit is wall time on the allocation
        (CPU time summed over threads is recorded, and bounded as a guard)."""
        return self.cores > 1 or self.ranks > 1 or self.nodes > 1

    @property
    def mpi(self) -> bool:
        return self.ranks > 1

    @property
    def ranks_per_node(self) -> int:
        return -(-self.ranks // self.nodes)

    @property
    def cpus(self) -> int:
        """Cores of the whole allocation."""
        return self.cores * self.nodes

    @property
    def processes(self) -> int:
        """The process and thread limit of a run on one node: its threads, with room
        to oversubscribe (up to 4 per core) and a margin."""
        return max(self.ranks_per_node * self.threads, 4 * self.cores) + PROCESS_MARGIN

    @property
    def key(self) -> str:
        """A name for the shape's pool of pilots (a file name)."""
        parts = [f"c{self.cores}"]
        for tag, value, default in (("n", self.nodes, 1), ("r", self.ranks, 1),
                                    ("g", self.gpus, 0), ("m", self.memory_mib, None)):
            if value != default:
                parts.append(f"{tag}{value}")
        if self.exclusive == "node":
            parts.append("x")
        return "-".join(parts)

    def describe(self) -> str:
        """In words, for feedback and refusals."""
        out = [f"{self.cores} core{'s' * (self.cores != 1)}"]
        if self.nodes > 1:
            out[0] += f" on each of {self.nodes} nodes"
        if self.ranks > 1:
            out.append(f"{self.ranks} MPI ranks")
        if self.threads > 1:
            out.append(f"{self.threads} threads" + (" per rank" if self.mpi else ""))
        if self.gpus:
            out.append(f"{self.gpus} GPU{'s' * (self.gpus != 1)} per node")
        if self.memory_mib:
            out.append(f"{self.memory_mib} MiB per node")
        if self.exclusive == "node":
            out.append("whole nodes")
        return ", ".join(out)

    def on_one_node(self) -> Shape:
        """This shape with every node's cores on one node (its ranks all there): how a
        machine without a cluster runs a multi-node assignment's ranks for a check."""
        if self.nodes == 1:
            return self
        return Shape(self.cpus, 1, self.ranks, self.threads, self.gpus, self.memory_mib,
                     self.exclusive)

    def to_json(self) -> dict[str, object]:
        return {"cores": self.cores, "nodes": self.nodes, "ranks": self.ranks,
                "threads": self.threads, "gpus": self.gpus, "memory_mib": self.memory_mib,
                "exclusive": self.exclusive}


SERIAL = Shape()


@dataclass(frozen=True, slots=True)
class Capacity:
    """What a place to grade can give one allocation: its nodes that are up, the most
    usable cores and GPUs one of them has, and its name for messages."""

    nodes: int
    cores_per_node: int
    gpus_per_node: int = 0
    where: str = "this machine"
    #: MPI ranks across nodes need a scheduler to start them (Slurm's srun)
    multi_node: bool = True
    #: and gradeline running as an ordinary account: a rank must be the Slurm job's user
    #: to reach its PMIx server, and as root each run is a sandbox uid of its own
    ranks_as_job_user: bool = True


def refusal(shape: Shape, cap: Capacity) -> str:
    """Why ``cap`` cannot give ``shape`` one allocation ("" when it can): said before
    anything is graded, so a course that asks for too much learns it once, not as a
    judge error per student."""
    why = []
    if shape.cores > cap.cores_per_node:
        why.append(f"{shape.cores} cores on one node, and the most it has on one is "
                   f"{cap.cores_per_node}")
    if shape.nodes > 1 and not cap.multi_node:
        why.append(f"{shape.nodes} nodes, and it grades on one (grade it on Slurm)")
    elif shape.nodes > cap.nodes:
        why.append(f"{shape.nodes} nodes, and it has {cap.nodes} up")
    if shape.mpi and shape.nodes > 1 and cap.multi_node and not cap.ranks_as_job_user:
        why.append("MPI ranks across nodes, which must run as the Slurm job's own user, "
                   "and gradeline runs as root here (each run a sandbox uid of its own): "
                   "run gradeline as the course's ordinary account, as a site does")
    if shape.gpus > cap.gpus_per_node:
        why.append(f"{shape.gpus} GPU(s) on a node, and " + (
            f"its nodes have at most {cap.gpus_per_node}" if cap.gpus_per_node
            else "it has no GPU (Slurm GRES gpu)"))
    if not why:
        return ""
    return f"{cap.where} cannot give one grading {shape.describe()}: it asks for " \
        + "; ".join(why)
