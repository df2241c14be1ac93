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
from dataclasses import dataclass
from pathlib import Path

from grader.core.errors import SandboxError, SubmissionError
from grader.core.languages import detect_language
from grader.core.limits import Limits
from grader.core.result import FEEDBACK_LIMIT
from grader.core.runmeta import RunMeta, describe_termination
from grader.core.submission import load_submission
from grader.core.textfile import head, tail
from grader.core.verdict import Validation
from grader.formats.kattis.constants import substitute_tree
from grader.formats.kattis.metadata import LEGACY
from grader.formats.kattis.validate import validate_files
from grader.formats.problem import Problem, TestCase, TestGroup
from grader.judge.ports import JUDGE, Bind, RunRequest, Sandbox

ACCEPT, REJECT = 42, 43


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
                return validate_files(team_out, case.answer_path, case.validator_flags)
            except Exception as e:  # noqa: BLE001 -- a bad flag is our fault: JE
                return Validation(None, judge_error=f"default validator: {e}")
        return self._custom(problem, group, case, team_out, work, index)

    def build(self, problem: Problem) -> None:
        """Compile the custom validator now, ahead of any grading (``gradeline check``,
        ``course check``): one that does not compile raises here, with the compiler's
        message, instead of making every student's run a judge error.

        :raises SandboxError: naming the problem, with the compiler's output.
        """
        self._build(problem)

    def _build(self, problem: Problem) -> tuple[Path, list[str]]:
        """Compile the custom validator once per problem version (cached on disk)."""
        key = problem.version
        if key in self._built:
            return self._built[key]
        assert problem.validator_dir is not None
        try:
            vsub = load_submission(problem.validator_dir)
            scripts = "build" in vsub.files or "run" in vsub.files
            vlang = None if scripts else detect_language(vsub.files)
        except SubmissionError as e:  # the package's fault, never the student's
            raise SandboxError(f"output validator of {problem.short_name}: {e}") from e
        vdir = self.workroot / "validators" / hashlib.sha256(
            (key + vsub.content_hash).encode()).hexdigest()[:16]
        if not (vdir / "ok").exists():
            vdir.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(dir=vdir.parent))
            tmp.chmod(0o755)
            (tmp / "build").mkdir(mode=0o755)
            vsub.copy_to(tmp / "build")
            substitute_tree(tmp / "build", problem.constants)
            for script in ("build", "run"):  # the spec's build/run programs
                if (tmp / "build" / script).exists():
                    (tmp / "build" / script).chmod(0o755)
            self.sandbox.own(tmp)  # the runner writes the compile output beside build/
            if vlang is None:
                argv = ["./build"] if "build" in vsub.files else []
            else:
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
        run = ["./run"] if vlang is None else vlang.run_argv(vsub.files)
        self._built[key] = (vdir / "build", run)
        return self._built[key]

    def judge_dir(self, case: TestCase, work: Path, index: int) -> JudgeDir:
        """The validator's view of one test: the input and the judge's answer (read
        only) and a feedback directory it writes (kept across the passes of a test)."""
        root = work / f"judge-{index}"
        jd = JudgeDir(root, root / "data", root / "feedback")
        jd.data.mkdir(parents=True)
        jd.feedback.mkdir()
        root.chmod(0o755)
        jd.data.chmod(0o755)
        self.sandbox.own(root)  # the validator's user writes feedback and output here
        for src, name in ((case.input_path, "input"), (case.answer_path, "answer")):
            _expose(src, jd.data / name)  # after own(): a linked package file keeps its owner
        return jd

    def next_input(self, jd: JudgeDir, path: Path) -> None:
        """The next pass's input is the validator's input file too (as DOMjudge and
        BAPCtools give it: a validator may read the state of the game from it)."""
        with contextlib.suppress(FileNotFoundError):
            (jd.data / "input").unlink()
        _expose(path, jd.data / "input")

    def command(self, problem: Problem, case: TestCase) -> tuple[Path, list[str]]:
        """(build dir, argv) of the custom validator for ``case``: input, answer,
        feedback dir, then the test's validator arguments."""
        build, argv = self._build(problem)
        return build, [*argv, f"{JUDGE}/data/input", f"{JUDGE}/data/answer",
                       f"{JUDGE}/feedback/", *case.validator_flags]

    def run_custom(self, problem: Problem, case: TestCase, jd: JudgeDir, team_out: Path
                   ) -> Validation:
        """The custom validator on ``team_out`` (one pass of a test)."""
        try:
            build, full = self.command(problem, case)
        except SandboxError as e:
            return Validation(None, judge_error=str(e))
        meta = self.sandbox.run(RunRequest(
            full, build, problem.validator_limits, stdout=jd.root / "v.out",
            stderr=jd.root / "v.err", stdin=team_out, cpus=self.cpus, binds=jd.binds()))
        return judgement(meta, jd.feedback, jd.root / "v.out", jd.root / "v.err",
                         problem.validator_limits, legacy=problem.format_version in LEGACY)

    def _custom(self, problem: Problem, group: TestGroup, case: TestCase, team_out: Path,
                work: Path, index: int) -> Validation:
        return self.run_custom(problem, case, self.judge_dir(case, work, index), team_out)


@dataclass(frozen=True, slots=True)
class JudgeDir:
    """Where a custom validator reads a test's data and writes its feedback."""

    root: Path
    data: Path
    feedback: Path

    def binds(self) -> tuple[Bind, Bind]:
        return (Bind(self.data, f"{JUDGE}/data"), Bind(self.feedback, f"{JUDGE}/feedback",
                                                        True))


def read_score(path: Path) -> tuple[float | None, str | None]:
    """A score file's number, or why it is not one (a judge error)."""
    if not path.exists():
        return None, None
    text = head(path, 256).strip()
    try:
        value = float(text)
    except ValueError:
        return None, f"{path.name} does not hold a number: {text[:60]!r}"
    if value != value or value in (float("inf"), float("-inf")):
        return None, f"{path.name} does not hold a finite number: {text[:60]!r}"
    return value, None


def judgement(meta: RunMeta, feedback: Path, vout: Path, verr: Path, limits: Limits,
              *, legacy: bool = False) -> Validation:
    """An output validator's run and feedback directory as a Validation: 42 accepts, 43
    rejects, anything else is a judge error. A score file beside a reject is a judge
    error in 2023-07/2025-09 (the spec says so); the legacy format has no such rule
    (DOMjudge's scoring examples write one with every reject), so there it is ignored."""
    msg = head(feedback / "judgemessage.txt", FEEDBACK_LIMIT).strip() or \
        head(vout, 500).strip()
    score_txt, bad = read_score(feedback / "score.txt")
    multiplier, bad2 = read_score(feedback / "score_multiplier.txt")
    clean = meta.termination is None and meta.signal is None
    if clean and meta.exit_code in (ACCEPT, REJECT) and (bad or bad2):
        return Validation(None, judge_error=f"output validator: {bad or bad2}")
    if clean and meta.exit_code == ACCEPT:
        frac = score_txt if score_txt is not None and 0.0 <= score_txt <= 1.0 else multiplier
        return Validation(True, msg, score=frac, score_txt=score_txt, multiplier=multiplier)
    if clean and meta.exit_code == REJECT:
        if (score_txt is not None or multiplier is not None) and not legacy:
            return Validation(None, judge_error="output validator rejected the output but "
                                                "wrote a score file")
        return Validation(False, msg)
    why = describe_termination(meta, limits) or f"exit code {meta.exit_code}"
    return Validation(None, judge_error=f"output validator failed ({why}): {tail(verr, 500)}")
