"""Time split of grading a typical C++ submission with 10 tests, and the sandbox's
overhead against running the same binary bare on the same CPU.

    .venv/bin/python bench/sandbox_overhead.py --repeat 10 --cpu 0

``--gap-ms G`` also times runs of ``true`` spaced G ms apart, as in real grading
(a test's program runs, the judge compares): costs that back-to-back runs hide (the
kernel's grace period when a run joins its cgroups) show there, with the CPU's idle
time per run from /proc/stat.

``--starts N`` also times N container starts: a fresh container (Apptainer or
bubblewrap, as configured) up to its first run of ``true`` done, against a run of
``true`` in a container already started -- what one container per test would pay.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from benchlib import compile_sum, copy_inputs

from grader.adapters.sandbox import open_sandbox
from grader.compose.worker import sandbox_config
from grader.core.languages import get_language
from grader.core.limits import Limits
from grader.formats.kattis.validate import validate_files
from grader.formats.load import load_problem
from grader.judge.judge import Judge
from grader.judge.ports import RunRequest
from grader.settings import load

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = ROOT / "grader/examples/bigsum"
SUBMISSION = PROBLEM / "submissions/accepted/sum.cpp"


def ci95(xs: list[float]) -> tuple[float, float]:
    """Mean and half-width of the 95% confidence interval (t-distribution)."""
    t = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 7: 2.45, 8: 2.36, 9: 2.31, 10: 2.26,
         15: 2.14, 20: 2.09, 30: 2.05}
    n = len(xs)
    m = statistics.fmean(xs)
    if n < 2:
        return m, float("nan")
    k = min((k for k in t if k >= n), default=30)
    return m, t[k] * statistics.stdev(xs) / n ** 0.5


def empty_run_s(sandbox, scratch: Path, cpu: int) -> float:
    """Wall time of ``true`` in the sandbox: what starting it costs."""
    d = Path(tempfile.mkdtemp(dir=scratch))
    d.chmod(0o755)
    sandbox.own(d)
    meta = sandbox.run(RunRequest(["true"], d, Limits(cpu_time_s=5.0), stdout=d / "o",
                                  stderr=d / "e", cpus=[cpu]))
    shutil.rmtree(d, ignore_errors=True)
    return meta.wall_time_s


def cpu_ticks(cpu: int) -> tuple[int, int]:
    """(busy, idle) clock ticks of one CPU so far."""
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith(f"cpu{cpu} "):
            f = [int(x) for x in line.split()[1:]]
            return f[0] + f[1] + f[2] + f[5] + f[6], f[3] + f[4]
    raise SystemExit(f"no cpu{cpu} in /proc/stat")


def spaced_runs(sandbox, scratch: Path, cpu: int, gap_s: float, n: int = 300) -> str:
    """Runs of ``true`` with ``gap_s`` between them: wall per run, and the CPU's idle."""
    d = Path(tempfile.mkdtemp(dir=scratch))
    d.chmod(0o755)
    sandbox.own(d)
    req = RunRequest(["true"], d, Limits(cpu_time_s=5.0), stdout=d / "o", stderr=d / "e",
                     cpus=[cpu])
    walls = []
    b0, i0 = cpu_ticks(cpu)
    for _ in range(n):
        t0 = time.perf_counter()
        sandbox.run(req)
        walls.append(time.perf_counter() - t0)
        time.sleep(gap_s)
    b1, i1 = cpu_ticks(cpu)
    tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
    return (f"  runs of true {gap_s * 1000:3.0f} ms apart: mean "
            f"{statistics.fmean(walls) * 1000:.2f} ms, median "
            f"{statistics.median(walls) * 1000:.2f} ms per run; cpu{cpu} busy "
            f"{(b1 - b0) * tick_ms / n:.2f} ms per run (idle, gap included: "
            f"{(i1 - i0) * tick_ms / n:.2f} ms)")


