"""An MPI test's ranks across nodes: one ``srun --mpi=pmix`` step of the pilot's
allocation, each task a container of the grading image on its node that shares the
node's network and runs ``gl-runner --once`` on the rank's request, which confines the
run's network to its stepd's PMIx server and its step's other ranks (CONTRACT.md, "MPI
ranks"). Each task is started by ``python -m grader.cli.rank SPEC``, which passes the
task's PMIx and Slurm variables into the container and sets Open MPI's TCP ports to the
step's reserved ones (only the task knows them). The replies, one per rank, come back
in srun's labelled output; rank 0's output is the program's, and the first rank that
failed names the run's end.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from grader.core.errors import SandboxError
from grader.core.runmeta import RunMeta, TerminationReason
from grader.core.shape import Shape
from grader.judge.ports import RunRequest
from grader.settings import TASK_PREFIXES

if TYPE_CHECKING:
    from grader.adapters.sandbox.container import ContainerSandbox

#: what srun and the containers may take beyond the run's own wall limit
GRACE_S = 30.0
LABELLED = re.compile(r"^\s*(\d+): ?(.*)$")
#: what srun's --kill-on-bad-exit does to the other ranks once one failed
KILLED_BY_SRUN = (signal.SIGKILL, signal.SIGTERM)


def mpi_ports(reserved: str) -> dict[str, str]:
    """Open MPI's TCP listeners (v4 and v6) on the step's reserved ports
    (``SLURM_STEP_RESV_PORTS``: "20000-20001" or "20000,20003"): their first run of
    consecutive ports."""
    first = reserved.split(",")[0]
    low, _, high = first.partition("-")
    count = int(high or low) - int(low) + 1
    out = {}
    for v in ("v4", "v6"):
        out[f"OMPI_MCA_btl_tcp_port_min_{v}"] = low
        out[f"OMPI_MCA_btl_tcp_port_range_{v}"] = str(count)
    return out


def task_container(spec: Mapping[str, object], task: Mapping[str, str]
                   ) -> tuple[list[str], dict[str, str]]:
    """The container of a rank's SPEC with this task's variables ``task`` (those of
    ``TASK_PREFIXES``) passed in: bubblewrap clears the environment, so they become
    ``--setenv`` before the runner's argv; Apptainer cleans it, so they go as
    ``APPTAINERENV_``."""
    argv = [str(a) for a in spec["argv"]]  # type: ignore[attr-defined]
    env = {str(k): str(v) for k, v in spec["env"].items()}  # type: ignore[attr-defined]
    passed = {k: v for k, v in task.items() if k.startswith(TASK_PREFIXES)}
    if "SLURM_STEP_RESV_PORTS" in passed:
        passed.update(mpi_ports(passed["SLURM_STEP_RESV_PORTS"]))
    if spec["runtime"] == "bwrap":
        cut = len(argv) - 1 - argv[::-1].index("--")  # the runner's, not setpriv's
        pairs = [x for k, v in passed.items() for x in ("--setenv", k, v)]
        return [*argv[:cut], *pairs, *argv[cut:]], env
    return argv, {**env, **{f"APPTAINERENV_{k}": v for k, v in passed.items()}}


def exec_task(spec: Path, task: Mapping[str, str]) -> None:
    """Become the rank's container (``task_container``): what an srun task does."""
    command, env = task_container(json.loads(spec.read_text()), task)
    os.execvpe(command[0], command, env)  # noqa: S606 -- argv, no shell: the container


def rank_request(text: str, peers: Sequence[str]) -> str:
    """A run's request made a rank's: the task's variables passed on, the network
    confined to the PMIx server and ``peers`` (the step's nodes on the MPI network)."""
    extra = [f"env_pass {p}" for p in TASK_PREFIXES] + ["net_mpi 1"] + \
        [f"net_peer {a}" for a in peers]
    body = text.removesuffix("run\n")
    return body + "\n".join(extra) + "\nrun\n"


def replies(out: str) -> dict[int, dict[str, str]]:
    """Each rank's reply (``key: value`` lines) from srun's ``--label`` output."""
    got: dict[int, dict[str, str]] = {}
    for line in out.splitlines():
        m = LABELLED.match(line)
        if not m or ": " not in m.group(2):
            continue
        key, _, value = m.group(2).partition(": ")
        got.setdefault(int(m.group(1)), {})[key.strip()] = value.strip()
    return got


