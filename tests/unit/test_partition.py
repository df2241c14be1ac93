"""Partition advice from campaign data: the thesis's own numbers, a simulated miss
curve, and the slurm.conf lines it produces (pure pandas, no measurement)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis import partition as pa
from analysis import tables as ca


def _campaign(runs: dict[int, float], l3_mb: float | None,
              curve: dict[float, float] | None = None) -> ca.CampaignData:
    rows = [{"workload": "pipeline", "n": n, "rep": r, "warmup": False, "jobs": 40,
             "wall_s": 40 / x, "throughput": x * (1 + 0.001 * r), "raw_throughput": x,
             "mean_response_s": n / x, "p95_s": n / x, "occupancy": n, "cpu_s": 1.0}
            for n, x in runs.items() for r in range(3)]
    cg = pd.DataFrame([{"ll_mb": mb, "source": "a.cpp", "process": "cc1plus",
                        "Ir": 1_000_000, "ll_refs": 100_000, "ll_misses": int(mpki * 1000)}
                       for mb, mpki in (curve or {}).items()])
    meta = {"machine": {"l3_bytes": int(l3_mb * 2**20) if l3_mb else None}}
    return ca.CampaignData(Path("."), meta, pd.DataFrame(rows), pd.DataFrame(), cg)


def test_the_thesis_knee_gives_its_2_5_mb_per_core() -> None:
    # Baseline-16 (20 MB L3): linear to N = 8, not beyond -> 20 MB / 8 = 2.5 MB per core
    # (thesis section 10.1 and table 10.1: 8 -> 20 MB ... 64 -> 160 MB).
    x1 = 0.3
    d = _campaign({1: x1, 2: 2 * x1, 4: 4 * x1, 8: 8 * x1 * 0.95, 9: 9 * x1 * 0.85,
                   16: 11.23 * x1}, 20.0)
    ev = pa.evidence(d)
    assert ev["knee_n"] == 9
    adv = pa.advise(ev, pa.Target(l3_mb=20.0, cores=16, vendor="intel"))
    assert adv.mb_per_core == pytest.approx(2.5)
    assert adv.basis == "hardware knee of S(N)"
    assert dict(zip(adv.table["cores"], adv.table["min_L3_MB"], strict=True))[64] == 160
    assert adv.cores_per_domain == 8  # 20 MB at 2.5 MB per core
    assert "CpuSpecList=8,9,10,11,12,13,14,15" in adv.snippet
    assert "MaxCPUsPerNode=8" in adv.snippet
    assert "GRADELINE_L3_MB_PER_CORE=2.50" in adv.snippet
    assert "l3cache_as_socket" not in adv.snippet  # Intel: a socket is the L3 domain


def test_linear_hardware_caps_the_simulated_answer() -> None:
    # 2 cores on 32 MB stayed linear (16 MB/core is enough); the simulated curve flattens
    # only at 20 MB: the hardware bound decides.
    d = _campaign({1: 2.0, 2: 4.0}, 32.0, {1: 5.0, 4: 3.0, 16: 1.2, 20: 1.0})
    adv = pa.advise(pa.evidence(d), pa.Target(l3_mb=32.0, cores=8, domains=2,
                                              vendor="amd"))
    assert adv.mb_per_core == pytest.approx(16.0)
    assert "capped by the hardware" in adv.basis
    assert adv.cores_per_domain == 2
    # AMD: L3 domains become Slurm sockets, and 6 cores of each are kept out of grading
    assert "SlurmdParameters=l3cache_as_socket" in adv.snippet
    assert "Sockets=2 CoresPerSocket=8" in adv.snippet
    assert "CpuSpecList=2,3,4,5,6,7,10,11,12,13,14,15" in adv.snippet
    assert any("stays linear up to N = 2" in n for n in adv.evidence)


def test_simulation_alone_and_nothing_at_all() -> None:
    d = _campaign({}, None, {1: 5.0, 2: 3.0, 4: 1.05, 8: 1.0})
    adv = pa.advise(pa.evidence(d), pa.Target(l3_mb=32.0, cores=8))
    assert adv.mb_per_core == pytest.approx(4.0)
    assert adv.basis == "simulated miss curve only"
    assert "CpuSpecList" not in adv.snippet  # 32 MB / 4 MB serves all 8 cores
    with pytest.raises(ValueError, match="neither"):
        pa.advise(pa.evidence(_campaign({}, None)), pa.Target(l3_mb=32.0, cores=8))
