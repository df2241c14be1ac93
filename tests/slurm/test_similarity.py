"""The similarity report (issue #29): one Slurm job per language at the course's bulk
priority finds a planted copied pair (names changed) among the counting submissions,
leaves out a pair that shares only the starter code, and shows on the staff page."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from grader.adapters.browser import render_check

from ..support import BIN, EXAMPLES, running_web

pytestmark = [pytest.mark.slow]

STARTER = """#include <cstdio>
#include <vector>
// Starter code handed out to every student: read the input, print the answer.
struct Reader {
    std::vector<long long> values;
    long long count = 0;
    bool read() {
        if (scanf("%lld", &count) != 1) return false;
        values.resize(count);
        for (long long i = 0; i < count; i++) {
            if (scanf("%lld", &values[i]) != 1) return false;
        }
        return true;
    }
    long long at(long long i) const { return values[i]; }
    long long size() const { return count; }
};
static void answer(long long v) { printf("%lld\\n", v); }
"""
ANN = """
long long solve(const Reader& r) {
    long long total = 0;
    for (long long i = 0; i < r.size(); i++) {
        long long x = r.at(i);
        if (x > 0) total += x; else total -= -x;
    }
    return total;
}
int main() { Reader r; if (!r.read()) return 0; answer(solve(r)); return 0; }
"""
BEN = ANN.replace("total", "acc").replace("solve", "compute").replace(" x", " item")
CAT = """
int main() {
    Reader r;
    if (!r.read()) return 0;
    long long s = 0, k = r.size();
    while (k-- > 0) s += r.at(k);
    answer(s);
}
"""
DAN = """
long long sum_range(const Reader& r, long long lo, long long hi) {
    if (hi - lo == 1) return r.at(lo);
    long long mid = (lo + hi) / 2;
    return sum_range(r, lo, mid) + sum_range(r, mid, hi);
}
int main() { Reader r; if (!r.read() || r.size() == 0) { answer(0); return 0; }
             answer(sum_range(r, 0, r.size())); return 0; }
"""


def test_a_copied_pair_is_found_and_shared_starter_code_is_not(tmp_path, db, slurm_conf):
    shutil.copytree(EXAMPLES / "bigsum", tmp_path / "bigsum")
    (tmp_path / "starter.cpp").write_text(STARTER)
    env = {"GRADELINE_DB_URL": db, "SLURM_CONF": slurm_conf,
           "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path)}

    def course(starter: bool) -> Path:
        a = {"name": "bigsum", "package": "bigsum", "deadline": "2026-01-01 00:00"}
        if starter:
            a["starter"] = "starter.cpp"
        p = tmp_path / f"course-{starter}.yaml"
        p.write_text(yaml.safe_dump({"course": f"sim-{tmp_path.name}", "timezone": "UTC",
                                     "assignments": [a]}))
        return p

    with_starter, without = course(True), course(False)
    opts = ["--spool", str(tmp_path / "spool"), "--course-file", str(with_starter)]

    def gl(*args: str) -> subprocess.CompletedProcess[str]:
        r = subprocess.run([str(BIN), *args], capture_output=True, text=True, env=env,
                           timeout=900, check=False)
        assert r.returncode == 0, f"{args}\n{r.stdout}\n{r.stderr}"
        return r

    for student, body in (("ann", ANN), ("ben", BEN), ("cat", CAT), ("dan", DAN)):
        src = tmp_path / f"{student}.cpp"
        src.write_text(STARTER + body)
        gl("submit", "bigsum", student, str(src), *opts)
    run = gl("run", *opts, "--executor", "local")
    assert "graded 4" in run.stderr + run.stdout

    found = gl("similarity", "bigsum", *opts, "--executor", "slurm")
    assert "one Slurm job per language at nice 1000" in found.stderr
    pairs = [line.split("\t")[1:3] for line in found.stdout.splitlines()]
    assert pairs == [["ann", "ben"]], found.stdout
    jobs = Path(slurm_conf).with_name("jobcomp.log").read_text()
    assert "Name=gradeline-similarity-bigsum JobState=COMPLETED" in jobs

    # the control: without the starter code left out, cat and dan look alike too
    control = gl("similarity", "bigsum", "--spool", str(tmp_path / "spool"),
                 "--course-file", str(without), "--executor", "local")
    assert ["cat", "dan"] in [line.split("\t")[1:3] for line in control.stdout.splitlines()]

    gl("similarity", "bigsum", *opts, "--executor", "local")  # the report staff see
    _staff_page(tmp_path, opts, env)


def _staff_page(tmp_path: Path, opts: list[str], env: dict[str, str]) -> None:
    with running_web(opts, env) as base:
        shots = Path(os.environ.get("GRADELINE_SCREENSHOTS") or tmp_path)
        shots.mkdir(parents=True, exist_ok=True)
        listed = str(render_check(f"{base}/a/bigsum/similarity", shots / "staff-similarity.png",
                                  title="bigsum: similarity", size=(1100, 500))["dom"])
        assert "ann" in listed and "ben" in listed and "starter code left out" in listed
        assert "cat" not in listed.split("pairs at or above")[1]
        pair = render_check(f"{base}/a/bigsum/similarity/0", shots / "staff-pair.png",
                            title="ann and ben", size=(1100, 900))
        assert "compute" in str(pair["dom"]) and "solve" in str(pair["dom"])
        assert int(str(pair["screenshot_bytes"])) > 5000
