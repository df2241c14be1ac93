"""The cluster simulator against the queueing models and its own mechanics."""

from __future__ import annotations

import json
import random

import pytest

from grader.cli import main as cli
from grader.core.finished import Finished
from grader.planning import demands as dm
from grader.planning import simulate as sim
from grader.planning.queueing import OpenModel, Station, mva
from grader.planning.trace import TraceRow

#: serve's mechanics switched off: claims at once, no pipeline delays
IDEAL = {"poll_s": 0.001, "submit_interval_s": 0.0, "in_flight": 10**9,
         "pilot_poll_s": 0.0, "pilot_idle_s": 10**9}


def _exp_demands(mean: float, n: int = 4000, seed: int = 7) -> dm.Demands:
    rng = random.Random(seed)
    return dm.Demands({"a": [rng.expovariate(1 / mean) for _ in range(n)]}, intake=(0.0,),
                       storing=(0.0,), gap=0.0, pilot_start_s=0.0)


def _poisson(rate: float, count: int, seed: int = 3) -> list[TraceRow]:
    rng, t, rows = random.Random(seed), 0.0, []
    for k in range(count):
        t += rng.expovariate(rate)
        rows.append(TraceRow(t, f"s{k % 50}", "a", "x", 0.0))
    return rows


@pytest.mark.parametrize(("cores", "rate"), [(1, 0.7), (4, 3.0)])
def test_open_loop_matches_erlang_c(cores: int, rate: float) -> None:
    d = _exp_demands(1.0)
    lay = sim.Layout(1, cores, **IDEAL)  # type: ignore[arg-type]
    p = sim.predict(d, lay, _poisson(rate, 6000), replications=3)
    model = OpenModel(rate, 1.0, cores)
    # poll granularity adds ~1 ms; sampling noise of 6000 jobs at these loads is a few %
    assert p.mean == pytest.approx(model.response_s, rel=0.12)
    assert p.p95 == pytest.approx(model.response_quantile(0.95), rel=0.12)


def test_closed_loop_matches_mva() -> None:
    d = _exp_demands(2.0)
    lay = sim.Layout(1, 2, **IDEAL)  # type: ignore[arg-type]
    rng = random.Random(5)
    students, attempts, think = 12, 150, 10.0
    rows = [TraceRow(rng.uniform(0, 5) if a == 0 else 0.0, f"s{s}", "a", "x",
                     rng.expovariate(1 / think)) for s in range(students) for a in range(attempts)]
    p = sim.predict(d, lay, rows, closed=True, replications=2)
    exact = mva([Station("cores", 2.0, 2)], think, students)[-1]
    assert p.mean == pytest.approx(exact.response_s, rel=0.12)
    assert p.throughput == pytest.approx(exact.throughput, rel=0.12)


def test_a_busy_pilot_pays_the_pickup_less_its_poll() -> None:
    # an idle pilot waits a measured pickup (its poll included); a busy one takes the
    # next ticket at once and pays only the rest (median less half the poll period)
    d = dm.Demands({"a": [1.0]}, intake=(0.0,), storing=(0.0,), gap=0.0, pilot_start_s=0.0,
                    pickup=(0.3,))
    rows = [TraceRow(100.0, "s", "a", "x", 0.0)]
    model = sim._Model(d, sim.Layout(1, 1, pilot_poll_s=0.2), rows, False, 1, ())
    assert model.pickup(idle=True) == pytest.approx(0.3)
    assert model.pickup(idle=False) == pytest.approx(0.2)
    r = sim.simulate(d, sim.Layout(1, 1, **IDEAL), rows).responses  # type: ignore[arg-type]
    assert r[0] == pytest.approx(0.3 + 1.0, abs=0.01)


def test_serve_mechanics_add_their_delays() -> None:
    # one submission at a time on an idle core: response = claim + intake + service +
    # store, the claim within one poll of the arrival (submit interval long passed)
    d = dm.Demands({"a": [1.0]}, intake=(0.5,), storing=(0.25,), gap=0.0, pilot_start_s=3.0)
    rows = [TraceRow(100.0 * k, "s", "a", "x", 0.0) for k in range(1, 6)]
    out = sim.simulate(d, sim.Layout(1, 1, pilot_idle_s=1000.0), rows)
    r = out.responses
    assert r[0] == pytest.approx(0.5 + 3.0 + 1.0 + 0.25, abs=0.36)  # a cold pilot first
    for x in r[1:]:
        assert 1.75 <= x <= 1.75 + 0.25 + 0.1 + 1e-9