def first_failure(metas: Mapping[int, RunMeta]) -> tuple[int, RunMeta] | None:
    """The rank whose end ended the run: one killed by a signal (not srun's kill of the
    others that follows), else one that exited non-zero; None when all exited 0."""
    bad = [(r, m) for r, m in sorted(metas.items()) if m.signal or m.exit_code]
    own = [(r, m) for r, m in bad if m.signal not in KILLED_BY_SRUN]
    return (own or bad)[0] if bad else None


def combined(metas: Mapping[int, RunMeta], shape: Shape) -> RunMeta:
    """One RunMeta for the run: rank 0's output sizes, the slowest rank's wall time,
    every rank's CPU time, the largest memory of one rank, the first limit any rank
    reached, and the first failed rank's exit named in ``message``."""
    zero = metas.get(0) or next(iter(metas.values()))
    out = replace(zero, wall_time_s=max(m.wall_time_s for m in metas.values()),
                  cpu_time_s=round(sum(m.cpu_time_s for m in metas.values()), 6),
                  memory_bytes=max((m.memory_bytes or 0 for m in metas.values()),
                                   default=0) or None)
    limit = next((m.termination for _, m in sorted(metas.items()) if m.termination), None)
    failed = first_failure(metas)
    if failed is not None:
        rank, m = failed
        why = f"rank {rank} was killed by {m.signal_name}" if m.signal else \
            f"rank {rank} exited with code {m.exit_code}"
        out = replace(out, exit_code=m.exit_code, signal=m.signal, message=why)
    if len(metas) < shape.ranks:
        missing = sorted(set(range(shape.ranks)) - set(metas))
        out = replace(out, message=(out.message + "; " if out.message else "") +
                      f"no report from rank(s) {', '.join(map(str, missing))}")
    return replace(out, termination=limit or out.termination)


def run_ranks(box: ContainerSandbox, req: RunRequest, shape: Shape) -> RunMeta:
    """Run ``req`` as ``shape.ranks`` MPI ranks on the pilot's nodes (module docstring).

    :raises SandboxError: when srun or a rank's runner failed (a judge error).
    """
    stdout, stderr = Path(f"{req.stdout}.r%r"), Path(f"{req.stderr}.r%r")
    rank_req = replace(req, stdout=stdout, stderr=stderr)
    request = req.stdout.with_name(req.stdout.name + ".request")
    request.write_text(rank_request(box.request_text(rank_req), req.net_peers))
    argv, env = box.rank_container([box.RUNNER, "--once", box.inside(request)])
    spec = req.stdout.with_name(req.stdout.name + ".rank.json")
    spec.write_text(json.dumps({"argv": argv, "env": env, "runtime": box.runtime}))
    box.own(request.parent)
    srun = ["srun", "--mpi=pmix", f"--nodes={shape.nodes}", f"--ntasks={shape.ranks}",
            f"--ntasks-per-node={shape.ranks_per_node}",
            f"--cpus-per-task={max(1, shape.cores // shape.ranks_per_node)}",
            "--label", "--kill-on-bad-exit=1", "--quiet",
            sys.executable, "-m", "grader.cli.rank", str(spec)]
    timeout = box.wall_kill_s(req.limits) + GRACE_S
    try:
        r = subprocess.run(srun, capture_output=True, text=True, timeout=timeout, check=False,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        raise SandboxError(f"srun of the MPI ranks did not end within {timeout:g} s") from e
    except OSError as e:
        raise SandboxError(f"cannot start srun for the MPI ranks: {e}") from e
    got = replies(r.stdout)
    errors = [f"rank {k}: {v.get('error', '?')}" for k, v in got.items()
              if v.get("status") != "ok"]
    if errors or not got:
        raise SandboxError("the MPI ranks' runners failed: " + ("; ".join(errors) or
                           f"srun said: {(r.stderr or r.stdout)[-800:]}"))
    metas = {k: box.meta(replace(req, stderr=Path(str(stderr).replace("%r", str(k)))), v)
             for k, v in got.items()}
    for src, dst in ((stdout, req.stdout), (stderr, req.stderr)):
        rank0 = Path(str(src).replace("%r", "0"))
        if rank0.exists():
            shutil.move(rank0, dst)
    meta = combined(metas, shape)
    if meta.termination is None and any(m.termination is TerminationReason.WALL_TIME
                                         for m in metas.values()):
        meta = replace(meta, termination=TerminationReason.WALL_TIME)
    return meta
