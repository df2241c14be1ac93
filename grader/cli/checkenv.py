"""What this machine can do for gradeline; ``gradeline check-env`` prints it, with
the remedy for whatever is missing (isolate's check-environment, benchexec's
check_cgroups)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from grader.adapters.metrics import check_all
from grader.adapters.private_dirs import shared_dir_problem
from grader.adapters.resctrl import Resctrl
from grader.adapters.sandbox import choose_runtime
from grader.adapters.sandbox.bwrap import bwrap_works
from grader.adapters.sandbox.cgroups import CgroupManager
from grader.compose.context import Context
from grader.core.errors import GradelineError


@dataclass(frozen=True, slots=True)
class Check:
    """One capability: whether it holds, what it means, and how to fix it if not."""

    name: str
    ok: bool
    detail: str
    remedy: str = ""
    required: bool = True


def checks(ctx: Context) -> list[Check]:
    """All checks, in the order a person fixes them."""
    out: list[Check] = []
    root = os.geteuid() == 0
    out.append(Check("root", root, "running as root" if root else f"uid {os.geteuid()}",
                     "run as root for per-run cgroups and a dedicated sandbox uid",
                     required=False))
    runtime: str
    try:
        runtime, reason = choose_runtime(ctx.settings.runtime)
        out.append(Check("runtime", True, f"{runtime} ({reason})"))
    except GradelineError as e:
        runtime = "none"
        out.append(Check("runtime", False, str(e), "apt-get install bubblewrap"))
    if runtime == "bwrap":
        ok, detail = bwrap_works()
        out.append(Check("bwrap namespaces", ok, detail,
                         "enable unprivileged user namespaces (sysctl "
                         "user.max_user_namespaces=10000)"))
    cg = CgroupManager.detect()
    out.append(Check("cgroups", cg is not None, cg.describe() if cg else "none usable",
                     "run as root on a host with the memory and pids controllers; without "
                     "them limits fall back to rlimits", required=False))
    out.extend(_limit_checks(cg, runtime, root))
    if runtime in ("bwrap", "apptainer"):
        config = ctx.sandbox_config
        img = config.images().find(config.definition_path, runtime)  # type: ignore[arg-type]
        out.append(Check("image", img is not None,
                         f"{img.image_id} at {img.path}" if img else "not built",
                         "gradeline image build"))
    strap = shutil.which("mmdebstrap") or shutil.which("debootstrap")
    out.append(Check("debootstrap", strap is not None, strap or "not installed",
                     "apt-get install mmdebstrap (or debootstrap, slower; needed to build "
                     "the image without apptainer)", required=runtime == "bwrap"))
    out.append(_state_check(ctx))
    out.append(_database_check(ctx))
    out.append(_slurm_check(ctx))
    out.extend(_measurement_checks(ctx))
    return out


def _userns_ok() -> tuple[bool, str]:
    try:
        n = int(Path("/proc/sys/user/max_user_namespaces").read_text())
    except (OSError, ValueError):
        return True, "no user.max_user_namespaces (assumed allowed)"
    return n > 0, f"user.max_user_namespaces = {n}"


def _outer_bound() -> str:
    """The memory limit of our own cgroup (a Slurm job's, under task/cgroup)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, ctrls, path = line.split(":", 2)
        if "memory" in ctrls.split(","):
            d = Path("/sys/fs/cgroup/memory") / path.lstrip("/")
            for up in (d, *d.parents):
                limit = up / "memory.limit_in_bytes"
                try:
                    value = int(limit.read_text())
                except (OSError, ValueError):
                    continue
                if value < 1 << 60:
                    return f"{value >> 20} MiB in {up}"
    return "none"


def _limit_checks(cg: CgroupManager | None, runtime: str, root: bool) -> list[Check]:
    """Per limit: enforced or not, and by what (CONTRACT.md's table, for this user)."""
    ok, ns = _userns_ok()
    out = [Check("user namespaces", ok, f"{ns}: every run gets its own",
                 "sysctl user.max_user_namespaces=10000 (and on Debian "
                 "kernel.unprivileged_userns_clone=1)")]
    if runtime == "apptainer" and not root:
        fuse = os.access("/dev/fuse", os.R_OK | os.W_OK)
        out.append(Check("/dev/fuse", fuse, "users may open it (SIF via squashfuse)" if fuse
                         else "not openable", "chmod 0666 /dev/fuse (Debian's default) and "
                         "install squashfuse"))
    ctrls = set(cg.controllers) if cg else set()
    exact = {
        "memory": ("cgroup memory limit per run (OOM kill, peak charge)" if "memory" in ctrls
                   else "RLIMIT_DATA (limit + 64 MiB + the language's runtime) and RLIMIT_AS; "
                   "peak RSS measured however the run ended; MLE at a resident set at the "
                   "limit or an allocation failure (CONTRACT.md)"),
        "processes": ("cgroup pids.max per run" if "pids" in ctrls else
                      "RLIMIT_NPROC, counted per run's user namespace"),
        "cpu time": "rusage of the run + RLIMIT_CPU per process",
        "wall time": "gl-runner's clock: the run's init kills and measures the run, then "
                     "SIGKILL to the run's namespace",
        "output": "RLIMIT_FSIZE on every file",
        "tmpfs": "tmpfs size of /tmp, /var/tmp, /dev/shm",
        "outer bound": f"this process's cgroup memory limit: {_outer_bound()}",
    }
    for name, how in exact.items():
        out.append(Check(f"limit: {name}", True, how, required=False))
    return out


def _measurement_checks(ctx: Context) -> list[Check]:
    """L3 counters and cache partitioning: optional, but say plainly what is missing."""
    remedies = {"likwid": "needs hardware counters (MSR or perf_event) and a LIKWID that "
                          "knows this CPU; use cachegrind's simulated L3 instead",
                "perf": "needs a PMU (bare metal, or a VM with a virtual PMU) and "
                        "kernel.perf_event_paranoid <= 0 for -a -C",
                "cachegrind": "apt-get install valgrind"}
    out = [Check(f"counters: {a.source}", a.usable, a.reason, remedies[a.source],
                 required=False) for a in check_all()]
    ok, why = Resctrl(ctx.settings.resctrl_root, ctx.settings.sysfs_cpu).status()
    out.append(Check("L3 partitions (resctrl)", ok, why, "needs Intel RDT CAT or AMD PQoS "
                     "hardware and a mounted resctrl; jobs run unpartitioned without",
                     required=False))
    return out


def _database_check(ctx: Context) -> Check:
    server = ctx.local_server()
    if ctx.settings.db_url and not server.names(ctx.settings.db_url):
        if urlsplit(ctx.settings.db_url).password and ctx.settings.db_url_file is None:
            return Check("database", False, "GRADELINE_DB_URL holds a password, visible "
                         "in the environment of every gradeline process and its children",
                         "keep the password in a libpq passfile (~/.pgpass, 0600), or put "
                         "the URL in a 0600 file named by GRADELINE_DB_URL_FILE")
        return Check("database", True, "a site database (GRADELINE_DB_URL)")
    if server.running():
        if not server.secured():
            return Check("database", False, "the local PostgreSQL admits more than the "
                         "grading account (an earlier version's trust authentication, or "
                         f"a changed pg_hba.conf or passfile under {server.root})",
                         "gradeline db start (converts it: peer for its owner, scram for "
                         "gradeline's role; data kept)")
        return Check("database", True, f"local PostgreSQL running; only "
                     f"{server.owner_name} (peer) and {server.role} (scram-sha-256, secret "
                     f"in {server.passfile}) may connect")
    have = bool(list(Path("/usr/lib/postgresql").glob("*/bin/initdb"))) or \
        shutil.which("initdb") is not None
    return Check("database", False, "local PostgreSQL not running" if have else
                 "no PostgreSQL server binaries", "gradeline db start" if have else
                 "apt-get install postgresql, or set GRADELINE_DB_URL", required=False)


def _state_check(ctx: Context) -> Check:
    problem = shared_dir_problem(ctx.state_dir)
    if problem:
        return Check("state dir", False, problem[0], problem[1])
    return Check("state dir", True, f"{ctx.state_dir} (only its owner can write it)")


def _slurm_check(ctx: Context) -> Check:
    sched = ctx.scheduler()
    if sched is not None:
        return Check("slurm", True, f"controller answers ({sched.name}); batches run on "
                                    "Slurm pilot tasks (or one array job each)")
    return Check("slurm", False, "no Slurm controller answers; grading uses local workers",
                 "slurm/local-cluster.sh start (root), or set SLURM_CONF", required=False)
