"""A performance test's cache reading, the pure part and its adapters: the inflation
factor on tables, the record's round trip (older records without a reading still
load), the one line a student reads, the page's table, and the counts a hardware
source or cachegrind's output give."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from grader.adapters.metrics.cachegrind import ll_geometry
from grader.adapters.metrics.judging import SimulatedCounter, events_of, fitted
from grader.adapters.metrics.likwid import parse_likwid_csv
from grader.adapters.web.design import muted
from grader.adapters.web.perfchart import cache_section, count
from grader.core.perfcache import CacheCount, CacheEvents, CacheReading, inflation
from grader.core.perfresult import Performance
from grader.core.samples import Sample
from grader.course.perfview import shown_cache

FIX = Path(__file__).parent.parent / "fixtures" / "metrics"
NOTE = "no hardware counters on this node (likwid and perf found none usable): " \
       "cachegrind's simulated L3"


@pytest.mark.parametrize(("n", "one", "work", "factor"), [
    (1000, 1000, 1, 1.0),  # the same work, the same misses: nothing inflated
    (3100, 1000, 1, 3.1),  # the same input on 4 cores missing 3.1 times as often
    (4000, 1000, 4, 1.0),  # the thesis's form: 4 copies, 4 times the work and misses
    (12400, 1000, 4, 3.1),  # ... and 3.1 times as many per copy
    (500, 1000, 1, 0.5),  # more L3 on more cores: fewer misses
    (10, 0, 1, None),  # nothing missed on one core: no ratio
    (float("nan"), 10, 1, None),
])
def test_the_inflation_factor_is_count_n_over_work_times_count_1(
        n: float, one: float, work: float, factor: float | None) -> None:
    got = inflation(n, one, work)
    assert got == (None if factor is None else pytest.approx(factor))


def reading(sub: dict[int, float], ref: dict[int, float], failed: str = "") -> CacheReading:
    return CacheReading("cachegrind", NOTE, "cache.in", tuple(
        CacheCount(n, CacheEvents(sub[n], sub[n] * 10, 1e6), CacheEvents(ref[n]),
                   8 * 2**20 * n) for n in sorted(sub)), failed)


def test_a_reading_inflates_over_the_fewest_cores_and_survives_its_record() -> None:
    r = reading({1: 1000, 2: 1500, 4: 3100}, {1: 1000, 2: 1000, 4: 1100})
    assert r.inflations("submission") == ((1, 1.0), (2, 1.5), (4, 3.1))
    assert r.inflations("reference")[-1] == (4, pytest.approx(1.1))
    assert r.simulated and r.counts[-1].submission.memory_bytes == 3100 * 64
    record = {"points": 10.0, "max_points": 100.0, "gate": "", "measurements": [],
              "items": []}
    old = Performance.from_json(record)  # a record from before cache readings
    assert old.cache is None and "cache" not in old.to_json()
    new = Performance.from_json({**record, "cache": r.to_json()})
    assert new.cache == r
    assert Performance.from_json(json.loads(json.dumps(new.to_json()))) == new
    with pytest.raises(ValueError, match="unknown source 'papi'"):
        CacheReading.from_json({**r.to_json(), "source": "papi"})


@pytest.mark.parametrize(("sub", "said"), [
    ({1: 1000, 4: 3100}, "L3 misses grow 3.1x from 1 to 4 cores (the reference's 1.10x): "
                         "the working set no longer fits the L3 per core"),
    ({1: 1000, 4: 1300}, "L3 misses grow 1.30x from 1 to 4 cores (the reference's 1.10x): "
                         "somewhat more goes to memory"),
    ({1: 1000, 4: 1050}, "L3 misses stay level from 1 to 4 cores (1.05x; the reference's "
                         "1.10x): the working set fits the L3 per core"),
    ({1: 1000, 4: 600}, "L3 misses fall to 0.60x from 1 to 4 cores"),
    ({1: 0, 4: 20}, "no L3 misses on 1 core: no growth to read"),
    ({4: 20}, "no cache reading (one core count only"),
])
def test_one_line_reads_the_growth_of_the_misses(sub: dict[int, float], said: str) -> None:
    shown = shown_cache(reading(sub, {1: 1000, 4: 1100}))
    assert shown.reading.startswith(said), shown.reading
    assert shown.note == NOTE and shown.input == "cache.in"


def test_a_reading_cut_short_says_why() -> None:
    failed = "the submission's run on cache.in at 4 cores: wall time limit exceeded"
    assert shown_cache(reading({1: 10}, {1: 10}, failed)).reading == \
        f"no cache reading: {failed}"
    two = shown_cache(reading({1: 10, 2: 10}, {1: 10, 2: 10}, failed)).reading
    assert two.startswith("L3 misses stay level") and two.endswith(f"(cut short: {failed})")


def test_the_page_says_the_reading_its_source_and_the_counts() -> None:
    html = cache_section(shown_cache(reading({1: 1000, 4: 3_100_000}, {1: 1000, 4: 1100})),
                         "c1")
    assert "<strong>Caches:</strong> L3 misses grow 3100.0x" in html
    assert "no hardware counters on this node" in html and "cache.in" in html
    assert "Counted on the small input cache.in: no hardware counters" in html
    assert '<caption id="c1"><span>L3 misses on cache.in</span></caption>' in html
    assert "Simulated L3" in html and ">32 MiB<" in html and ">3.1 M<" in html
    assert "style=" not in html
    assert (count(None), count(8412.0), count(4.5e9)) == (
        muted(), "8\u2009412", "4.5 G")


def test_hardware_counts_come_from_perf_or_likwids_l3_group() -> None:
    perf = [Sample("perf", "LLC-load-misses", 300.0), Sample("perf", "LLC-store-misses", 100.0),
            Sample("perf", "LLC-loads", 4000.0), Sample("perf", "instructions", 1e6)]
    assert events_of(perf) == CacheEvents(400.0, 4000.0, 1e6)
    likwid = parse_likwid_csv((FIX / "likwid_l3cache_documented.csv").read_text())
    got = events_of(likwid)  # the totals: hits and misses of both hardware threads
    assert got == CacheEvents(963594.0, 4351726.0 + 963594.0, 3813791225.0)
    with pytest.raises(ValueError, match="no L3 miss event"):
        events_of([Sample("perf", "page-faults", 5.0)])


def test_cachegrind_counts_every_process_of_the_run_with_an_l3_valgrind_takes(
        tmp_path: Path) -> None:
    text = gzip.decompress((FIX / "cachegrind_true.out.gz").read_bytes()).decode()
    (tmp_path / "cachegrind.out.11").write_text(text)
    (tmp_path / "cachegrind.out.12").write_text(text)
    (tmp_path / "valgrind.11.log").write_text("")
    sim = SimulatedCounter()
    got = sim.read(tmp_path)
    assert got.l3_accesses is not None and got.instructions is not None
    assert 0 < got.l3_misses <= got.l3_accesses and got.instructions > 20_000
    argv = sim.wrap(["./a.out"], 16 * 2**20)
    assert argv[0] == "valgrind" and "--LL=16777216,16,64" in argv and argv[-1] == "./a.out"
    assert "--cachegrind-out-file=/gl/counters/cachegrind.out.%p" in argv
    assert sim.note == NOTE and sim.probe == ("valgrind", "--version")
    size, _, _ = fitted(3 * 2**20 + 64)  # no geometry fits: the largest 16-way below
    assert size == 2 * 2**20 and ll_geometry(size)
    with pytest.raises(ValueError, match="no output"):
        sim.read(tmp_path / "nothing")
