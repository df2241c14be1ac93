"""Grades one submission against one problem: compile, run every test, validate, score.

Pure of Slurm and SQL: it only needs a Sandbox (grader.sandbox.base). Sandbox
failures become JE (judge error), never a student verdict.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from grader.compile_cache import CompileCache, cache_key
from grader.errors import SandboxError
from grader.languages import Language, detect_language, get_language
from grader.limits import Limits
from grader.problem import Problem, TestCase, TestGroup
from grader.result import (
    FEEDBACK_LIMIT,
    CompileResult,
    SubmissionResult,
    TestResult,
    score_submission,
)
from grader.sandbox.base import JUDGE, Bind, RunRequest, Sandbox
from grader.sandbox.meta import RunMeta
from grader.submission import Submission, load_submission
from grader.validate import validate_files
from grader.verdict import Validation, Verdict, determine_verdict, submission_verdict

log = logging.getLogger(__name__)

ACCEPT, REJECT = 42, 43  # Kattis output-validator exit codes
COMPILE_OUTPUT_LIMIT = 8000


def _tail(path: Path, limit: int) -> str:
    try:
        with path.open("rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - limit))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _head(path: Path, limit: int) -> str:
    try:
        with path.open("rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


def _link_or_copy(src: Path, dst: Path) -> None:
    """Expose ``src`` under a neutral name: the program can readlink its stdin
    (/proc/self/fd/0), which must not reveal the test's name or the package path."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def _describe_termination(meta: RunMeta, limits: Limits) -> str:
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


