"""An MPI program's two ranks on the local cluster's two nodes, each in the grading
image's container with ``gl-runner --once`` confining its network (``net_mpi 1``): one
``srun --mpi=pmix -N2 -n2`` of the tests' rank launcher (tests/mpi_launch.py), under
bubblewrap and under Apptainer. The ranks reach their stepd's PMIx server and each
other (an MPI_Allreduce across the nodes) and not the controller on the same loopback.

The job runs as an ordinary user, as a site's grading account does: a rank's PMIx
client tells its stepd its uid and gid, which must be the job's, and a run is never
root (as root, the runs of a worker are its slot's uid, whose job srun cannot start).

The fake nodes share this host's loopback and address: a peer here is 127.0.0.1 on the
step's reserved ports, so what this shows is that the allowed endpoints work and another
port (slurmctld's) is refused; that another address is refused, and that nothing else
reaches out, the contract tier shows (tests/contract/test_mpi_ranks.py), and on nodes
with network stacks of their own bench/mpinet/cluster.sh."""

from __future__ import annotations

import dataclasses
import json
import os
import pwd
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from grader.core.limits import Limits
from grader.judge.ports import RunRequest

from ..mpi_launch import rank_container
from ..support import ROOT

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
USER = "gradeline-ci"  # the site tier's ordinary account (tests/site/conftest.py)
RUNNER = "/usr/local/bin/gl-runner"
LIMITS = Limits(cpu_time_s=10.0, wall_time_s=30.0, memory_bytes=None, processes=64)
#: what a rank's program needs of Open MPI and PMIx in a sandbox (bench/results/mpinet);
#: Open MPI's TCP ports are the step's, which only the task knows (the launcher's)
MPI_ENV = {"OMPI_MCA_btl": "self,tcp", "OMPI_MCA_btl_tcp_if_include": "127.0.0.1/8",
           "PMIX_MCA_gds": "hash", "OMPI_MCA_orte_top_session_dir": "/tmp", "HOME": "/tmp",
           "PATH": "/usr/local/bin:/usr/bin:/bin"}
RANK_KEYS = ("env_pass PMIX_", "env_pass SLURM_", "env_pass SLURMD_", "env_pass OMPI_",
             "net_mpi 1", "net_peer 127.0.0.1")


@pytest.fixture(scope="module")
def job_user() -> pwd.struct_passwd:
    """The ordinary account the job runs as (created when missing; root only)."""
    if os.geteuid() != 0:
        pytest.skip("running a job as another user needs root")
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", USER], check=True)
        return pwd.getpwnam(USER)


@pytest.fixture(params=["bwrap", "apptainer"])
def rank_box(request, worker_spec, sbx_tmp, sandbox_factory):
    """A sandbox of this runtime (its container compiles; the ranks get their own)."""
    from grader.adapters.sandbox import open_sandbox

    if shutil.which(request.param) is None:
        pytest.skip(f"{request.param} not installed")
    config = dataclasses.replace(worker_spec.sandbox, runtime=request.param, cgroups=False)
    box = open_sandbox(config, sbx_tmp, slot=0, cpus=[0], build=False)
    yield box
    box.close()


def test_two_ranks_on_two_nodes_reach_each_other_and_nothing_else(slurm_conf, rank_box,
                                                                    job_user, sbx_tmp):
    from grader.adapters.sandbox.runtime import AS_CALLER

    work = sbx_tmp / "work"
    work.mkdir()
    shutil.copy(HERE / "mpi_ranks.c", work)
    shutil.copy(ROOT / "tests/mpi_launch.py", sbx_tmp)
    rank_box.own(work)
    cc = rank_box.run(RunRequest(["mpicc", "-O2", "-o", "mpi_ranks", "mpi_ranks.c"], work,
                                 LIMITS, stdout=sbx_tmp / "cc.out", stderr=sbx_tmp / "cc.err",
                                 workdir_writable=True))
    assert cc.ok, (sbx_tmp / "cc.err").read_text()
    subprocess.run(["chown", "-R", f"{job_user.pw_uid}:{job_user.pw_gid}", str(sbx_tmp)],
                   check=True)
    box = rank_box.sibling()  # the same container, started by the job's user
    box.identity, box.runner_is_root = AS_CALLER, False
    ctld = re.search(r"^SlurmctldPort=(\d+)", Path(slurm_conf).read_text(), re.M)
    assert ctld
    req = RunRequest(["./mpi_ranks", ctld.group(1)], work, LIMITS, env=MPI_ENV,
                     stdout=sbx_tmp / "out.%r", stderr=sbx_tmp / "err.%r")
    request = sbx_tmp / "rank.req"
    request.write_text(box.request_text(req).removesuffix("run\n") + "\n".join(RANK_KEYS)
                       + "\nrun\n")
    argv, env = rank_container(box, [RUNNER, "--once", box.inside(request)])
    spec = sbx_tmp / "spec.json"
    spec.write_text(json.dumps({"runtime": box.runtime, "argv": argv,
                                "env": {**env, "HOME": job_user.pw_dir}}))
    r = subprocess.run(["runuser", "-u", USER, "--", "env", "-i", "PATH=/usr/bin:/bin",
                        f"HOME={job_user.pw_dir}", f"SLURM_CONF={slurm_conf}",
                        "srun", "--mpi=pmix", "-N2", "-n2", "--label", "-t", "2",
                        "/usr/bin/python3", str(sbx_tmp / "mpi_launch.py"), str(spec)],
                       capture_output=True, text=True, timeout=180, cwd=sbx_tmp)
    replies = _replies(r.stdout)
    assert r.returncode == 0 and set(replies) == {"0", "1"}, (r.stdout, r.stderr)
    nodes = set()
    for rank, reply in replies.items():
        out = (sbx_tmp / f"out.{rank}").read_text()
        assert reply["status"] == "ok" and reply.get("exit-code") == "0", (reply, out,
                                                                           _tail(sbx_tmp, rank))
        assert reply["rank"] == rank and reply["net-confinement"].startswith("supervisor")
        assert int(reply["net-refused"]) >= 1  # the probe
        m = re.fullmatch(rf"rank {rank} of 2 on (\S+) sum 3 probe (\S+)\n", out)
        assert m, (out, _tail(sbx_tmp, rank))
        assert m.group(2) == "EACCES"  # slurmctld, on the ranks' own loopback
        nodes.add(m.group(1))
    assert nodes == {"n1", "n2"}  # one rank on each node


def _replies(stdout: str) -> dict[str, dict[str, str]]:
    """srun --label's lines ("0: key: value"), as one reply per rank."""
    out: dict[str, dict[str, str]] = {}
    for line in stdout.splitlines():
        label, _, rest = line.partition(": ")
        key, sep, value = rest.partition(": ")
        if label.strip().isdigit() and sep:
            out.setdefault(label.strip(), {})[key] = value
    return out


def _tail(tmp: Path, rank: str) -> str:
    err = tmp / f"err.{rank}"
    return err.read_text()[-3000:] if err.exists() else "(no stderr)"
