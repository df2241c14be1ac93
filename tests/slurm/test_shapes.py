"""A batch that holds a one-core and a two-core assignment on Slurm pilots: each graded
on an allocation of its own shape, never sharing or wasting a core. Slurm's completion
log shows the pilots' allocations: the two-core assignment's pilots had two CPUs, the
serial one's one, and no pilots that ran at once held more CPUs than the node has.
The local cluster is one node of this machine's two cores while it runs (the other
tiers' two one-core nodes afterwards); an assignment wider than the node is refused
before anything is graded."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import psycopg
import pytest

from ..support import EXAMPLES, ROOT, SLURM_NODES, db_env, gl

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


@pytest.fixture(scope="module")
def two_core_node(slurm_conf):
    """The local cluster as one node of two cores; afterwards the two-node one again."""
    script = str(ROOT / "slurm/local-cluster.sh")
    r = subprocess.run([script, "start", "1"], capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        pytest.fail(f"the one-node cluster did not start: {r.stderr[-1500:]}")
    try:
        yield slurm_conf
    finally:
        subprocess.run([script, "start", str(SLURM_NODES)], capture_output=True, text=True,
                       timeout=900, check=True)


def _jobs(conf: str, ids: set[str]) -> list[dict[str, str]]:
    """This test's pilot tasks as Slurm's completion log has them."""
    log = Path(conf).parent / "jobcomp.log"
    out = []
    for line in log.read_text().splitlines():
        f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        if f.get("ArrayJobId") in ids or f.get("JobId") in ids:
            out.append(f)
    return out


def test_each_shape_grades_on_pilots_of_its_size(two_core_node, db, tmp_path):
    conf = two_core_node
    env = db_env(db, conf)
    spool = tmp_path / "spool"
    for name in ("bigsum", "primecount"):
        shutil.copytree(EXAMPLES / name, tmp_path / "pk" / name)
    subs = {("bigsum", "ann"): EXAMPLES / "bigsum/submissions/accepted/sum.c",
            ("bigsum", "ben"): EXAMPLES / "bigsum/submissions/wrong_answer/int32.cpp",
            ("primecount", "cat"): EXAMPLES / "primecount/submissions/accepted/parallel.c",
            ("primecount", "dan"): EXAMPLES / "primecount/submissions/accepted/serial.c"}
    common = ["--spool", spool, "--assignments", tmp_path / "pk"]
    for (assignment, student), src in subs.items():
        gl("submit", assignment, student, src, *common, env=env, ok=True, timeout=120)
    r = gl("run", *common, "--executor", "slurm", "--dispatch", "pilots", env=env,
           timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr

    rows = {}
    for done in (spool / "done").iterdir():
        meta = json.loads((done / "meta.json").read_text())
        rows[meta["student"]] = done
    assert set(rows) == {"ann", "ben", "cat", "dan"}, r.stdout
    with psycopg.connect(db) as c:
        got = {row[0]: (row[1], row[2]) for row in c.execute(
            "SELECT s.student, r.verdict, r.record->'runtime'->'cpus' FROM submissions s "
            "JOIN results r ON r.submission_id = s.id WHERE r.superseded_at IS NULL")}
    assert {k: v[0] for k, v in got.items()} == {"ann": "AC", "ben": "WA", "cat": "AC",
                                                 "dan": "AC"}, got
    assert [len(got[s][1]) for s in ("ann", "ben", "cat", "dan")] == [1, 1, 2, 2], got

    ids = set()
    for job_json in (spool / "pilots").rglob("job.json"):
        ids.add(str(json.loads(job_json.read_text())["job_id"]))
    jobs = _jobs(conf, ids)
    wide = [j for j in jobs if int(j["ProcCnt"]) == 2]
    narrow = [j for j in jobs if int(j["ProcCnt"]) == 1]
    assert wide and narrow and len(wide) + len(narrow) == len(jobs), jobs

    def span(j: dict[str, str]) -> tuple[datetime, datetime]:
        return datetime.fromisoformat(j["StartTime"]), datetime.fromisoformat(j["EndTime"])

    for j in jobs:  # at any time, the pilots running together fit the node's two cores
        a, b = span(j)
        together = [k for k in jobs if span(k)[0] < b and a < span(k)[1]]
        assert sum(int(k["ProcCnt"]) for k in together) <= 2, together


def test_a_shape_wider_than_any_node_is_refused_before_grading(two_core_node, db,
                                                               tmp_path):
    pkg = tmp_path / "pk" / "primecount"
    shutil.copytree(EXAMPLES / "primecount", pkg)
    text = (pkg / "gradeline.yaml").read_text().replace("{cores: 2, threads: 2}",
                                                         "{cores: 8, threads: 8}")
    (pkg / "gradeline.yaml").write_text(text)
    common = ["--spool", tmp_path / "spool", "--assignments", tmp_path / "pk"]
    gl("submit", "primecount", "eve", EXAMPLES / "primecount/submissions/accepted/serial.c",
       *common, env=db_env(db, two_core_node), ok=True, timeout=120)
    r = gl("run", *common, "--executor", "slurm", env=db_env(db, two_core_node), timeout=300)
    assert r.returncode != 0
    assert "primecount: Slurm partition" not in r.stderr  # no partition named: the cluster
    assert "the Slurm cluster cannot give one grading 8 cores, 8 threads: it asks for 8 " \
           "cores on one node, and the most it has on one is 2. Nothing was graded" \
           in r.stderr, r.stderr
    assert list((tmp_path / "spool" / "new").iterdir())  # still waiting, nothing lost
