"""Metrics adapters: parsers on real output of this machine, live availability checks."""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from grader.adapters import metrics
from grader.adapters.metrics.cachegrind import Cachegrind, ll_geometry, parse_cachegrind_out
from grader.adapters.metrics.likwid import Likwid, parse_likwid_csv
from grader.adapters.metrics.perf import PerfStat, parse_perf_stat
from grader.core.cpuset import CpuSet

FIX = Path(__file__).parent.parent / "fixtures" / "metrics"


def test_perf_stat_on_a_vm_without_pmu_reports_missing_not_zero() -> None:
    samples, missing = parse_perf_stat((FIX / "perf_stat_vm.csv").read_text())
    assert [s.event for s in samples] == ["page-faults"]
    assert samples[0].value == 5463
    assert len(missing) == 6
    assert "instructions <not supported>" in missing
    assert all(s.source == "perf" for s in samples)


def test_perf_stat_software_events_keep_units() -> None:
    samples, missing = parse_perf_stat((FIX / "perf_stat_software.csv").read_text())
    by = {s.event: s for s in samples}
    assert missing == []
    assert by["task-clock"].value == pytest.approx(7.31) and by["task-clock"].unit == "msec"
    assert by["context-switches"].value == 2 and by["cpu-migrations"].value == 0


def test_likwid_csv_documented_format() -> None:
    samples = parse_likwid_csv((FIX / "likwid_l3cache_documented.csv").read_text())
    raw_total = {s.event: s.value for s in samples if s.cpu is None}
    # the totals we compute equal the STAT table's Sum column (which we skip)
    assert raw_total["MEM_LOAD_RETIRED_L3_MISS"] == 963594
    assert raw_total["INSTR_RETIRED_ANY"] == 3813791225
    per_cpu = [s for s in samples if s.event == "MEM_LOAD_RETIRED_L3_MISS" and s.cpu is not None]
    assert {s.cpu: s.value for s in per_cpu} == {0: 461380, 1: 502214}
    ratio = [s for s in samples if s.event == "L3 miss ratio"]
    assert {s.cpu for s in ratio} == {0, 1} and all(s.unit == "metric" for s in ratio)
    assert not any("STAT" in s.event for s in samples)
    assert {s.context for s in samples} == {"L3CACHE"}


def test_likwid_csv_region_tables_and_nan() -> None:
    text = ("TABLE,Region solve,Group 1 Raw,L3,2,,\n"
            "Region Info,HWThread 3,,\n"
            "RDTSC Runtime [s],0.104,,\n"
            "call count,1,,\n"
            "Event,Counter,HWThread 3,\n"
            "L3_LINES_IN_ALL,PMC0,nan,\n"
            "INSTR_RETIRED_ANY,FIXC0,1.5e+06,\n")
    samples = parse_likwid_csv(text)
    assert [(s.event, s.cpu, s.value) for s in samples if s.cpu is not None] == \
        [("INSTR_RETIRED_ANY", 3, 1.5e6)]


def test_cachegrind_real_output() -> None:
    run = parse_cachegrind_out(gzip.decompress((FIX / "cachegrind_true.out.gz").read_bytes())
                               .decode())
    assert run.ll_bytes == 2621440
    assert run.command.endswith("true")
    assert run.counts["Ir"] > 10_000
    assert run.ll_refs == run.counts["I1mr"] + run.counts["D1mr"] + run.counts["D1mw"]
    assert 0 < run.ll_misses <= run.ll_refs


def test_cachegrind_cc1plus_summary() -> None:
    run = parse_cachegrind_out((FIX / "cachegrind_cc1plus_header.out").read_text())
    assert "cc1plus" in run.command
    assert run.counts["Ir"] == 98926882
    assert run.ll_misses == 47751 + 24702 + 65377


def test_cachegrind_rejects_other_files() -> None:
    with pytest.raises(ValueError, match="not a cachegrind"):
        parse_cachegrind_out("hello\n")


@pytest.mark.parametrize("mb", [0.5, 1, 1.25, 2, 2.5, 4, 5, 8, 10, 20])
def test_ll_geometry_valgrind_accepts(mb: float) -> None:
    size, assoc, line = ll_geometry(int(mb * 2**20))
    sets = size // (assoc * line)
    assert sets * assoc * line == size and sets & (sets - 1) == 0


def test_ll_geometry_refuses_odd_sizes() -> None:
    with pytest.raises(ValueError):
        ll_geometry(1000)


def test_cpulist_round_trip() -> None:
    assert str(CpuSet([5, 0, 1, 2, 7, 8])) == "0-2,5,7-8"
    assert CpuSet.parse("0-2,5,7-8") == (0, 1, 2, 5, 7, 8)
    assert str(CpuSet.parse(" 3 ")) == "3" and str(CpuSet()) == ""


def test_cpulist_rejects_what_is_not_one() -> None:
    for bad in ("a", "3-1", "1-x", "0,-1"):
        with pytest.raises(ValueError, match="CPU list"):
            CpuSet.parse(bad)


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
def test_cachegrind_live_wraps_children(tmp_path: Path) -> None:
    cg = Cachegrind(ll_bytes=2**20)
    assert cg.availability().usable and "simulated" in cg.availability().reason
    argv = cg.wrap(["/bin/sh", "-c", "/bin/true; /bin/true"], [0], tmp_path / "cg")
    subprocess.run(argv, check=True, timeout=120)
    runs = cg.runs(tmp_path / "cg")
    assert len(runs) == 3  # sh and both children
    assert {r.ll_bytes for r in runs} == {2**20}
    total = {s.event: s.value for s in cg.collect(tmp_path / "cg")}
    assert total["Ir"] == sum(r.counts["Ir"] for r in runs)
    assert total["LLmisses"] == sum(r.ll_misses for r in runs)


@pytest.mark.skipif(shutil.which("perf") is None, reason="perf not installed")
def test_perf_live_is_honest(tmp_path: Path) -> None:
    """Either counters work and we count instructions, or we say why not."""
    p = PerfStat()
    a = p.availability()
    if a.usable:
        out = tmp_path / "perf.csv"
        subprocess.run(p.wrap(["/bin/true"], [], out), check=True, timeout=60)
        assert any(s.event == "instructions" and s.value > 0 for s in p.collect(out))
    else:  # the reason names the cause, not just "unusable"
        assert re.search(r"<not supported>|<not counted>|exited \d+|failed to run", a.reason), \
            a.reason


@pytest.mark.skipif(shutil.which("likwid-perfctr") is None, reason="likwid not installed")
def test_likwid_live_is_honest() -> None:
    a = Likwid().availability()
    if a.usable:
        assert a.detail["group"] in ("L3CACHE", "L3", "MEM")
    else:  # the reason names the cause: no L3 group for this CPU, or the trial run failed
        causes = (r"offers no L3CACHE/L3/MEM group for this CPU \(offered: "
                  r"|likwid-perfctr -g \w+: ")
        assert re.search(causes, a.reason), a.reason


def test_missing_tool_is_named(tmp_path: Path) -> None:
    assert "not installed" in Likwid(binary="no-such-likwid").availability().reason
    assert "not installed" in PerfStat(perf="no-such-perf").availability().reason
    assert "not installed" in Cachegrind(valgrind="no-such-valgrind").availability().reason


def test_hardware_source_reports_every_attempt() -> None:
    src, report = metrics.hardware_source(("perf",))
    assert len(report) == 1 and report[0].source == "perf"
    assert (src is None) == (not report[0].usable)
