"""Grades one submission against one problem: compile, run every test, validate, score.

It needs only a Sandbox (``judge.ports``). Sandbox failures become JE (judge
error), never a student verdict; ``grade_job`` turns *any* failure into a
JudgeFault with its reason, so no submission can crash a batch.
"""

from __future__ import annotations

import logging
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from grader.core.errors import GradelineError, SandboxError, SubmissionError
from grader.core.jobs import GradingJob, JudgeFault, Outcome, now_iso
from grader.core.languages import Language, detect_language, get_language
from grader.core.problem import OnReject, Problem, TestCase, TestGroup, load_problem
from grader.core.result import (
    FEEDBACK_LIMIT,
    CompileResult,
    GroupResult,
    SubmissionResult,
    TestResult,
)
from grader.core.scoring import score_submission
from grader.core.submission import Submission, load_submission
from grader.core.verdict import Validation, Verdict, determine_verdict, submission_verdict
from grader.judge.compile_cache import CompileCache, cache_key
from grader.judge.ports import RunRequest, Sandbox
from grader.judge.validators import Validators, describe_termination, head, tail

log = logging.getLogger(__name__)

COMPILE_OUTPUT_LIMIT = 8000


def _link_or_copy(src: Path, dst: Path) -> None:
    """Expose ``src`` under a neutral name: the program can readlink its stdin
    (/proc/self/fd/0), which must not reveal the test's name or the package path."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


class Judge:
    """Grades submissions with one sandbox on a fixed set of CPUs.

    :param workroot: scratch directory (per-submission dirs are made and removed here).
    :param cpus: CPUs every run is pinned to (None: those this process may use).
    :param compile_cache: reuse compiles of comment-only variants (None: compile all).
    :param accelerate: compile with the languages' ``accelerate`` flags (precompiled
        headers, the gold linker).
    :param on_reject: "break" or "continue" for every group (a course's choice: quick
        feedback, less work), instead of each group's own ``on_reject``.
    """

    def __init__(self, sandbox: Sandbox, workroot: Path, cpus: Sequence[int] | None = None,
                 *, keep_workdirs: bool = False, compile_cache: CompileCache | None = None,
                 accelerate: bool = True, on_reject: OnReject | None = None) -> None:
        self.sandbox = sandbox
        self.workroot = workroot
        self.cpus = list(cpus) if cpus is not None else sorted(os.sched_getaffinity(0))
        self.keep_workdirs = keep_workdirs
        self.cache = compile_cache
        self.accelerate = accelerate
        self.on_reject = on_reject
        self.validators = Validators(sandbox, workroot, self.cpus)
        self._problems: dict[Path, Problem] = {}
        self.extra_runtime: dict[str, object] = {}  # e.g. the Slurm task, for the record
        workroot.mkdir(parents=True, exist_ok=True)
        workroot.chmod(0o711)

    def close(self) -> None:
        """End the judge's sandbox (its container)."""
        self.sandbox.close()

    # -- one job, whatever happens -------------------------------------------
    def grade_job(self, job: GradingJob) -> Outcome:
        """Grade one job; every failure of ours becomes a JudgeFault with its reason."""
        started = now_iso()
        try:
            problem = self._problems.get(job.problem)
            if problem is None:
                problem = self._problems[job.problem] = load_problem(job.problem)
            result: SubmissionResult | JudgeFault = self.grade(problem, job.source,
                                                               job.language)
        except SubmissionError as e:
            result = JudgeFault(str(e), cause="submission")
        except GradelineError as e:
            result = JudgeFault(str(e))
        except Exception as e:
            log.exception("grading %s failed", job.key)
            result = JudgeFault(f"internal error: {type(e).__name__}: {e}")
        return Outcome(job.key, result, started, now_iso())

    # -- one submission --------------------------------------------------------
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
            self.sandbox.own(work)  # the sandbox's user compiles here and writes outputs
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
            broken: set[str] = set()  # groups stopped at a rejection (on_reject: break)
            for i, case in enumerate(problem.cases):
                group = problem.group(case.group)
                if group.name in broken:
                    continue
                result, r_s, v_s = self._run_test(problem, group, case, i, run_argv, build,
                                                  out, work)
                tests.append(result)
                if result.verdict not in (Verdict.AC, Verdict.JE) and \
                        (self.on_reject or group.on_reject) == "break":
                    broken.add(group.name)
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
        argv = lang.compile_argv(files, problem.compile_flags.get(lang.id),
                                 accelerate=self.accelerate)
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
        text = (head(out / "compile.out", COMPILE_OUTPUT_LIMIT)
                + head(out / "compile.err", COMPILE_OUTPUT_LIMIT))[:COMPILE_OUTPUT_LIMIT]
        if meta.termination is not None:
            text = f"compilation stopped: {describe_termination(meta, limits)}\n{text}"
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
                validation = self.validators.validate(problem, group, case, stdout, work,
                                                      index)
            except SandboxError as e:
                validation = Validation(None, judge_error=f"validator sandbox failed: {e}")
        v_s = time.monotonic() - t0
        verdict = determine_verdict(meta, validation)
        if validation is not None:
            feedback = validation.judge_error or validation.feedback
        else:
            feedback = describe_termination(meta, problem.limits)
            err = tail(stderr, 400).strip()
            if err and verdict is Verdict.RE:
                feedback += f"; stderr: {err}"
        return TestResult(
            name=case.name, group=case.group, verdict=verdict, cpu_time_s=meta.cpu_time_s,
            wall_time_s=meta.wall_time_s, memory_bytes=meta.memory_bytes,
            exit_code=meta.exit_code, signal=meta.signal, termination=meta.termination,
            feedback=feedback[:FEEDBACK_LIMIT],
            score=validation.score if validation else None,
        ), meta.wall_time_s, v_s

    # -- result records --------------------------------------------------------
    def _no_tests(self, problem: Problem, sub: Submission, lang: Language, verdict: Verdict,
                  comp: CompileResult, t_start: float,
                  timing: dict[str, float] | None = None) -> SubmissionResult:
        _, groups = score_submission(problem, [])
        t = dict(timing or {})
        t["total_s"] = time.monotonic() - t_start
        return self._result(problem, sub, lang, verdict, 0.0, comp, [], groups, t)

    def _result(self, problem: Problem, sub: Submission, lang: Language, verdict: Verdict,
                score: float, comp: CompileResult, tests: list[TestResult],
                groups: Sequence[GroupResult], timing: dict[str, float]) -> SubmissionResult:
        runtime = {**self.sandbox.describe(), "host": platform.node(), "cpus": self.cpus,
                   **({"on_reject": self.on_reject} if self.on_reject else {}),
                   **self.extra_runtime}
        return SubmissionResult(
            problem=problem.short_name, problem_version=problem.version,
            submission=str(sub.path), content_hash=sub.content_hash, language=lang.id,
            verdict=verdict, score=score if verdict is not Verdict.JE else 0.0,
            max_score=problem.max_score, compile=comp, tests=tuple(tests),
            groups=tuple(groups),
            runtime=runtime, timing={k: round(v, 6) for k, v in timing.items()},
            graded_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )

