"""Where the floor of a sandboxed run's cost is: each part of gl-runner's isolation
timed alone (bench/runner_floor.c, in the same container and on the same CPU as
gl-runner), against a whole run of ``true`` through gl-runner and through the judge's
side of the protocol.

    .venv/bin/python bench/runner_floor.py --cpu 1 --n 400

and this checkout's runner against another's (the image of another checkout), in
turn, the ratio taken pair by pair:

    .venv/bin/python bench/runner_floor.py --cpu 1 --n 500 --rounds 20 \
        --against <other checkout>/containers/grader.def

Rows, each adding one part to the row above (median and mean microseconds per run):
``fork`` a bare fork + exec + wait; ``pidns`` the run's own user and PID namespaces;
``mntns`` its mount, IPC and UTS namespaces and a new /proc; ``mounts`` the run's /work
and private /tmp, /var/tmp, /dev/shm; ``seal`` everything writable made read-only;
``netns`` a network namespace per run (priced only: gl-runner shares the container's).
Then gl-runner's own clock for a run of ``true`` (namespaces to report) and the
judge's (request written to reply read), interleaved with the floor's runs.
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

from sandbox_overhead import empty_run_s

from grader.adapters.sandbox import open_sandbox
from grader.adapters.sandbox.container import INSIDE
from grader.compose.worker import sandbox_config
from grader.core.limits import Limits
from grader.judge.ports import RunRequest
from grader.settings import load

HERE = Path(__file__).resolve().parent


def floor(sandbox, n: int) -> dict[str, tuple[float, float]]:
    """The floor program's rows, run in a container like gl-runner's (its work root
    bound where gl-runner has it: the one path every runtime's image has for it)."""
    bindir = Path(tempfile.mkdtemp(dir=sandbox.workroot))
    bindir.chmod(0o755)
    subprocess.run(["gcc", "-O2", "-static", "-o", str(bindir / "floor"),
                    str(HERE / "runner_floor.c")], check=True)
    (bindir / "work").mkdir(mode=0o755)
    inside = f"{INSIDE}/{bindir.name}"
    uid: int | str = "-"
    gid: int | str = "-"
    if sandbox.runner_is_root and sandbox.identity.uid is not None:  # as gl-runner maps it
        uid = sandbox.identity.uid
        gid = sandbox.identity.gid if sandbox.identity.gid is not None else uid
    argv = sandbox.container_argv([(sandbox.workroot, INSIDE)],
                                  [f"{inside}/floor", str(n), f"{inside}/work", str(uid),
                                   str(gid)])
    r = subprocess.run(argv, capture_output=True, text=True, timeout=600,
                       env=sandbox._env())
    shutil.rmtree(bindir, ignore_errors=True)
    if r.returncode != 0:
        raise SystemExit(f"runner_floor failed in the container: {r.stderr.strip()}")
    out: dict[str, tuple[float, float]] = {}
    for line in r.stdout.splitlines():
        k, *v = line.split()
        out[k] = (float(v[0]), float(v[1]) if len(v) > 1 else float("nan"))
    return out


def runner_runs(sandbox, scratch: Path, cpu: int, n: int) -> tuple[list[float], list[float]]:
    """Runs of ``true``: gl-runner's own wall time, and the judge's request to reply."""
    d = Path(tempfile.mkdtemp(dir=scratch))
    d.chmod(0o755)
    sandbox.own(d)
    req = RunRequest(["true"], d, Limits(cpu_time_s=5.0), stdout=d / "o", stderr=d / "e",
                     cpus=[cpu])
    inner, outer = [], []
    for _ in range(n):
        t0 = time.perf_counter()
        meta = sandbox.run(req)
        outer.append((time.perf_counter() - t0) * 1e6)
        inner.append(meta.wall_time_s * 1e6)
    return inner, outer


def against(args: argparse.Namespace) -> None:
    """This image's runner (A) against another's (B), in turn, in one process."""
    os.sched_setaffinity(0, [args.cpu])
    scratch = Path(tempfile.mkdtemp(prefix="gl-floor-", dir="/var/tmp"))
    scratch.chmod(0o755)
    roots = {"A": scratch / "a", "B": scratch / "b"}
    for root in roots.values():
        root.mkdir(mode=0o755)
    boxes = {"A": open_sandbox(sandbox_config(load()), roots["A"], slot=args.cpu,
                               cpus=[args.cpu])}
    os.environ["GRADELINE_IMAGE_DEF"] = str(args.against.resolve())
    boxes["B"] = open_sandbox(sandbox_config(load()), roots["B"], slot=args.cpu,
                              cpus=[args.cpu])
    ratios, med = [], {"A": [], "B": []}
    try:
        for k, box in boxes.items():
            empty_run_s(box, roots[k], args.cpu)
        for _ in range(args.rounds):
            pair = {k: statistics.median(runner_runs(box, roots[k], args.cpu, args.n)[1])
                    for k, box in boxes.items()}
            for k, v in pair.items():
                med[k].append(v)
            ratios.append(pair["A"] / pair["B"])
    finally:
        for box in boxes.values():
            box.close()
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"A = this checkout's image, B = {args.against}; {args.rounds} pairs of {args.n} "
          f"runs of true, cpu {args.cpu}, judge's request to reply")
    print(f"  median per run: A {statistics.median(med['A']):.0f} us, "
          f"B {statistics.median(med['B']):.0f} us")
    print(f"  A/B pair by pair: median {statistics.median(ratios):.3f} "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs-only", action="store_true",
                    help="only --n runs of true through gl-runner")
    ap.add_argument("--against", type=Path, metavar="DEF",
                    help="pair this image's runner with the one of image definition DEF "
                    "(another checkout's containers/grader.def): --rounds pairs of --n runs "
                    "each, in turn, and the ratio of their medians pair by pair")
    args = ap.parse_args()
    if args.against:
        return against(args)
    os.sched_setaffinity(0, [args.cpu])
    scratch = Path(tempfile.mkdtemp(prefix="gl-floor-", dir="/var/tmp"))
    scratch.chmod(0o755)
    sandbox = open_sandbox(sandbox_config(load()), scratch, slot=args.cpu, cpus=[args.cpu])
    try:
        empty_run_s(sandbox, scratch, args.cpu)  # the container is up
        if args.runs_only:
            _, outer = runner_runs(sandbox, scratch, args.cpu, args.n)
            print(f"judge, request->reply: median {statistics.median(outer):.0f} us")
            return
        rows: dict[str, list[tuple[float, float]]] = {}
        inner: list[float] = []
        outer: list[float] = []
        for _ in range(args.rounds):  # floor and runner in turn: the same noise for both
            for k, v in floor(sandbox, args.n).items():
                rows.setdefault(k, []).append(v)
            i, o = runner_runs(sandbox, scratch, args.cpu, args.n)
            inner += i
            outer += o
    finally:
        sandbox.close()
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"runtime {sandbox.runtime}, uid {os.getuid()}, cpu {args.cpu}, "
          f"{args.rounds} x {args.n} runs per row (median / mean microseconds per run)")
    for k, v in rows.items():
        if k == "mountpoints":
            continue
        print(f"  floor {k:<8} {statistics.median(m for m, _ in v):8.0f} "
              f"{statistics.fmean(a for _, a in v):8.0f}")
    print(f"  gl-runner, its clock  {statistics.median(inner):8.0f} {statistics.fmean(inner):8.0f}")
    print(f"  judge, request->reply {statistics.median(outer):8.0f} {statistics.fmean(outer):8.0f}")
    print(f"  mount points in the container: {int(rows['mountpoints'][0][0])}")


if __name__ == "__main__":
    main()
