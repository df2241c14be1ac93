"""Kattis output validators: the default one (in-process, outside every sandbox) and
custom ones (compiled once per package version, run in a sandbox of their own that
sees the input and the judge's answer, never the student's).

Exit codes: 42 accept, 43 reject (any other ending is a judge error, never the
student's fault). ``judgemessage.txt`` is feedback; ``score.txt`` a fraction.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from grader.core.errors import SandboxError
from grader.core.languages import detect_language
from grader.core.limits import Limits
from grader.core.problem import Problem, TestCase, TestGroup
from grader.core.result import FEEDBACK_LIMIT
from grader.core.runmeta import RunMeta
from grader.core.submission import load_submission
from grader.core.validate import validate_files
from grader.core.verdict import Validation
from grader.judge.ports import JUDGE, Bind, RunRequest, Sandbox

ACCEPT, REJECT = 42, 43


def head(path: Path, limit: int) -> str:
    """The first ``limit`` bytes of a file as text ("" when it is missing)."""
    try:
        with path.open("rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


def tail(path: Path, limit: int) -> str:
    """The last ``limit`` bytes of a file as text ("" when it is missing)."""
    try:
        with path.open("rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - limit))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def describe_termination(meta: RunMeta, limits: Limits) -> str:
    """Why a run ended, in words for the student's feedback."""
    t = meta.termination
    if t is None:
        if meta.signal is not None:
            return f"killed by {meta.signal_name}"
        return f"exit code {meta.exit_code}" if meta.exit_code else ""
    if t == "cpu-time":
        return f"CPU time {meta.cpu_time_s:.2f} s over the {limits.cpu_time_s:g} s limit"
    if t == "wall-time":
        return f"wall time over the {limits.wall_s:g} s limit"
    if t == "memory":
        return f"memory over the {(limits.memory_bytes or 0) / 2**20:g} MiB limit"
    return f"output over the {(limits.output_bytes or 0) / 2**20:g} MiB limit"


def _expose(src: Path, dst: Path) -> None:
    """``src`` readable by the validator's user at ``dst``: a hard link when the package
    file is world-readable already (no copy per test), else a copy made readable (a
    link's mode is the package file's own, which is not ours to change)."""
    with contextlib.suppress(OSError):
        if src.stat().st_mode & 0o004:
            os.link(src, dst)
            return
    shutil.copyfile(src, dst)
    dst.chmod(0o644)


class Validators:
    """Validates one test's output for a judge (its sandbox, CPUs and scratch space)."""

    def __init__(self, sandbox: Sandbox, workroot: Path, cpus: Sequence[int]) -> None:
        self.sandbox = sandbox
        self.workroot = workroot
        self.cpus = list(cpus)
        self._built: dict[str, tuple[Path, list[str]]] = {}

    def validate(self, problem: Problem, group: TestGroup, case: TestCase, team_out: Path,
                 work: Path, index: int) -> Validation:
        if problem.validation == "default":
            try:
                return validate_files(team_out, case.answer_path, group.validator_flags)
            except Exception as e:  # noqa: BLE001 -- a bad flag is our fault: JE
                return Validation(None, judge_error=f"default validator: {e}")
        return self._custom(problem, group, case, team_out, work, index)

    def _build(self, problem: Problem) -> tuple[Path, list[str]]:
        """Compile the custom validator once per problem version (cached on disk)."""
        key = problem.version
        if key in self._built:
            return self._built[key]
        assert problem.validator_dir is not None
        vsub = load_submission(problem.validator_dir)
        vlang = detect_language(vsub.files)
        vdir = self.workroot / "validators" / hashlib.sha256(
            (key + vsub.content_hash).encode()).hexdigest()[:16]
        if not (vdir / "ok").exists():
            vdir.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(dir=vdir.parent))
            tmp.chmod(0o755)
            (tmp / "build").mkdir(mode=0o755)
            vsub.copy_to(tmp / "build")
            self.sandbox.own(tmp / "build")
            argv = vlang.compile_argv(vsub.files)
            if argv:
                meta = self.sandbox.run(RunRequest(
                    argv, tmp / "build", problem.compile_limits, stdout=tmp / "compile.out",
                    stderr=tmp / "compile.err", workdir_writable=True, cpus=self.cpus))
                if not meta.ok:
                    msg = head(tmp / "compile.err", 2000)
                    shutil.rmtree(tmp, ignore_errors=True)
                    raise SandboxError(f"output validator of {problem.short_name} does not "
                                       f"compile: {msg}")
            (tmp / "ok").touch()
            with contextlib.suppress(OSError):
                tmp.rename(vdir)  # another process may have won the race: use theirs
            shutil.rmtree(tmp, ignore_errors=True)
        self._built[key] = (vdir / "build", vlang.run_argv(vsub.files))
        return self._built[key]

    def _custom(self, problem: Problem, group: TestGroup, case: TestCase, team_out: Path,
                work: Path, index: int) -> Validation:
        try:
            build, argv = self._build(problem)
        except SandboxError as e:
            return Validation(None, judge_error=str(e))
        jdir = work / f"judge-{index}"
        data, feedback = jdir / "data", jdir / "feedback"
        data.mkdir(parents=True)
        feedback.mkdir()
        jdir.chmod(0o755)
        data.chmod(0o755)
        self.sandbox.own(jdir)  # the validator's user writes feedback and output here
        for src, name in ((case.input_path, "input"), (case.answer_path, "answer")):
            _expose(src, data / name)  # after own(): a linked package file keeps its owner
        full = [*argv, f"{JUDGE}/data/input", f"{JUDGE}/data/answer", f"{JUDGE}/feedback/",
                *group.validator_flags]
        meta = self.sandbox.run(RunRequest(
            full, build, problem.validator_limits, stdout=jdir / "v.out", stderr=jdir / "v.err",
            stdin=team_out, cpus=self.cpus,
            binds=(Bind(data, f"{JUDGE}/data"), Bind(feedback, f"{JUDGE}/feedback", True))))
        msg = head(feedback / "judgemessage.txt", FEEDBACK_LIMIT).strip() or \
            head(jdir / "v.out", 500).strip()
        score: float | None = None
        with contextlib.suppress(ValueError):
            s = float(head(feedback / "score.txt", 64).strip() or "nan")
            if 0.0 <= s <= 1.0:
                score = s
        clean = meta.termination is None and meta.signal is None
        if clean and meta.exit_code == ACCEPT:
            return Validation(True, msg, score=score)
        if clean and meta.exit_code == REJECT:
            return Validation(False, msg)
        why = describe_termination(meta, problem.validator_limits) or \
            f"exit code {meta.exit_code}"
        return Validation(None, judge_error=f"output validator failed ({why}): "
                                            f"{tail(jdir / 'v.err', 500)}")
