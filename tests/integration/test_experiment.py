"""A real 2^2·2 experiment in the grading sandbox, its resumption after a lost point,
the cores x work grid, and a simulated-L3 factor (the design's analysis is unit-tested
on synthetic data in tests/unit/test_experiment_analysis.py)."""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest

from ..support import gl

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


def _need_chromium() -> None:
    if shutil.which("chromium") is None:
        if os.environ.get("GRADELINE_REQUIRE_SANDBOX") == "1":
            pytest.fail("make test installs chromium; it is missing")
        pytest.skip("needs chromium")


def test_factorial_experiment_end_to_end_and_resumed(tmp_path: Path,
                                                     sandbox_factory: object) -> None:
    _need_chromium()
    out = tmp_path / "exp"
    argv = ["experiment", "run", "--out", str(out), "--factor", "cores=1,2", "--factor",
            "accel=0,1", "--work", "4", "--reps", "2", "--no-warmup", "--check"]
    r = gl(*argv)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    files = sorted(p.name for p in (out / "points").glob("*.json"))
    assert files == sorted(f"p{p}-r{k}.json" for p in range(4) for k in range(2))
    recs = [json.loads((out / "points" / f).read_text()) for f in files]
    for rec in recs:
        # every point graded the whole corpus on as many cores as its level says
        assert rec["jobs"] == 4
        assert len(rec["cpus"]) == rec["levels"]["cores"]
        assert rec["responses"]["throughput"] > 0
        busy = {c for _, c, m, _ in rec["monitor"]["rows"] if m == "busy"}
        assert busy == set(rec["cpus"])  # the monitor watched the point's own cores
    rows = list(csv.DictReader((out / "points.csv").read_text().splitlines()))
    assert {x["response"] for x in rows} >= {"throughput", "wall_s", "busy", "ctxt_per_s"}
    page = (out / "report" / "index.html").read_text()
    for needle in ("allocation of variation", "cores×accel", "effects.png", "monitor.png"):
        assert needle in page, needle
    assert "2/2 images loaded" in r.stdout
    ident = json.loads((out / "experiment.json").read_text())["id"]

    # a point lost (a crash mid-run): running again runs only that point
    lost = out / "points" / "p3-r1.json"
    lost.unlink()
    before = {p.name: p.stat().st_mtime_ns for p in (out / "points").glob("*.json")}
    r = gl(*argv)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert lost.exists()
    after = {p.name: p.stat().st_mtime_ns for p in (out / "points").glob("*.json")}
    assert all(after[n] == t for n, t in before.items())
    assert json.loads((out / "experiment.json").read_text())["id"] == ident


def test_cores_by_work_grid(tmp_path: Path, sandbox_factory: object) -> None:
    out = tmp_path / "grid"
    r = gl("experiment", "grid", "--out", str(out), "--cores", "1", "--work-sizes", "1,2,3",
           "--reps", "1", "--no-warmup")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    recs = [json.loads(p.read_text()) for p in (out / "points").glob("*.json")]
    assert sorted(x["levels"]["work"] for x in recs) == [1, 2, 3]
    assert sorted(x["jobs"] for x in recs) == [1, 2, 3]
    page = (out / "report" / "index.html").read_text()
    assert "Fixed overhead vs per-task cost" in page and "per_task_s" in page


def test_simulated_l3_factor_acts_on_misses(tmp_path: Path, sandbox_factory: object) -> None:
    if shutil.which("valgrind") is None:
        if os.environ.get("GRADELINE_REQUIRE_SANDBOX") == "1":
            pytest.fail("make test installs valgrind; it is missing")
        pytest.skip("needs valgrind")
    out = tmp_path / "l3"
    r = gl("experiment", "run", "--out", str(out), "--factor", "l3_mb=0.5,16", "--factor",
           "workload=bare,pipeline", "--work", "3", "--reps", "1", "--no-warmup",
           "--cachegrind-sources", "1", "--cpus", str(min(os.sched_getaffinity(0))))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    recs = {json.loads(p.read_text())["point"]: json.loads(p.read_text())
            for p in (out / "points").glob("*.json")}
    mpki = {p: rec["responses"]["ll_mpki"] for p, rec in recs.items()}
    # cachegrind is deterministic: the same compile misses more in a 0.5 MB LL than in
    # 16 MB, whichever workload ran beside it (points 0, 2: 0.5 MB; 1, 3: 16 MB)
    assert mpki[0] > mpki[1] and mpki[2] > mpki[3]
    assert recs[0]["levels"] == {"l3_mb": 0.5, "workload": "bare"}