def test_trace_driven_times_are_used_as_measured() -> None:
    d = dm.Demands({"a": [100.0]}, {"h1": 2.0}, intake=(0.0,), storing=(0.0,), gap=0.0,
                    pilot_start_s=0.0)
    rows = [TraceRow(0.0, "s", "a", "x", 0.0), TraceRow(1000.0, "t", "a", "y", 0.0)]
    r = sim.simulate(d, sim.Layout(1, 1, **IDEAL), rows, keys=["h1", None]).responses  # type: ignore[arg-type]
    assert r[0] == pytest.approx(2.0, abs=0.01)
    assert r[1] == pytest.approx(100.0, abs=0.01)


def test_inflation_slows_a_node_that_does_not_scale() -> None:
    d = _exp_demands(1.0)
    rows = [TraceRow(0.0, f"s{k}", "a", "x", 0.0) for k in range(400)]
    flat = sim.Layout(1, 4, dm.inflation_from_speedup({4: 4.0}), **IDEAL)  # type: ignore[arg-type]
    poor = sim.Layout(1, 4, dm.inflation_from_speedup({4: 2.0}), **IDEAL)  # type: ignore[arg-type]
    a = sim.predict(d, flat, rows, replications=2).makespan
    b = sim.predict(d, poor, rows, replications=2).makespan
    assert b / a == pytest.approx(2.0, rel=0.1)


