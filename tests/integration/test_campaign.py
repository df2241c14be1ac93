"""A tiny real campaign: three workloads at N = 1..2, a cachegrind sweep, the report
rendered in headless Chromium (the full-size campaign is `make campaign`)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ..support import BIN

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


def test_campaign_end_to_end(tmp_path: Path, sandbox_factory: object) -> None:
    if shutil.which("chromium") is None or shutil.which("valgrind") is None:
        if os.environ.get("GRADELINE_REQUIRE_SANDBOX") == "1":
            pytest.fail("make test installs chromium and valgrind; they are missing")
        pytest.skip("needs chromium and valgrind")
    out = tmp_path / "camp"
    r = subprocess.run([str(BIN), "campaign", "run", "--out", str(out), "--count", "6",
                        "--reps", "2", "--warmup-reps", "0", "--ll-mb", "1,4",
                        "--cachegrind-sources", "1", "--check"],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    meta = json.loads((out / "campaign.json").read_text())
    assert set(meta["machine"]["sources"]) == {"likwid", "perf", "cachegrind"}
    assert all(v["reason"] for v in meta["machine"]["sources"].values())
    rows = list(csv.DictReader((out / "runs.csv").read_text().splitlines()))
    assert {(x["workload"], x["n"]) for x in rows} == {
        (w, n) for w in ("pipeline", "bare", "cpu") for n in ("1", "2")}
    assert all(float(x["throughput"]) > 0 and int(x["jobs"]) == 6 for x in rows)
    cg = list(csv.DictReader((out / "cachegrind.csv").read_text().splitlines()))
    assert {x["ll_mb"] for x in cg} == {"1.0", "4.0"}
    assert any(x["process"] == "cc1plus" and int(x["ll_misses"]) > 0 for x in cg)
    mon = list(csv.DictReader((out / "monitor.csv").read_text().splitlines()))
    assert {x["run"] for x in mon} == {f"{w}/{n}/{k}" for w in ("pipeline", "bare", "cpu")
                                      for n in (1, 2) for k in (0, 1)}
    # every repetition watched its own cores (N=1: the first allowed CPU only) and
    # priced the watching
    first = str(min(os.sched_getaffinity(0)))
    assert {x["cpu"] for x in mon if x["run"] == "pipeline/1/0" and x["metric"] == "busy"} \
        == {first}
    assert all(0 <= float(x["value"]) < 0.05 for x in mon if x["metric"] == "monitor_overhead")
    page = (out / "report" / "index.html").read_text()
    for needle in ("scaling.png", "miss_rate.png", "inflation.png", "usl.png", "monitor.png",
                   "Operational-law checks", "Recommendation: L3 per core", "29.6",
                   "monitor_cpu_share"):
        assert needle in page, needle
    assert "5/5 images loaded" in r.stdout
    assert (out / "report" / "screenshot.png").stat().st_size > 10_000
