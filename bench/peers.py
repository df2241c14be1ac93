"""Per-submission cost of running one submission's tests, gradeline against its peers.

The workload is the bigsum example's accepted C++ solution (compiled once in the
image) on its 10 tests. Each peer runs all 10 tests of one "submission" per sample;
the peers are interleaved (a rotating order per repetition), so a noisy machine
hits them alike. Reported: seconds per submission and the ratio to the bare loop.

Peers: bare (subprocess per test, no isolation); gradeline's container (gl-runner)
under bubblewrap and under Apptainer; a bubblewrap start per test and an Apptainer
start per test (the container-per-test design); one Apptainer start per submission
running the 10 tests in a shell loop (no per-test limits); BenchExec's RunExecutor
per test (when `benchexec` is importable); an `srun` per submission on the local
Slurm cluster (when a controller answers; its cost only, no tests).

    .venv/bin/python bench/peers.py --repeat 10 --out bench/results/peers
    (as root; BenchExec: `.venv/bin/pip install benchexec`)
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchlib import compile_sum, copy_inputs

from grader.adapters.sandbox import open_sandbox
from grader.adapters.sandbox.image import default_definition
from grader.compose.worker import sandbox_config
from grader.core.limits import Limits
from grader.formats.load import load_problem
from grader.judge.ports import RunRequest
from grader.settings import load

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = ROOT / "grader/examples/bigsum"
SUBMISSION = PROBLEM / "submissions/accepted/sum.cpp"
LIMITS = Limits(cpu_time_s=5.0, memory_bytes=256 << 20, processes=16)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results/peers")
    args = ap.parse_args()
    os.sched_setaffinity(0, [args.cpu])
    settings = load()
    config = sandbox_config(settings)
    images = config.images()
    rootfs = images.find(default_definition(), "bwrap")
    sif = images.find(default_definition(), "apptainer")
    scratch = Path(tempfile.mkdtemp(prefix="gl-peers-", dir="/var/tmp"))
    scratch.chmod(0o755)
    build = scratch / "build"
    build.mkdir(mode=0o755)
    shutil.copy(SUBMISSION, build / "sum.cpp")
    problem = load_problem(PROBLEM)
    inputs = copy_inputs(problem, build)

    boxes = {}
    for runtime in ("bwrap", "apptainer"):
        if runtime == "apptainer" and (sif is None or shutil.which("apptainer") is None):
            continue
        cfg = sandbox_config(dataclasses.replace(settings, runtime=runtime))
        box = open_sandbox(cfg, scratch, slot=args.cpu, cpus=[args.cpu], build=False)
        boxes[runtime] = box
    compile_sum(next(iter(boxes.values())), build, problem, scratch, args.cpu)
    out = scratch / "o"

    def bare() -> None:
        for inp in inputs:
            with inp.open("rb") as fin, out.open("wb") as fout:
                subprocess.run([str(build / "sol")], stdin=fin, stdout=fout, check=True)

    def gradeline(runtime: str) -> Callable[[], None]:
        box = boxes[runtime]

        def go() -> None:  # files of its own: each runner writes as its own uid
            for inp in inputs:
                m = box.run(RunRequest(["./sol"], build, LIMITS, stdout=scratch / f"o-{runtime}",
                                       stderr=scratch / f"e-{runtime}", stdin=inp,
                                       cpus=[args.cpu]))
                assert m.ok, m
        return go

    bw = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session"]

    def bwrap_per_test() -> None:
        assert rootfs is not None
        for inp in inputs:
            with inp.open("rb") as fin, out.open("wb") as fout:
                subprocess.run([*bw, "--ro-bind", str(rootfs.path), "/", "--proc", "/proc",
                                "--dev", "/dev", "--tmpfs", "/tmp", "--ro-bind", str(build),
                                "/work", "--chdir", "/work", "./sol"], stdin=fin, stdout=fout,
                               check=True)

    app = ["apptainer", "--silent", "exec", "--containall", "--cleanenv", "--no-home",
           "--net", "--network", "none", "--bind", f"{build}:/work", "--pwd", "/work"]

    def apptainer_per_test() -> None:
        assert sif is not None
        for inp in inputs:
            with inp.open("rb") as fin, out.open("wb") as fout:
                subprocess.run([*app, str(sif.path), "./sol"], stdin=fin, stdout=fout,
                               check=True)

    def apptainer_per_submission() -> None:
        assert sif is not None
        loop = "for i in $(seq 0 9); do ./sol < $i.in > /tmp/o; done"
        subprocess.run([*app, str(sif.path), "sh", "-c", loop], check=True)

    peers: dict[str, Callable[[], None]] = {"bare": bare}
    for runtime in boxes:
        peers[f"gradeline ({runtime}, one container per worker)"] = gradeline(runtime)
    if rootfs is not None:
        peers["bwrap start per test"] = bwrap_per_test
    if "apptainer" in boxes:
        peers["apptainer exec per test"] = apptainer_per_test
        peers["apptainer exec per submission (no per-test limits)"] = apptainer_per_submission
    with contextlib.suppress(ImportError):
        peers["BenchExec RunExecutor per test"] = _benchexec(inputs, build, out, args.cpu)
    if subprocess.run(["scontrol", "ping"], capture_output=True).returncode == 0:
        peers["srun per submission (dispatch only)"] = lambda: subprocess.run(
            ["srun", "-n1", "--quiet", "true"], check=True)

    for fn in peers.values():
        fn()  # warm-up: page cache, image, first container start
    samples: dict[str, list[float]] = {name: [] for name in peers}
    names = list(peers)
    for rep in range(args.repeat):
        order = names[rep % len(names):] + names[:rep % len(names)]
        for name in order:
            t0 = time.perf_counter()
            peers[name]()
            samples[name].append(time.perf_counter() - t0)
    for box in boxes.values():
        box.close()
    shutil.rmtree(scratch, ignore_errors=True)
    _report(samples, args)


def _benchexec(inputs: list[Path], build: Path, out: Path, cpu: int) -> Callable[[], None]:
    from benchexec.runexecutor import RunExecutor  # optional: pip install benchexec

    executor = RunExecutor(use_namespaces=True, dir_modes={"/": "read-only",
                                                            "/tmp": "hidden",
                                                            str(build): "read-only"})

    def go() -> None:
        for inp in inputs:
            r = executor.execute_run([str(build / "sol")], str(out), stdin=inp.open("rb"),
                                     hardtimelimit=5, memlimit=256 << 20, cores=[cpu],
                                     workingDir=str(build))
            assert r.get("exitcode") is not None and r["exitcode"].value == 0, r
    return go


def _report(samples: dict[str, list[float]], args: argparse.Namespace) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    bare = statistics.median(samples["bare"])
    rows = []
    for name, xs in samples.items():
        med = statistics.median(xs)
        rows.append({"peer": name, "median_s_per_submission": round(med, 5),
                     "min_s": round(min(xs), 5), "max_s": round(max(xs), 5),
                     "samples": len(xs), "vs_bare": round(med / bare, 2),
                     "bare_rate_fraction": round(bare / med, 3)})
    with (args.out / "peers.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"10 tests of bigsum/sum.cpp per submission, cpu {args.cpu}, {args.repeat} "
          "interleaved repetitions (median)")
    for r in rows:
        print(f"  {r['peer']:<52} {r['median_s_per_submission'] * 1000:8.1f} ms  "
              f"{r['vs_bare']:6.2f}x bare")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 0.5 * len(rows) + 1.2))
    ax.barh([r["peer"] for r in rows], [r["median_s_per_submission"] * 1000 for r in rows])
    ax.set_xscale("log")
    ax.set_xlabel("ms per submission (10 tests), median; log scale")
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(args.out / "peers.png", dpi=120)
    print(f"wrote {args.out}/peers.csv and peers.png")


if __name__ == "__main__":
    main()