class Judge:
    """Grades submissions with one sandbox on a fixed set of CPUs.

    :param workroot: scratch directory (per-submission dirs are made and removed here).
    :param cpus: CPUs every run is pinned to (None: those this process may use).
    """

    def __init__(self, sandbox: Sandbox, workroot: Path, cpus: Sequence[int] | None = None,
                 *, keep_workdirs: bool = False, compile_cache: bool | None = None) -> None:
        self.sandbox = sandbox
        self.workroot = workroot
        self.cpus = list(cpus) if cpus is not None else sorted(os.sched_getaffinity(0))
        self.keep_workdirs = keep_workdirs
        self._validators: dict[str, tuple[Path, list[str]]] = {}
        self._start_cost: float | None = None
        if compile_cache is None:  # GRADELINE_COMPILE_CACHE=0 turns it off (measurements)
            compile_cache = os.environ.get("GRADELINE_COMPILE_CACHE", "1") != "0"
        self.cache = CompileCache(workroot / "compile-cache") if compile_cache else None
        workroot.mkdir(parents=True, exist_ok=True)
        workroot.chmod(0o711)

    # -- measurement ---------------------------------------------------------
    def sandbox_start_s(self, *, fresh: bool = False) -> float:
        """Wall time of an empty run (``true``) in the sandbox: the image start cost
        (measured once and cached, unless ``fresh``)."""
        if self._start_cost is None or fresh:
            d = Path(tempfile.mkdtemp(dir=self.workroot))
            try:
                d.chmod(0o755)
                meta = self.sandbox.run(RunRequest(["true"], d, Limits(cpu_time_s=5.0),
                                                   stdout=d / "o", stderr=d / "e",
                                                   cpus=self.cpus))
                self._start_cost = meta.wall_time_s
            finally:
                shutil.rmtree(d, ignore_errors=True)
        return self._start_cost

    # -- one submission ----------------------------------------------------
    def grade(self, problem: Problem, submission: str | Path | Submission,
              language: str | None = None) -> SubmissionResult:
        """Grade a submission (file, directory or loaded Submission)."""
        t_start = time.monotonic()
        sub = submission if isinstance(submission, Submission) else load_submission(submission)
        lang = get_language(language) if language else \
            detect_language(sub.files, problem.languages)
        if problem.languages is not None and lang.id not in problem.languages:
            return self._no_tests(problem, sub, lang, Verdict.CE, CompileResult(
                ok=False, output=f"language {lang.id} is not accepted for this assignment "
                                 f"(accepted: {', '.join(problem.languages)})"), t_start)
        work = Path(tempfile.mkdtemp(prefix="sub-", dir=self.workroot))
        try:
            work.chmod(0o711)
            build, out = work / "build", work / "out"
            build.mkdir(mode=0o755)
            out.mkdir(mode=0o700)
            sub.copy_to(build)
            self.sandbox.own(build)
            timing: dict[str, float] = {}
            t0 = time.monotonic()
            try:
                comp = self._compile(problem, lang, sub.files, build, out)
            except SandboxError as e:
                log.error("sandbox failed compiling %s: %s", sub.path, e)
                return self._no_tests(problem, sub, lang, Verdict.JE, CompileResult(
                    ok=False, judge_error=str(e)), t_start)
            timing["compile_s"] = time.monotonic() - t0
            if not comp.ok:
                return self._no_tests(problem, sub, lang, Verdict.CE, comp, t_start, timing)
            run_argv = lang.run_argv(sub.files, problem.compile_flags.get(lang.id))
            tests: list[TestResult] = []
            run_s = validate_s = 0.0
            for i, case in enumerate(problem.cases):
                group = problem.group(case.group)
                result, r_s, v_s = self._run_test(problem, group, case, i, run_argv, build, out,
                                                  work)
                tests.append(result)
                run_s += r_s
                validate_s += v_s
            timing.update(run_s=run_s, validate_s=validate_s)
            score, groups = score_submission(problem, tests)
            verdict = submission_verdict([t.verdict for t in tests])
            timing["total_s"] = time.monotonic() - t_start
            return self._result(problem, sub, lang, verdict, score, comp, tests, groups, timing)
        finally:
            if not self.keep_workdirs:
                shutil.rmtree(work, ignore_errors=True)

    def _compile(self, problem: Problem, lang: Language, files: Sequence[str], build: Path,
                 out: Path) -> CompileResult:
        argv = lang.compile_argv(files, problem.compile_flags.get(lang.id))
        if not argv:
            return CompileResult(ok=True)
        key = None
        if self.cache is not None:
            key = cache_key(str(self.sandbox.describe().get("image", "")), lang.id, argv, build,
                            files)
            if self.cache.fetch(key, build):
                self.sandbox.own(build)
                return CompileResult(ok=True, cpu_time_s=0.0, wall_time_s=0.0, cached=True)
        limits = problem.compile_limits
        meta = self.sandbox.run(RunRequest(argv, build, limits, stdout=out / "compile.out",
                                           stderr=out / "compile.err", workdir_writable=True,
                                           cpus=self.cpus))
        text = (_head(out / "compile.out", COMPILE_OUTPUT_LIMIT)
                + _head(out / "compile.err", COMPILE_OUTPUT_LIMIT))[:COMPILE_OUTPUT_LIMIT]
        if meta.termination is not None:
            text = f"compilation stopped: {_describe_termination(meta, limits)}\n{text}"
        if meta.ok and self.cache is not None and key is not None:
            self.cache.store(key, build, files)
        return CompileResult(
            ok=meta.ok, cpu_time_s=meta.cpu_time_s, wall_time_s=meta.wall_time_s,
            memory_bytes=meta.memory_bytes, exit_code=meta.exit_code, signal=meta.signal,
            termination=meta.termination, output=text,
        )

    def _run_test(self, problem: Problem, group: TestGroup, case: TestCase, index: int,
                  run_argv: list[str], build: Path, out: Path, work: Path
                  ) -> tuple[TestResult, float, float]:
        stdout, stderr, stdin = out / f"{index}.out", out / f"{index}.err", out / f"{index}"
        _link_or_copy(case.input_path, stdin)
        try:
            meta = self.sandbox.run(RunRequest(run_argv, build, problem.limits, stdout=stdout,
                                               stderr=stderr, stdin=stdin, cpus=self.cpus))
        except SandboxError as e:
            log.error("sandbox failed on %s: %s", case.name, e)
            return TestResult(case.name, case.group, Verdict.JE, feedback=str(e)), 0.0, 0.0
        validation: Validation | None = None
        t0 = time.monotonic()
        if meta.ok:
            try:
                validation = self._validate(problem, group, case, stdout, work, index)
            except SandboxError as e:
                validation = Validation(None, judge_error=f"validator sandbox failed: {e}")
        v_s = time.monotonic() - t0
        verdict = determine_verdict(meta, validation)
        if validation is not None:
            feedback = validation.judge_error or validation.feedback
        else:
            feedback = _describe_termination(meta, problem.limits)
            err = _tail(stderr, 400).strip()
            if err and verdict is Verdict.RE:
                feedback += f"; stderr: {err}"
        return TestResult(
            name=case.name, group=case.group, verdict=verdict, cpu_time_s=meta.cpu_time_s,
            wall_time_s=meta.wall_time_s, memory_bytes=meta.memory_bytes,
            exit_code=meta.exit_code, signal=meta.signal, termination=meta.termination,
            feedback=feedback[:FEEDBACK_LIMIT],
            score=validation.score if validation else None,
        ), meta.wall_time_s, v_s

    # -- validation ----------------------------------------------------------
    def _validate(self, problem: Problem, group: TestGroup, case: TestCase, team_out: Path,
                  work: Path, index: int) -> Validation:
        if problem.validation == "default":
            try:
                return validate_files(team_out, case.answer_path, group.validator_flags)
            except Exception as e:  # noqa: BLE001 -- a bad flag is our fault: JE
                return Validation(None, judge_error=f"default validator: {e}")
        return self._custom_validate(problem, group, case, team_out, work, index)

    def _validator(self, problem: Problem) -> tuple[Path, list[str]]:
        """Compile the custom validator once per problem version (cached on disk)."""
        key = problem.version
        if key in self._validators:
            return self._validators[key]
        assert problem.validator_dir is not None
        vsub = load_submission(problem.validator_dir)
        vlang = detect_language(vsub.files)
        vdir = self.workroot / "validators" / hashlib.sha256(
            (key + vsub.content_hash).encode()).hexdigest()[:16]
        build = vdir / "build"
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
                    msg = _head(tmp / "compile.err", 2000)
                    shutil.rmtree(tmp, ignore_errors=True)
                    raise SandboxError(f"output validator of {problem.short_name} does not "
                                       f"compile: {msg}")
            (tmp / "ok").touch()
            with contextlib.suppress(OSError):
                tmp.rename(vdir)  # another process may have won the race: use theirs
            shutil.rmtree(tmp, ignore_errors=True)
        self._validators[key] = (build, vlang.run_argv(vsub.files))
        return self._validators[key]

    def _custom_validate(self, problem: Problem, group: TestGroup, case: TestCase,
                         team_out: Path, work: Path, index: int) -> Validation:
        try:
            build, argv = self._validator(problem)
        except SandboxError as e:
            return Validation(None, judge_error=str(e))
        jdir = work / f"judge-{index}"
        data, feedback = jdir / "data", jdir / "feedback"
        data.mkdir(parents=True)
        feedback.mkdir()
        jdir.chmod(0o755)
        data.chmod(0o755)
        shutil.copyfile(case.input_path, data / "input")
        shutil.copyfile(case.answer_path, data / "answer")
        (data / "input").chmod(0o644)
        (data / "answer").chmod(0o644)
        self.sandbox.own(feedback)
        full = [*argv, f"{JUDGE}/data/input", f"{JUDGE}/data/answer", f"{JUDGE}/feedback/",
                *group.validator_flags]
        meta = self.sandbox.run(RunRequest(
            full, build, problem.validator_limits, stdout=jdir / "v.out", stderr=jdir / "v.err",
            stdin=team_out, cpus=self.cpus,
            binds=(Bind(data, f"{JUDGE}/data"), Bind(feedback, f"{JUDGE}/feedback", True))))
        msg = _head(feedback / "judgemessage.txt", FEEDBACK_LIMIT).strip() or \
            _head(jdir / "v.out", 500).strip()
        score: float | None = None
        with contextlib.suppress(ValueError):
            s = float(_head(feedback / "score.txt", 64).strip() or "nan")
            if 0.0 <= s <= 1.0:
                score = s
        if meta.termination is None and meta.signal is None and meta.exit_code == ACCEPT:
            return Validation(True, msg, score=score)
        if meta.termination is None and meta.signal is None and meta.exit_code == REJECT:
            return Validation(False, msg)
        why = _describe_termination(meta, problem.validator_limits) or \
            f"exit code {meta.exit_code}"
        return Validation(None, judge_error=f"output validator failed ({why}): "
                                            f"{_tail(jdir / 'v.err', 500)}")

    # -- result records --------------------------------------------------------
    def _runtime(self) -> dict[str, object]:
        return {**self.sandbox.describe(), "host": platform.node(), "cpus": self.cpus}

    def _no_tests(self, problem: Problem, sub: Submission, lang: Language, verdict: Verdict,
                  comp: CompileResult, t_start: float,
                  timing: dict[str, float] | None = None) -> SubmissionResult:
        _, groups = score_submission(problem, [])
        t = dict(timing or {})
        t["total_s"] = time.monotonic() - t_start
        return self._result(problem, sub, lang, verdict, 0.0, comp, [], groups, t)

    def _result(self, problem: Problem, sub: Submission, lang: Language, verdict: Verdict,
                score: float, comp: CompileResult, tests: list[TestResult],
                groups: Sequence[object], timing: dict[str, float]) -> SubmissionResult:
        return SubmissionResult(
            problem=problem.short_name, problem_version=problem.version,
            submission=str(sub.path), content_hash=sub.content_hash, language=lang.id,
            verdict=verdict, score=score if verdict is not Verdict.JE else 0.0,
            max_score=problem.max_score, compile=comp, tests=tuple(tests),
            groups=tuple(groups),  # type: ignore[arg-type]
            runtime=self._runtime(), timing={k: round(v, 6) for k, v in timing.items()},
            graded_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
