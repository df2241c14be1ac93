"""What the sandbox benchmarks share: the inputs of a problem copied where the
container can see them, and the submission compiled inside the image."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from grader.core.languages import get_language
from grader.judge.ports import RunRequest
from grader.kattis.problem import Problem


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
