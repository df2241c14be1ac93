"""Partition advice for admins: how much L3 per core grading needs, how many cores of
each L3 domain to schedule, and the slurm.conf lines that say so -- each with the
measurement behind it.

The evidence, strongest first:

1. **Hardware scaling**: S(N) of the pipeline from a campaign on the node being
   tuned. Where efficiency S(N)/N drops below 0.9 at N = k, the L3 per core there
   (L3 / k) is too little and L3 / (k - 1) was still enough (the thesis's table 10.1
   came from exactly this). If S(N) stays linear up to the node's cores, L3 / N_max
   per core is *enough* (an upper bound on what is needed).
2. **Hardware counters** (likwid/perf, where the machine has them): the L3-miss
   inflation Count(N) / (N Count(1)) at each N.
3. **Simulated L3** (cachegrind): g++'s misses per 1000 instructions against the LL
   size; the smallest size within ``tolerance`` of the largest size's is where more
   cache stops helping. On any machine, but a simulation: it says where misses stop
   falling, not what they cost in throughput.

The recommendation takes (1) when it found a knee, else the smaller of (3) and the
linear bound of (1) -- a size the hardware showed to scale linearly is enough even if
the simulation says misses still fall -- and falls back to (3) alone.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from analysis import tables as ca


@dataclass(frozen=True)
class Target:
    """The partition being planned (default: the machine the campaign ran on).

    :param l3_mb: L3 of one domain (a CCX / CCD on AMD, a socket on Intel), MB.
    :param cores: cores sharing that L3.
    """

    l3_mb: float
    cores: int
    domains: int = 1
    nodes: str = "grader[01-04]"
    vendor: str = "unknown"  # amd | intel | unknown
    threads_per_core: int = 1
    memory_mb: int | None = None
    partition: str = "grading"


@dataclass
class Advice:
    mb_per_core: float
    basis: str  # which evidence decided
    cores_per_domain: int  # to schedule per L3 domain
    evidence: list[str] = field(default_factory=list)
    table: pd.DataFrame = field(default_factory=pd.DataFrame)
    snippet: str = ""

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["table"] = self.table.to_dict(orient="records")
        return d


def evidence(d: ca.CampaignData, tolerance: float = 0.10) -> dict[str, Any]:
    """What the campaign measured that bears on L3 per core."""
    out: dict[str, Any] = {}
    machine = d.meta.get("machine", {})
    l3 = machine.get("l3_bytes")
    out["l3_mb_measured_node"] = l3 / 2**20 if l3 else None
    if not d.runs.empty:
        summ = ca.throughput_summary(d.runs)
        pipe = summ[summ["workload"] == "pipeline"]
        if not pipe.empty:
            out["n_max"] = int(pipe["N"].max())
            out["efficiency"] = {int(r.N): float(r.efficiency) for r in pipe.itertuples()}
            out["knee_n"] = ca.knee(summ, "pipeline")
    if not d.cachegrind.empty:
        whole = ca.miss_curve(d.cachegrind)
        mb, flat = ca.enough_l3_per_core(whole, tolerance)
        out["cachegrind_mb"], out["cachegrind_flattened"] = mb, flat
        out["cachegrind_sizes"] = sorted(float(x) for x in whole["ll_mb"])
        if "cc1plus" in set(d.cachegrind["process"]):
            out["cc1plus_mb"] = ca.enough_l3_per_core(
                ca.miss_curve(d.cachegrind, "cc1plus"), tolerance)[0]
    hw = ca.counter_inflation(d.counters, d.runs)
    if not hw.empty:
        miss = hw[hw["event"].str.contains("miss", case=False)]
        out["hw_inflation"] = {f"{r.event}@N={int(r.n)}": float(r.inflation)
                               for r in miss.itertuples()}
    out["tolerance"] = tolerance
    return out


def advise(ev: dict[str, Any], target: Target) -> Advice:
    """MB of L3 per core, cores per L3 domain, the table and the slurm.conf lines."""
    notes: list[str] = []
    l3_node = ev.get("l3_mb_measured_node")
    knee, n_max = ev.get("knee_n"), ev.get("n_max")
    hw_need: float | None = None
    hw_enough: float | None = None
    if l3_node and knee:
        hw_need = l3_node / max(knee - 1, 1)
        notes.append(f"hardware: S(N) of the pipeline leaves linear (efficiency < 0.9 beyond "
                     f"its 95% CI) at "
                     f"N = {knee} on {l3_node:g} MB of L3: {l3_node / knee:.2f} MB/core is "
                     f"too little, {hw_need:.2f} MB/core was enough")
    elif l3_node and n_max:
        hw_enough = l3_node / n_max
        eff = ev.get("efficiency", {}).get(n_max)
        notes.append(f"hardware: S(N) of the pipeline stays linear up to N = {n_max} "
                     f"(efficiency {eff:.2f}, 0.9 or more within its 95% CI) on "
                     f"{l3_node:g} MB of L3: {hw_enough:.2f} MB/core "
                     "is enough; the campaign could not show where less stops being enough "
                     "(run it on a node with more cores per L3)")
    for k, v in sorted(ev.get("hw_inflation", {}).items()):
        notes.append(f"hardware counters: inflation {k} = {v:.2f}")
    if "hw_inflation" not in ev:
        notes.append("hardware counters: none usable on the campaign's machine (no "
                     "inflation measured)")
    cg = ev.get("cachegrind_mb")
    if cg is not None:
        flat = ev.get("cachegrind_flattened")
        sizes = ev.get("cachegrind_sizes", [])
        notes.append(
            f"simulated (cachegrind): g++'s LL misses per 1000 instructions come within "
            f"{ev['tolerance']:.0%} of their floor at {cg:g} MB/core" if flat else
            f"simulated (cachegrind): g++'s misses still fall at the largest simulated size "
            f"({max(sizes):g} MB): it wants >= {cg:g} MB/core")
        if "cc1plus_mb" in ev:
            notes.append(f"simulated: cc1plus alone (the compiler proper) flattens at "
                         f"{ev['cc1plus_mb']:g} MB/core; the rest is the linker and driver")
    if hw_need is not None:
        mb, basis = hw_need, "hardware knee of S(N)"
    elif cg is not None and hw_enough is not None:
        mb = min(cg, hw_enough)
        basis = ("simulated miss curve, capped by the hardware's linear scaling"
                 if hw_enough < cg else "simulated miss curve (within the hardware's "
                 "linear range)")
    elif cg is not None:
        mb, basis = cg, "simulated miss curve only"
    elif hw_enough is not None:
        mb, basis = hw_enough, "hardware linear scaling only (an upper bound)"
    else:
        raise ValueError("the campaign has neither runs with S(N) nor a cachegrind sweep")
    per_domain = max(1, min(target.cores, math.floor(target.l3_mb / mb + 1e-9)))
    table = ca.recommendation(mb)
    return Advice(mb, basis, per_domain, notes, table, slurm_snippet(target, mb, per_domain,
                                                                     basis))


def slurm_snippet(t: Target, mb: float, per_domain: int, basis: str) -> str:
    """slurm.conf lines for the partition (Slurm 22.05 names)."""
    sockets = t.domains
    lines = [f"# gradeline: {mb:.2f} MB of L3 per grading core ({basis});",
             f"# each L3 domain of {t.l3_mb:g} MB and {t.cores} cores serves "
             f"{per_domain} grading core(s) at that share."]
    if t.vendor == "amd":
        lines += ["# AMD: several L3 domains (CCX) per socket. Make each one a Slurm socket",
                  "# so --ntasks-per-socket and core selection follow L3 boundaries:",
                  "SlurmdParameters=l3cache_as_socket"]
    node = (f"NodeName={t.nodes} Sockets={sockets} CoresPerSocket={t.cores} "
            f"ThreadsPerCore={t.threads_per_core}")
    if t.memory_mb:
        node += f" RealMemory={t.memory_mb}"
    idle = t.cores - per_domain
    if idle > 0:
        spec = []
        for d in range(sockets):
            base = d * t.cores * t.threads_per_core
            spec += [base + c * t.threads_per_core
                     for c in range(per_domain, t.cores)]
        lines += [f"# keep {idle} core(s) of every L3 domain out of grading (core "
                  "specialization; needs TaskPlugin=task/cgroup and ConstrainCores=yes):"]
        node += f" CpuSpecList={','.join(map(str, spec))}"
    lines.append(node)
    lines.append(f"PartitionName={t.partition} Nodes={t.nodes} "
                 f"MaxCPUsPerNode={per_domain * sockets * t.threads_per_core} "
                 "OverSubscribe=NO State=UP")
    rdt = t.vendor == "intel"
    lines += ["# the prolog's L3 partition per job (resctrl CAT where the CPU has it; "
              "without RDT it logs and runs):",
              "Prolog=/opt/gradeline/slurm/prolog.sh",
              "Epilog=/opt/gradeline/slurm/epilog.sh",
              f"# in the prolog's environment: GRADELINE_L3_MB_PER_CORE={mb:.2f}"
              + ("" if rdt else "  (takes effect only on RDT hardware)")]
    return "\n".join(lines) + "\n"
