"""The CI-sized soak (bench/soak.py runs 10,000 on purpose): a few hundred
submissions stream into `serve` on the local Slurm while every fault hits once --
slurmd killed, PostgreSQL crashed, serve SIGKILLed, a node lost, the spool's file
system full. Afterwards each submission is graded exactly once with its real
verdict, and nothing is left running."""
import importlib.util
import os
import sys

import pytest

from ..support import ROOT, own_local_server

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


def load_soak():
    spec = importlib.util.spec_from_file_location("gl_soak", ROOT / "bench" / "soak.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gl_soak"] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_every_fault_mid_stream_loses_nothing_and_doubles_nothing(tmp_path, slurm_conf):
    if os.geteuid() != 0:
        pytest.skip("the soak mounts a tmpfs and kills the local daemons: root only")
    soak = load_soak()
    with own_local_server() as (server, _state):
        s = soak.run_soak(tmp_path, count=300, rate=5.0, faults=soak.FAULTS,
                          db_url=server.url, pg=server, timeout_s=900)
    r = s.result
    print(r, s.faults, s.submit_retries, s.peak_rss_kb, s.duration_s)
    log = (tmp_path / "serve.log").read_text()[-4000:]
    assert sorted(f["fault"] for f in s.faults) == sorted(soak.FAULTS)  # each ran
    assert (r["new_left"], r["cur_left"]) == (0, 0), log
    assert r["lost"] == 0 and r["doubled"] == 0, (r, log)
    assert r["in_database"] == r["results"] == 300 and r["unstamped"] == 0, r
    assert r["verdicts"] == {"AC": 300}, r  # no fault turned into a wrong verdict
    assert r["stray_processes"] == 0 and r["zombies"] == 0, r
    assert s.serve_exits == 0, log  # serve never ended by itself (only the kill -9)
    assert s.serve_starts == 2 and s.peak_rss_kb > 0
