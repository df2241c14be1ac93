"""What this machine can do for gradeline, detected once; ``gradeline check-env`` prints it."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Check:
    """One capability: whether it holds, what it means, and how to fix it if not."""

    name: str
    ok: bool
    detail: str
    remedy: str = ""
    required: bool = True


@functools.cache
def bwrap_works() -> tuple[bool, str]:
    """Whether bubblewrap can create its namespaces here."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False, "bwrap not installed"
    r = subprocess.run([bwrap, "--unshare-all", "--ro-bind", "/", "/", "true"],
                       capture_output=True, check=False, timeout=30)
    return r.returncode == 0, r.stderr.decode(errors="replace").strip() or "ok"


def checks() -> list[Check]:
    """All checks, in the order a person fixes them."""
    from grader.image import ImageStore, default_definition
    from grader.sandbox import choose_runtime
    from grader.sandbox.cgroups import CgroupManager

    out: list[Check] = []
    root = os.geteuid() == 0
    out.append(Check("root", root, "running as root" if root else f"uid {os.geteuid()}",
                     "run as root for per-run cgroups and a dedicated sandbox uid",
                     required=False))
    try:
        runtime, reason = choose_runtime()
        out.append(Check("runtime", True, f"{runtime} ({reason})"))
    except Exception as e:  # noqa: BLE001 -- reported, not raised
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
    if runtime in ("bwrap", "apptainer"):
        store = ImageStore()
        img = store.find(default_definition(), runtime)  # type: ignore[arg-type]
        out.append(Check("image", img is not None,
                         f"{img.image_id} at {img.path}" if img else "not built",
                         "gradeline image build"))
    out.append(Check("debootstrap", shutil.which("debootstrap") is not None,
                     shutil.which("debootstrap") or "not installed",
                     "apt-get install debootstrap (needed to build the image without "
                     "apptainer)", required=runtime == "bwrap"))
    out.append(_database_check())
    out.append(_slurm_check())
    out.extend(_measurement_checks())
    return out


def _measurement_checks() -> list[Check]:
    """L3 counters and cache partitioning: optional, but say plainly what is missing."""
    from grader.metrics import check_all
    from grader.resctrl import Resctrl

    remedies = {"likwid": "needs hardware counters (MSR or perf_event) and a LIKWID that "
                          "knows this CPU; use cachegrind's simulated L3 instead",
                "perf": "needs a PMU (bare metal, or a VM with a virtual PMU) and "
                        "kernel.perf_event_paranoid <= 0 for -a -C",
                "cachegrind": "apt-get install valgrind"}
    out = [Check(f"counters: {a.source}", a.usable, a.reason, remedies[a.source],
                 required=False) for a in check_all()]
    ok, why = Resctrl().status()
    out.append(Check("L3 partitions (resctrl)", ok, why, "needs Intel RDT CAT or AMD PQoS "
                     "hardware and a mounted resctrl; jobs run unpartitioned without",
                     required=False))
    return out


def _database_check() -> Check:
    from grader.image import default_state_dir
    from grader.pgserver import LocalServer

    if os.environ.get("GRADELINE_DB_URL"):
        return Check("database", True, "GRADELINE_DB_URL is set (site database)")
    server = LocalServer(default_state_dir())
    if server.running():
        return Check("database", True, f"local PostgreSQL running ({server.url})")
    have = bool(list(Path("/usr/lib/postgresql").glob("*/bin/initdb"))) or \
        shutil.which("initdb") is not None
    return Check("database", False, "local PostgreSQL not running" if have else
                 "no PostgreSQL server binaries", "gradeline db start" if have else
                 "apt-get install postgresql, or set GRADELINE_DB_URL", required=False)


def _slurm_check() -> Check:
    from grader.image import default_state_dir
    from grader.scheduler import detect_scheduler

    sched = detect_scheduler(default_state_dir())
    if sched is not None:
        return Check("slurm", True, f"controller answers ({sched.name}); batches run as "
                                    "Slurm array jobs")
    return Check("slurm", False, "no Slurm controller answers; grading uses local workers",
                 "slurm/local-cluster.sh start (root), or set SLURM_CONF", required=False)
