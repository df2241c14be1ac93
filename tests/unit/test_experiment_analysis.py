"""Experiment analysis on synthetic point files: the same effects as the formulas, the
grid fit, and a report page (pure pandas; the real runs are in tests/integration)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis import experiment as ea
from grader.core.errors import GradelineError
from grader.measure import experiment as ex


def _experiment(tmp: Path, kind: str, factors: dict[str, list[object]],
                value: object) -> Path:
    d = ex.Design("experiment-t", kind, factors, reps=2)
    (tmp / "experiment.json").write_text(json.dumps({"id": d.id, "design": d.to_json(),
                                                     "machine": {"cpu_model": "x"}}))
    for p, levels in enumerate(d.points):
        for rep in range(-1, 2):
            wall = value(levels, rep)  # type: ignore[operator]
            rec = {"point": p, "rep": rep, "warmup": rep < 0, "levels": levels,
                   "responses": {"throughput": 20 / wall, "wall_s": wall},
                   "monitor": {"host": "h", "rows": [[0.5, 0, "busy", 0.9],
                                                     [0.5, None, "ctxt_per_s", 100.0],
                                                     [1.0, None, "monitor_overhead", 0.001]]}}
            ex._write_atomic(ex.point_file(tmp, p, rep), rec)
    ex.write_tables(tmp)
    return tmp


def test_effects_from_point_files(tmp_path: Path) -> None:
    # throughput = 20 / wall; wall halves with 2 cores, the runtime adds 0.2 s, noise
    # +-0.05 by replication; the warm-up (rep -1) is far off and must be ignored
    def wall(lv: dict[str, object], rep: int) -> float:
        if rep < 0:
            return 100.0
        return 10.0 / int(lv["cores"]) + (0.2 if lv["runtime"] == "bwrap" else 0) + \
            (0.05 if rep else -0.05)

    out = _experiment(tmp_path, "2k", {"cores": [1, 2], "runtime": ["apptainer", "bwrap"]},
                      wall)
    d = ea.load(out)
    res = ea.effects(d, "wall_s")
    assert res is not None and res.replications == 2
    assert res.effect("cores").q == pytest.approx(-2.5)
    assert res.effect("runtime").q == pytest.approx(0.1)
    assert res.ranked()[0].name == "cores"
    assert res.effect("cores").variation > 0.95
    means = ea.point_means(d).set_index(["cores", "runtime"])
    assert means.loc[(2, "bwrap"), "wall_s"] == pytest.approx(5.2)
    page = ea.write_report(out).read_text()
    for needle in ("allocation of variation", "effects.png", "monitor.png", "cores×runtime"):
        assert needle in page, needle


def test_grid_separates_fixed_and_per_task_cost(tmp_path: Path) -> None:
    def wall(lv: dict[str, object], rep: int) -> float:
        return 2.0 + 0.5 * int(lv["work"]) / int(lv["cores"]) + 0.01 * rep

    out = _experiment(tmp_path, "grid", {"cores": [1, 2], "work": [10, 20, 40]}, wall)
    fits = ea.grid_fits(ea.load(out)).set_index("cores")
    assert fits.loc[1, "fixed_s"] == pytest.approx(2.0, abs=0.02)
    assert fits.loc[2, "per_task_s"] == pytest.approx(0.25, abs=1e-3)
    assert "grid.png" in ea.write_report(out).read_text()


def test_factor_parsing_refuses_nonsense() -> None:
    assert ex.parse_factors(["cores=1,2", "runtime=bwrap,apptainer", "l3_mb=1,16"]) == {
        "cores": [1, 2], "runtime": ["bwrap", "apptainer"], "l3_mb": [1.0, 16.0]}
    for bad, needle in [("cpus=1,2", "NAME one of"), ("cores=0,2", "not a valid level"),
                        ("runtime=docker,bwrap", "not one of"), ("accel=0,2", "not a valid")]:
        with pytest.raises(GradelineError, match=needle):
            ex.parse_factors([bad])
    with pytest.raises(GradelineError, match="twice"):
        ex.parse_factors(["cores=1,2", "cores=1,2"])
    with pytest.raises(ValueError, match="exactly two levels"):
        ex.Design("x", "2k", {"cores": [1, 2, 3]})
