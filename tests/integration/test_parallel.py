"""A parallel program in the sandbox, on the cores its package's ``resources:`` ask for:
``nproc``, its affinity and ``OMP_NUM_THREADS`` agree with the shape (and a serial
package's run on the same judge sees one core); a deadlock is TLE that says it made no
progress; a program that starts more threads than its cores is run and told so; a
test that passes only sometimes says so instead of a plain WA; a judge with fewer CPUs
than the shape is a judge error, never the student's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from grader.core.verdict import Verdict
from grader.formats.load import load_problem
from grader.judge.judge import Judge

pytestmark = pytest.mark.sandbox

WHAT_IT_SEES = r"""
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void) {
    cpu_set_t set;
    sched_getaffinity(0, sizeof set, &set);
    const char *env = getenv("OMP_NUM_THREADS");
    int threads = 0;
#pragma omp parallel
#pragma omp atomic
    threads++;
    printf("%d %s %d %d\n", CPU_COUNT(&set), env ? env : "-", omp_get_max_threads(),
           threads);
    return 0;
}
"""
MANY_THREADS = r"""
#include <omp.h>
#include <stdio.h>
int main(void) {
    int n = 0;
#pragma omp parallel num_threads(8)
    {
        volatile long spin = 0;  /* long enough to be seen (a tick is 20 ms) */
        for (long i = 0; i < 30000000; i++) spin += i;
#pragma omp atomic
        n++;
    }
    printf("%d\n", n == 8 ? 2 : 0);
    return 0;
}
"""
DEADLOCK = r"""
#include <omp.h>
#include <stdio.h>
int main(void) {
    omp_lock_t l;
    omp_init_lock(&l);
    omp_set_lock(&l);
    omp_set_lock(&l);
    puts("2");
    return 0;
}
"""
#: right on odd seconds of the clock's microseconds, wrong otherwise: a "race"
FLAKY = r"""
#include <stdio.h>
#include <sys/time.h>
int main(void) {
    struct timeval t;
    gettimeofday(&t, NULL);
    printf("%d\n", (t.tv_usec / 7) % 2 ? 2 : 3);
    return 0;
}
"""


def _package(root: Path, resources: dict[str, int] | None, answer: str = "2 2 2 2") -> Path:
    pkg = root / "seen"
    (pkg / "data" / "secret").mkdir(parents=True)
    (pkg / "problem.yaml").write_text("name: What a run sees\nlimits: {memory: 256}\n")
    gl: dict[str, object] = {"time_limit_s": 3.0, "languages": ["c"]}
    if resources is not None:
        gl["resources"] = resources
    else:  # OpenMP by the package's own flags: gradeline adds none for a serial shape
        gl["compile_flags"] = {"c": ["-O2", "-fopenmp"]}
    (pkg / "gradeline.yaml").write_text(yaml.safe_dump(gl))
    (pkg / "data" / "secret" / "1.in").write_text("\n")
    (pkg / "data" / "secret" / "1.ans").write_text(answer + "\n")
    return pkg


def _grade(judge: Judge, pkg: Path, source: str, tmp: Path):
    sub = tmp / "sub" / "main.c"
    shutil.rmtree(sub.parent, ignore_errors=True)
    sub.parent.mkdir(parents=True)
    sub.write_text(source)
    return judge.grade(load_problem(pkg), sub)


def test_a_run_sees_exactly_its_shapes_cores(wide_judge, tmp_path):
    r = _grade(wide_judge, _package(tmp_path, {"cores": 2, "threads": 2}), WHAT_IT_SEES,
               tmp_path)
    assert r.verdict is Verdict.AC, [(t.verdict, t.feedback, t.output) for t in r.tests]
    # the same judge, a serial package: one core, no OMP_NUM_THREADS set by us
    serial = tmp_path / "serial"
    serial.mkdir()
    r = _grade(wide_judge, _package(serial, None, "1 - 1 1"), WHAT_IT_SEES, tmp_path)
    assert r.verdict is Verdict.AC, [(t.verdict, t.feedback, t.output) for t in r.tests]


def test_more_threads_than_cores_run_and_are_told(wide_judge, tmp_path):
    r = _grade(wide_judge, _package(tmp_path, {"cores": 2, "threads": 2}, "2"),
               MANY_THREADS, tmp_path)
    assert r.verdict is Verdict.AC, r.tests
    assert "oversubscribed" in r.tests[0].feedback and "on 2 core(s)" in r.tests[0].feedback


def test_a_deadlock_is_tle_without_cpu_progress(wide_judge, tmp_path):
    r = _grade(wide_judge, _package(tmp_path, {"cores": 2}, "2"), DEADLOCK, tmp_path)
    assert r.verdict is Verdict.TLE, r.tests
    assert "no CPU progress" in r.tests[0].feedback, r.tests[0].feedback
    assert r.tests[0].wall_time_s < 3.0 + 1.5  # the wall limit ended it, not a CPU guard


def test_a_test_that_passes_sometimes_says_so(wide_judge, tmp_path):
    pkg = _package(tmp_path, {"cores": 2}, "2")
    (pkg / "gradeline.yaml").write_text(yaml.safe_dump({
        "time_limit_s": 3.0, "languages": ["c"], "resources": {"cores": 2}, "reruns": 12}))
    for _ in range(5):  # the first run must fail for the reruns to happen
        r = _grade(wide_judge, pkg, FLAKY, tmp_path)
        if r.verdict is Verdict.WA:
            break
    assert r.verdict is Verdict.WA, r.tests
    assert "of 13 runs: likely a data race" in r.tests[0].feedback, r.tests[0].feedback


def test_a_judge_with_fewer_cpus_than_the_shape_is_a_judge_error(judge, tmp_path):
    outcome = judge.grade_job(_job(_package(tmp_path, {"cores": 2}), tmp_path))
    assert outcome.result.reason.startswith("this worker has 1 CPU(s)"), outcome.result


def _job(pkg: Path, tmp: Path):
    from grader.core.jobs import GradingJob

    src = tmp / "main.c"
    src.write_text(WHAT_IT_SEES)
    return GradingJob(pkg, src)
