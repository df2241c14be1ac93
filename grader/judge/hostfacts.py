"""What makes a timed run on this node reproducible or not, read from ``/sys`` and
``/proc`` (isolate's list, with BenchExec's sibling-aware cores and L3 partitions):
the cores' cpuset and SMT siblings, an L3 partition, the frequency governor and
turbo, ASLR, transparent huge pages, swap and the node's load.

Each fact is in force, not, or unknown (a virtual machine has no cpufreq); the
performance section of a result lists those not in force, so a course can tell a
measurement on a quiet, pinned node from one on a busy laptop. The root is a
parameter, so all of it is tested on a directory tree shaped like the real one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from grader.core.cpuset import CpuSet
from grader.core.perfresult import Fact

CPU = "sys/devices/system/cpu"


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _cpus(text: str | None) -> CpuSet | None:
    if text is None:
        return None
    try:
        return CpuSet.parse(text)
    except ValueError:
        return None


def _cpuset(root: Path) -> CpuSet | None:
    """This process's cgroup's effective CPUs (cgroup v1's cpuset controller, else
    v2's), or None."""
    for line in (_read(root / "proc/self/cgroup") or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, rel = parts
        if "cpuset" in controllers.split(","):
            return _cpus(_read(root / "sys/fs/cgroup/cpuset" / rel.lstrip("/")
                               / "cpuset.effective_cpus"))
        if not controllers and line.startswith("0:"):
            found = _cpus(_read(root / "sys/fs/cgroup" / rel.lstrip("/")
                                / "cpuset.cpus.effective"))
            if found is not None:
                return found
    return None


def _cores(root: Path, cpus: Sequence[int], online: CpuSet | None) -> Fact:
    """Whether an allocation's cpuset (Slurm's, a pilot's) narrower than the node holds
    the timed CPUs: then no one else's work is placed on them."""
    allowed = _cpuset(root)
    where = f"CPUs {CpuSet(cpus)}"
    if allowed is None or online is None:
        return Fact("cores", f"{where}; no cgroup cpuset to tell whose they are", None)
    if set(allowed) < set(online) and set(cpus) <= set(allowed):
        return Fact("cores", f"{where}, in this allocation's cpuset {allowed} of the "
                             f"node's {online}", True)
    return Fact("cores", f"{where}, with no cpuset narrower than the node's {online}: "
                         "other work may be placed on them", False)


def _smt(root: Path, cpus: Sequence[int]) -> Fact:
    outside: dict[int, list[int]] = {}
    for c in cpus:
        sib = _cpus(_read(root / CPU / f"cpu{c}/topology/thread_siblings_list"))
        if sib is None:
            return Fact("smt", "the node does not list its SMT siblings", None)
        others = [s for s in sib if s not in cpus]
        if others:
            outside[c] = others
    if outside:
        said = "; ".join(f"CPU {c} shares its core with {', '.join(map(str, s))}"
                         for c, s in outside.items())
        return Fact("smt", f"{said} (not timed, may be busy)", False)
    return Fact("smt", "no SMT sibling of a timed CPU outside them", True)


def _l3(root: Path, cpus: Sequence[int]) -> Fact:
    rc = root / "sys/fs/resctrl"
    if not (rc / "info").is_dir():
        return Fact("l3_partition", "none (resctrl not mounted)", False)
    for group in sorted(p for p in rc.iterdir() if (p / "cpus_list").is_file()):
        got = _cpus(_read(group / "cpus_list"))
        if got and set(cpus) <= set(got):
            schemata = (_read(group / "schemata") or "").replace("\n", "; ")
            return Fact("l3_partition", f"resctrl group {group.name} ({schemata})", True)
    return Fact("l3_partition", "none (no resctrl group holds the timed CPUs)", False)


def _governor(root: Path, cpus: Sequence[int]) -> Fact:
    found = {c: _read(root / CPU / f"cpu{c}/cpufreq/scaling_governor") for c in cpus}
    if all(g is None for g in found.values()):
        return Fact("governor", "no cpufreq (a virtual machine, or fixed by firmware)", None)
    names = sorted({g or "?" for g in found.values()})
    return Fact("governor", ", ".join(names), names == ["performance"])


def _turbo(root: Path) -> Fact:
    no_turbo = _read(root / CPU / "intel_pstate/no_turbo")
    if no_turbo is not None:
        return Fact("turbo", "off" if no_turbo == "1" else "on (intel_pstate)",
                    no_turbo == "1")
    boost = _read(root / CPU / "cpufreq/boost")
    if boost is not None:
        return Fact("turbo", "off" if boost == "0" else "on (cpufreq boost)", boost == "0")
    return Fact("turbo", "the node does not say", None)


def _aslr(root: Path) -> Fact:
    v = _read(root / "proc/sys/kernel/randomize_va_space")
    if v is None:
        return Fact("aslr", "the node does not say", None)
    return Fact("aslr", "off" if v == "0" else f"on (randomize_va_space {v})", v == "0")


def _thp(root: Path) -> Fact:
    text = _read(root / "sys/kernel/mm/transparent_hugepage/enabled")
    if text is None or "[" not in text:
        return Fact("thp", "the node does not say", None)
    mode = text.split("[", 1)[1].split("]", 1)[0]
    return Fact("thp", mode, mode in ("madvise", "never"))


def _swap(root: Path) -> Fact:
    text = _read(root / "proc/swaps")
    if text is None:
        return Fact("swap", "the node does not say", None)
    n = len(text.splitlines()[1:])
    return Fact("swap", f"{n} swap device(s)" if n else "none", n == 0)


def _load(root: Path, cores: int, online: CpuSet | None) -> Fact:
    """In force when the load average leaves the timed cores free: the other runnable
    work fits on the other CPUs (one more for the judge itself)."""
    text = _read(root / "proc/loadavg")
    if text is None or online is None:
        return Fact("load", "the node does not say", None)
    load1 = float(text.split()[0])
    return Fact("load", f"{load1:.2f} on {len(online)} CPUs",
                load1 <= max(len(online) - cores, 0) + 1.0)


def read_facts(cpus: Sequence[int], root: Path = Path("/")) -> tuple[Fact, ...]:
    """The facts for a timed run on ``cpus`` (in ``core.perfresult.FACTS``' order)."""
    online = _cpus(_read(root / CPU / "online"))
    if online is None and root == Path("/"):
        online = CpuSet(range(os.cpu_count() or 1))
    return (_cores(root, cpus, online), _smt(root, cpus), _l3(root, cpus),
            _governor(root, cpus), _turbo(root), _aslr(root), _thp(root),
            _swap(root), _load(root, len(cpus), online))


def _size(text: str | None) -> int | None:
    """sysfs's cache size (``16384K``, ``32M``) in bytes."""
    if not text:
        return None
    unit = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1].upper(), 1)
    digits = text[:-1] if text[-1].isalpha() else text
    return int(digits) * unit if digits.isdigit() else None


def l3_per_core(cpu: int, root: Path = Path("/")) -> int | None:
    """The share of one CPU of the L3 it sits in: the L3's size over the CPUs sharing
    it (sysfs cache index3); None where the node does not say."""
    index = root / CPU / f"cpu{cpu}/cache/index3"
    size = _size(_read(index / "size"))
    sharing = _cpus(_read(index / "shared_cpu_list"))
    if size is None or not sharing:
        return None
    return size // len(sharing)
