"""The cachegrind L3 sweep: g++ compiling distinct corpus sources under cachegrind at
several simulated L3 sizes per core -- the hardware-independent half of the L3
question (which process of g++ misses, and where the miss curve flattens)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from collections.abc import Callable, Sequence
from concurrent.futures import as_completed
from pathlib import Path
from typing import Any

from grader.adapters.metrics.cachegrind import Cachegrind
from grader.core.errors import GradelineError
from grader.measure.workloads import Job, pinned_pool

DEFAULT_LL_MB = (0.5, 1.0, 2.0, 2.5, 4.0, 8.0, 16.0, 20.0)


def cachegrind_sources(jobs: Sequence[Job], k: int) -> list[Job]:
    """Up to ``k`` distinct C++ sources, one per assignment first (g++ is the subject)."""
    seen: set[str] = set()
    picked: list[Job] = []
    for j in sorted(jobs, key=lambda j: (Path(j.problem).name, j.source)):
        if not j.source.endswith(".cpp"):
            continue
        h = hashlib.sha256(Path(j.source).read_bytes()).hexdigest()
        if h in seen or any(Path(p.problem).name == Path(j.problem).name for p in picked):
            continue
        seen.add(h)
        picked.append(j)
    for j in jobs:  # top up with other distinct sources when assignments ran out
        if len(picked) >= k:
            break
        if j.source.endswith(".cpp"):
            h = hashlib.sha256(Path(j.source).read_bytes()).hexdigest()
            if h not in seen:
                seen.add(h)
                picked.append(j)
    return picked[:k]


def _compile_kind(command: str) -> str:
    exe = Path(command.split()[0]).name if command else "?"
    return "driver" if exe == "g++" else exe


def cachegrind_sweep(jobs: Sequence[Job], ll_mb: Sequence[float], cpus: Sequence[int],
                     workdir: Path, progress: Callable[[int, int], None] | None = None,
                     extra_flags: Sequence[str] = ()) -> list[dict[str, Any]]:
    """g++ compiling each source under cachegrind with each simulated L3 size
    (``extra_flags``, e.g. ``-fuse-ld=gold``, are added to g++'s)."""
    tasks = [(mb, j) for mb in ll_mb for j in jobs]

    def one(mb: float, j: Job) -> list[dict[str, Any]]:
        cg = Cachegrind(int(mb * 2**20))
        tag = hashlib.sha256(f"{mb}:{j.source}".encode()).hexdigest()[:12]
        out = workdir / "cachegrind" / tag
        shutil.rmtree(out, ignore_errors=True)
        argv = ["g++", "-O2", "-std=gnu++17", "-pipe", *extra_flags, "-o", str(out / "a.out"),
                j.source]
        p = subprocess.run(cg.wrap(argv, [], out), capture_output=True, text=True,
                           timeout=1800, check=False)
        if not any(out.glob("cachegrind.out.*")):
            raise GradelineError(f"cachegrind produced nothing for {j.source}: {p.stderr[-300:]}")
        rows = []
        for r in cg.runs(out):
            rows.append({"ll_mb": mb, "ll_bytes": r.ll_bytes, "assoc": cg.geometry[1],
                         "source": Path(j.source).name, "assignment": Path(j.problem).name,
                         "process": _compile_kind(r.command), "Ir": r.counts.get("Ir", 0),
                         "Dr": r.counts.get("Dr", 0), "Dw": r.counts.get("Dw", 0),
                         "ll_refs": r.ll_refs, "ll_misses": r.ll_misses,
                         "ll_read_misses": r.counts.get("ILmr", 0) + r.counts.get("DLmr", 0),
                         "ll_write_misses": r.counts.get("DLmw", 0)})
        shutil.rmtree(out, ignore_errors=True)
        return rows

    rows: list[dict[str, Any]] = []
    with pinned_pool(cpus) as ex:
        futs = [ex.submit(one, mb, j) for mb, j in tasks]
        for i, f in enumerate(as_completed(futs), 1):
            rows.extend(f.result())
            if progress:
                progress(i, len(futs))
    return sorted(rows, key=lambda r: (r["ll_mb"], r["source"], r["process"]))
