"""What the benchmarks share: the inputs of a problem copied where the container can
see them, the submission compiled inside the image, and the command line run from the
venv (a failure ends the benchmark with its output)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from grader.core.languages import get_language
from grader.formats.problem import Problem
from grader.judge.ports import RunRequest


def copy_inputs(problem: Problem, dest: Path) -> list[Path]:
    """Each test's input as ``dest/<i>.in`` (the container sees only its work root)."""
    inputs = []
    for i, case in enumerate(problem.cases):
        inputs.append(dest / f"{i}.in")
        shutil.copy(case.input_path, inputs[-1])
    return inputs


def compile_sum(box: Any, build: Path, problem: Problem, scratch: Path, cpu: int) -> None:
    """Compile ``build/sum.cpp`` with the image's g++, as the judge would."""
    box.own(build)
    meta = box.run(RunRequest(get_language("cpp").compile_argv(["sum.cpp"]), build,
                              problem.compile_limits, stdout=scratch / "c.out",
                              stderr=scratch / "c.err", workdir_writable=True, cpus=[cpu]))
    assert meta.ok, (scratch / "c.err").read_text()


#: the venv's command line (the benchmarks run with the venv's Python)
BIN = Path(sys.executable).parent / "gradeline"


def gl(*args: str, env: dict[str, str] | None = None, timeout: float = 3600) -> str:
    """``gradeline ARGS``'s output; its stdout and stderr on failure, then exit."""
    r = subprocess.run([str(BIN), *args], capture_output=True, text=True, env=env,
                       timeout=timeout)
    if r.returncode != 0:
        sys.exit(f"gradeline {' '.join(args)} failed:\n{r.stdout}\n{r.stderr}")
    return r.stdout


def cpu_by_part(parts: Sequence[tuple[str, str]]) -> dict[str, float]:
    """CPU seconds (own and reaped children's) of every live process, by part: the
    first of ``parts`` (name, a needle in its command line) that matches."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = " " + (d / "cmdline").read_bytes().replace(b"\0", b" ").decode() + " "
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError, UnicodeDecodeError):
            continue
        part = next((p for p, needle in parts if needle in cmd), None)
        if part is not None:
            out[part] = out.get(part, 0.0) + sum(int(f) for f in fields[11:15]) / tick
    return out