def test_smallest_layout_meets_the_target_and_one_node_fewer_does_not() -> None:
    d = _exp_demands(1.0)
    rows = _poisson(6.0, 800)
    found = sim.smallest_layout(d, rows, 4.0, cores_per_node=2,
                                base=sim.Layout(**IDEAL), replications=2)  # type: ignore[arg-type]
    assert found is not None
    cores, pred = found
    assert pred.p95 <= 4.0
    fewer = sim.predict(d, sim.Layout(cores // 2 - 1, 2, **IDEAL), rows,  # type: ignore[arg-type]
                        replications=2)
    assert fewer.p95 > 4.0
    assert sim.smallest_layout(d, rows, 0.01, cores_per_node=2, base=sim.Layout(),
                               replications=1, max_cores=8) is None


def test_demands_from_a_measured_run() -> None:
    rows = [Finished("s", "a", "graded", "AC", 0.0, 1.0, 3.0, 3.2, node="n1", cpus="0",
                     claimed=0.5, dispatched=0.6, content_hash="h"),
            Finished("t", "a", "graded", "WA", 0.0, 3.1, 4.1, 4.3, node="n1", cpus="0",
                     claimed=0.5, dispatched=0.6, content_hash="g"),
            Finished("u", "b", "quarantined", None, 0.0, None, None, 0.1),
            # dispatched when the pilot was idle (after t finished): a pickup of 0.15 s
            Finished("v", "a", "graded", "AC", 9.0, 10.15, 11.0, 11.1, node="n1", cpus="0",
                     claimed=9.9, dispatched=10.0, content_hash="k")]
    d = dm.demands_from(rows)
    assert d.service["a"] == pytest.approx([2.0, 1.0, 0.85])
    assert d.by_content == pytest.approx({"h": 2.0, "g": 1.0, "k": 0.85})
    assert d.gap == pytest.approx(0.1)
    assert d.pickup == pytest.approx([0.15])
    assert d.pilot_start_s == pytest.approx(0.4)
    with pytest.raises(ValueError, match="no graded"):
        dm.demands_from(rows[2:3])


def _cli_inputs(tmp_path):
    demands = tmp_path / "d.json"
    demands.write_text(json.dumps({"service": {"a": [1.0]}, "by_content": {}, "intake": [0.0],
                                   "storing": [0.0], "gap": 0.0, "pilot_start_s": 0.0}))
    trace = tmp_path / "t.csv"
    trace.write_text("time,student,assignment,submission,think_s\n" +
                     "".join(f"{k},s{k},a,x{k}.cpp,0\n" for k in range(10)))
    return demands, trace


def test_plan_predict_cli_prints_and_writes_the_prediction(tmp_path, capsys):
    demands, trace = _cli_inputs(tmp_path)
    out = tmp_path / "p.json"
    assert cli.main(["plan", "predict", "--trace", str(trace), "--demands", str(demands),
                     "--cores", "2", "--replications", "2", "--json", str(out)]) == 0
    pred = json.loads(out.read_text())["prediction"]
    # ten 1 s jobs arriving 1 s apart on 2 cores: nobody waits for a core
    assert pred["cores"] == 2 and pred["throughput"] > 0
    assert 1.0 <= pred["p50"] < 3.0
    assert "0 with their own measured grading time" in capsys.readouterr().out


def test_plan_cli_refuses_malformed_input_with_a_reason(tmp_path, capsys):
    demands, trace = _cli_inputs(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text('{"service": 3}')
    for argv, needle in [
            (["plan", "predict", "--trace", str(trace), "--demands", str(bad)],
             "malformed demands"),
            (["plan", "predict", "--trace", str(tmp_path / "none.csv"), "--demands",
              str(demands)], "none.csv"),
            (["plan", "predict", "--trace", str(trace), "--demands", str(demands),
              "--speedup", "16-11"], "is not N:S"),
            (["plan", "models", "--demands", str(demands)], "give --rate")]:
        with pytest.raises(SystemExit) as e:
            cli.main(argv)
        assert e.value.code == 2
        assert needle in capsys.readouterr().err


def test_plan_models_cli_answers_open_and_closed(tmp_path, capsys):
    demands, _ = _cli_inputs(tmp_path)
    assert cli.main(["plan", "models", "--demands", str(demands), "--rate", "1.5",
                     "--cores", "2", "--target-p95", "10", "--students", "4",
                     "--think", "3"]) == 0
    out = capsys.readouterr().out
    assert "utilization 0.75" in out
    assert "fewest cores with p95 <= 10 s: 2" in out
    assert "knee N* = 8.0" in out  # (D + Z) / D_max = (1 + 3) / 0.5


def test_the_simulated_layout_runs_serves_and_the_pilots_policies() -> None:
    """The model predicts what ``gradeline serve`` does only while its claim and pilot
    policy are the ones serve and the pilots run with."""
    from grader.pipeline.serve import ServePolicy
    from grader.pipeline.slurm.tickets import PilotSpec

    lay, serve, pilot = sim.Layout(), ServePolicy(), PilotSpec()
    assert (lay.poll_s, lay.submit_interval_s, lay.batch_max, lay.in_flight) == \
        (serve.poll_s, serve.submit_interval_s, serve.batch_max, serve.in_flight)
    assert (lay.pilot_poll_s, lay.pilot_idle_s) == (pilot.poll_s, pilot.idle_s)


def test_a_saturated_control_plane_caps_throughput_at_its_cores_over_its_cpu() -> None:
    # grading that costs nothing, 20 ms of control-plane CPU per submission on 2 cores:
    # the ceiling is 2 / 0.02 = 100/s; offered 50/s passes, offered 200/s is held to it
    d = dm.Demands({"a": [0.0]}, intake=(0.0,), storing=(0.0,), gap=0.0, pilot_start_s=0.0)
    lay = {**IDEAL, "batch_max": 10**6, "host_cpu_s": 0.02, "host_cores": 2}
    light = sim.simulate(d, sim.Layout(1, 64, **lay), _poisson(50.0, 2000)).summary()
    heavy = sim.simulate(d, sim.Layout(1, 64, **lay), _poisson(200.0, 4000)).summary()
    assert light["throughput"] == pytest.approx(50.0, rel=0.1)
    assert heavy["throughput"] == pytest.approx(100.0, rel=0.05)
    assert heavy["p95"] > 10 * light["p95"]  # the backlog grows
    free = sim.simulate(d, sim.Layout(1, 64, **{**lay, "host_cores": 0}),
                        _poisson(200.0, 4000)).summary()
    assert free["throughput"] == pytest.approx(200.0, rel=0.1)  # as before: no ceiling