def container_starts(sandbox, scratch: Path, cpu: int, n: int) -> str:
    """Wall time from nothing to a first run of ``true`` done, in a fresh container each
    time, against a run in a container already up; interleaved."""
    first, warm = [], []
    for _ in range(n):
        box = sandbox.sibling()
        try:
            t0 = time.perf_counter()
            empty_run_s(box, scratch, cpu)
            first.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            empty_run_s(box, scratch, cpu)
            warm.append(time.perf_counter() - t0)
        finally:
            box.close()
    mf, hf = ci95(first)
    mw, hw = ci95(warm)
    return (f"  container start + first run of true: {mf * 1000:7.1f} ± {hf * 1000:5.1f} ms; "
            f"a run of true once started: {mw * 1000:5.2f} ± {hw * 1000:4.2f} ms "
            f"({n} starts)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--gap-ms", type=float, default=None,
                    help="also time runs of true spaced this far apart")
    ap.add_argument("--starts", type=int, default=0,
                    help="also time this many container starts")
    args = ap.parse_args()
    os.sched_setaffinity(0, [args.cpu])
    problem = load_problem(PROBLEM)
    assert len(problem.cases) == 10
    scratch = Path(tempfile.mkdtemp(prefix="gl-bench-", dir="/var/tmp"))
    scratch.chmod(0o755)
    sandbox = open_sandbox(sandbox_config(load()), scratch, slot=args.cpu, cpus=[args.cpu])
    judge = Judge(sandbox, scratch / "work", [args.cpu])
    judge.grade(problem, SUBMISSION)  # warm-up: page cache, validator, image

    split: dict[str, list[float]] = {k: [] for k in
                                     ("empty_run_s", "compile_s", "run_s", "validate_s",
                                      "total_s")}
    for _ in range(args.repeat):
        split["empty_run_s"].append(empty_run_s(sandbox, scratch, args.cpu))
        r = judge.grade(problem, SUBMISSION)
        assert r.verdict.value == "AC"
        for k in ("compile_s", "run_s", "validate_s", "total_s"):
            split[k].append(r.timing[k])

    # The same binary, compiled in the image, run bare vs in the sandbox, per test.
    build = scratch / "build"
    build.mkdir(mode=0o755)
    shutil.copy(SUBMISSION, build / "sum.cpp")
    compile_sum(sandbox, build, problem, scratch, args.cpu)
    bare, boxed = [], []
    lim = Limits(cpu_time_s=5.0)
    inputs = copy_inputs(problem, scratch)
    for _ in range(args.repeat):
        for case, stdin in zip(problem.cases, inputs, strict=True):
            with case.input_path.open("rb") as fin, (scratch / "bare.out").open("wb") as fout:
                t0 = time.perf_counter()
                subprocess.run([str(build / "sol")], stdin=fin, stdout=fout, check=True)
                bare.append(time.perf_counter() - t0)
            assert validate_files(scratch / "bare.out", case.answer_path, ()).accepted
            t0 = time.perf_counter()
            m = sandbox.run(RunRequest(["./sol"], build, lim, stdout=scratch / "box.out",
                                       stderr=scratch / "box.err", stdin=stdin,
                                       cpus=[args.cpu]))
            boxed.append(time.perf_counter() - t0)
            assert m.ok
    # The same compile (g++ without the image's accelerations, as the bare loop runs it),
    # bare with the host's g++ vs in the sandbox, interleaved.
    argv = get_language("cpp").compile_argv(["sum.cpp"], accelerate=False)
    cbare, cboxed = [], []
    for _ in range(max(3, args.repeat // 2)):
        t0 = time.perf_counter()
        subprocess.run(argv, cwd=build, check=True)
        cbare.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        m = sandbox.run(RunRequest(argv, build, problem.compile_limits, stdout=scratch / "c.out",
                                   stderr=scratch / "c.err", workdir_writable=True,
                                   cpus=[args.cpu]))
        cboxed.append(time.perf_counter() - t0)
        assert m.ok, (scratch / "c.err").read_text()
    spaced = [] if args.gap_ms is None else [
        spaced_runs(sandbox, scratch, args.cpu, gap) for gap in (0.0, args.gap_ms / 1000)]
    starts = container_starts(sandbox, scratch, args.cpu, args.starts) if args.starts else ""
    judge.close()
    shutil.rmtree(scratch, ignore_errors=True)

    print(f"bigsum/sum.cpp, 10 tests, runtime {sandbox.runtime}, cpu {args.cpu}, "
          f"{args.repeat} repetitions (mean ± 95% CI)")
    for k, xs in split.items():
        m, h = ci95(xs)
        print(f"  {k:<16} {m * 1000:8.1f} ± {h * 1000:5.1f} ms")
    mb, hb = ci95(bare)
    ms, hs = ci95(boxed)
    print(f"  per test run, bare binary:     {mb * 1000:6.2f} ± {hb * 1000:4.2f} ms")
    print(f"  per test run, in the sandbox:  {ms * 1000:6.2f} ± {hs * 1000:4.2f} ms")
    print(f"  sandbox overhead per run:      {(ms - mb) * 1000:6.2f} ms "
          f"({ms / mb:.1f}x the bare run)")
    cb, hcb = ci95(cbare)
    cs, hcs = ci95(cboxed)
    print(f"  per compile (g++ -O2), bare:   {cb * 1000:6.1f} ± {hcb * 1000:4.1f} ms")
    print(f"  per compile, in the sandbox:   {cs * 1000:6.1f} ± {hcs * 1000:4.1f} ms")
    print(f"  sandbox overhead per compile:  {(cs - cb) * 1000:6.1f} ms")
    for line in spaced:
        print(line)
    if starts:
        print(starts)


if __name__ == "__main__":
    main()
