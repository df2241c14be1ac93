"""Grades one submission against one problem: compile, run every test, validate, score.

It needs only a Sandbox (``judge.ports``). Sandbox failures become JE (judge
error), never a student verdict; ``grade_job`` turns *any* failure into a
JudgeFault with its reason, so no submission can crash a batch.
"""

from __future__ import annotations

import functools
import logging
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from grader.core.errors import GradelineError, SandboxError, SubmissionError
from grader.core.jobs import GradingJob, JudgeFault, Outcome, now_iso
from grader.core.languages import Language, detect_language, get_language
from grader.core.limits import Limits
from grader.core.result import (
    FEEDBACK_LIMIT,
    OUTPUT_LIMIT,
    CompileResult,
    GroupResult,
    SubmissionResult,
    TestResult,
)
from grader.core.runmeta import describe_termination
from grader.core.submission import Submission, load_submission
from grader.core.textfile import head
from grader.core.verdict import Validation, Verdict, determine_verdict
from grader.formats.gradescope.autograder import load_setup
from grader.formats.kattis.runplan import RunPlan
from grader.formats.load import load_problem
from grader.formats.problem import OnReject, Problem, TestCase, TestGroup
from grader.formats.resources import on_one_node
from grader.formats.scoring import scored
from grader.judge import parallel, performance, records
from grader.judge.compile_cache import CompileCache, cache_key
from grader.judge.gradescope import Autograders
from grader.judge.kattis import (
    add_included,
    case_points,
    entry_class,
    link_or_copy,
    not_accepted,
    with_test_files,
)
from grader.judge.kattis_passes import Passes
from grader.judge.kattis_validators import Validators
from grader.judge.ports import DEFAULT_ENV, CacheCounter, RunRequest, Sandbox

log = logging.getLogger(__name__)

COMPILE_OUTPUT_LIMIT = 8000
#: the message of a result that was compiled and not run (``GradingJob.compile_only``)
COMPILED_ONLY = "compiled only: not run"


def _language_of(sub: Submission, problem: Problem) -> str | None:
    """The submission's language for the record, when its files tell (an autograder
    takes whatever files it is given)."""
    try:
        return detect_language(sub.files, problem.languages).id
    except SubmissionError:
        return None


class Judge:
    """Grades submissions with one sandbox on a fixed set of CPUs.

    :param workroot: scratch directory (per-submission dirs are made and removed here).
    :param cpus: CPUs every run is pinned to (None: those this process may use).
    :param compile_cache: reuse compiles of comment-only variants (None: compile all).
    :param accelerate: compile with the languages' ``accelerate`` flags (precompiled
        headers, the gold linker).
    :param on_reject: "break" or "continue" for every group (a course's choice: quick
        feedback, less work), instead of each group's own ``on_reject``.
    :param counter: the node's counters for performance tests' cache readings (None:
        none are taken).
    """

    def __init__(self, sandbox: Sandbox, workroot: Path, cpus: Sequence[int] | None = None,
                 *, keep_workdirs: bool = False, compile_cache: CompileCache | None = None,
                 accelerate: bool = True, on_reject: OnReject | None = None,
                 gpus: Sequence[int] = (), nodes: int = 1,
                 peers: Sequence[str] = (), counter: CacheCounter | None = None) -> None:
        self.sandbox = sandbox
        self.workroot = workroot
        self.cpus = list(cpus) if cpus is not None else sorted(os.sched_getaffinity(0))
        self.gpus = list(gpus)  # bound into the sandbox (``adapters.gpus``)
        self.nodes = nodes  # of its allocation: a shape of more runs its ranks on one
        self.peers = tuple(peers)  # its nodes' addresses: where an MPI rank may connect
        self.keep_workdirs = keep_workdirs
        self.cache = compile_cache
        self.accelerate = accelerate
        self.on_reject = on_reject
        self.validators = Validators(sandbox, workroot, self.cpus)
        self.passes = Passes(sandbox, self.validators, self.cpus)
        self.autograders = Autograders(sandbox, workroot, self.cpus,
                                       keep_workdirs=keep_workdirs)
        self.counter = counter
        self.perf = performance.Timing(sandbox, self.validators, workroot, self.cpus,
                                       self._compile, counter=counter)
        self._problems: dict[tuple[Path, bool], Problem] = {}
        self._image_judges: dict[str, Judge] = {}  # a package's own image (setup:)
        self.on_image = False  # this judge's sandbox is a package's own image already
        self.extra_runtime: dict[str, object] = {}  # e.g. the Slurm task, for the record
        workroot.mkdir(parents=True, exist_ok=True)
        workroot.chmod(0o711)

    def validator_fault(self, problem: Problem) -> str | None:
        """Why ``problem``'s custom output validator (or interactor) cannot be used,
        compiled here as grading would compile it (and kept for it), or None."""
        if problem.validator_dir is None:
            return None
        try:
            self.validators.build(problem)
        except SandboxError as e:
            return str(e).rstrip()
        return None

    def warm(self) -> None:
        """Start the sandbox's container now, before the first job (a pilot's wait for
        its first ticket hides an Apptainer start, ~150 ms, that grading would pay). A
        failure is only logged: the first job's run starts it again and says why."""
        try:
            self.sandbox.start()
        except GradelineError as e:
            log.warning("starting the sandbox ahead of the first job failed: %s", e)

    def close(self) -> None:
        """End the judge's sandbox (its container, and the validator's own one)."""
        for judge in self._image_judges.values():
            judge.close()
        self.passes.close()
        self.autograders.close()
        self.sandbox.close()

    def abort(self) -> None:
        """Kill the judge's containers now, runs in progress included (a stop)."""
        for judge in self._image_judges.values():
            judge.abort()
        self.passes.abort()
        self.autograders.abort()
        self.sandbox.abort()

    # -- one job, whatever happens -------------------------------------------
    def grade_job(self, job: GradingJob) -> Outcome:
        """Grade one job; every failure of ours becomes a JudgeFault with its reason."""
        started = now_iso()
        try:
            key = (job.problem, job.time_limit_s is None)
            problem = self._problems.get(key)
            if problem is None:
                problem = self._problems[key] = load_problem(
                    job.problem, require_time_limit=job.time_limit_s is None)
            if job.time_limit_s is not None:
                problem = replace(problem, limits=problem.limits.scaled(
                    cpu_time_s=job.time_limit_s))
            if job.groups is not None:
                problem = problem.restricted(job.groups)
            if job.performance_only:
                problem = problem.performance_only()
            result: SubmissionResult | JudgeFault = self.grade(
                problem, job.source, job.language, student=job.student,
                submitted_at=job.submitted_at, compile_only=job.compile_only, team=job.team)
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
              language: str | None = None, *, student: str | None = None,
              submitted_at: str | None = None, compile_only: bool = False,
              team: tuple[str, ...] = ()) -> SubmissionResult:
        """Grade a submission (file, directory or loaded Submission); who handed it in
        (of team work, ``team``: every member) and when, where known, is for an
        autograder's submission_metadata.json."""
        if problem.shape.nodes > self.nodes:  # no allocation of its nodes: ranks on this one
            problem = on_one_node(problem)
        if problem.setup is not None and not problem.graded_by_autograder and \
                not self.on_image:
            return self._on_image(problem).grade(problem, submission, language,
                                                 student=student, submitted_at=submitted_at,
                                                 compile_only=compile_only, team=team)
        t_start = time.monotonic()
        sub = submission if isinstance(submission, Submission) else load_submission(submission)
        if problem.graded_by_autograder:  # the course's autograder or unit tests grade it
            return self.autograders.grade_submission(
                problem, sub, language or _language_of(sub, problem), self._runtime,
                student=student, submitted_at=submitted_at, team=team)
        lang = get_language(language) if language else \
            detect_language(sub.files, problem.languages)
        refused = not_accepted(problem, sub, lang)
        if refused is not None:
            return self._no_tests(problem, sub, lang, Verdict.CE, refused, t_start)
        work = Path(tempfile.mkdtemp(prefix="sub-", dir=self.workroot))
        try:
            work.chmod(0o711)
            build, out = work / "build", work / "out"
            build.mkdir(mode=0o755)
            out.mkdir(mode=0o700)
            sub.copy_to(build)
            files = add_included(problem, lang.id, build, sub.files)
            self.sandbox.own(work)  # the sandbox's user compiles here and writes outputs
            timing: dict[str, float] = {}
            t0 = time.monotonic()
            try:
                comp = self._compile(problem, lang, files, build, out, sub.files)
            except SandboxError as e:
                log.error("sandbox failed compiling %s: %s", sub.path, e)
                return self._no_tests(problem, sub, lang, Verdict.JE, CompileResult(
                    ok=False, judge_error=str(e)), t_start)
            timing["compile_s"] = time.monotonic() - t0
            if not comp.ok:
                return self._no_tests(problem, sub, lang, Verdict.CE, comp, t_start, timing)
            entry = entry_class(lang, files, build, sub.files)
            if lang.id == "java" and entry is None:  # javac accepts it; nothing could run
                comp = replace(comp, ok=False, output=(comp.output + "\n").lstrip() +
                               "no class declares static void main(String[] args): there "
                               "is nothing to start")
                return self._no_tests(problem, sub, lang, Verdict.CE, comp, t_start, timing)
            if compile_only:  # e.g. a GPU assignment's self-check where no GPU is
                return replace(self._no_tests(problem, sub, lang, Verdict.AC, comp, t_start,
                                              timing), message=COMPILED_ONLY)
            tests, run_s, validate_s = ([], 0.0, 0.0) if problem.phase == "performance" \
                else self._tests(problem, lang, files, entry, sub.files, build, out, work)
            timing.update(run_s=run_s, validate_s=validate_s)
            score, groups, verdict = scored(problem, tests)
            timing["total_s"] = time.monotonic() - t_start
            result = self._result(problem, sub, lang, verdict, score, comp, tests, groups, timing)
            return self.perf.measured(problem, result, lang, files, entry, sub.files, work)
        finally:
            if not self.keep_workdirs:
                shutil.rmtree(work, ignore_errors=True)

    def _on_image(self, problem: Problem) -> Judge:
        """A judge like this one on the package's own image (its ``setup:``, built before
        grading: ``assignment_image``), kept for the next submission of the package."""
        assert problem.setup is not None
        digest = load_setup(problem.setup).digest
        judge = self._image_judges.get(digest)
        if judge is None:
            judge = self._image_judges[digest] = Judge(
                self.sandbox.for_autograder(digest), self.workroot, self.cpus,
                keep_workdirs=self.keep_workdirs, compile_cache=self.cache,
                accelerate=self.accelerate, on_reject=self.on_reject, gpus=self.gpus,
                counter=self.counter)
            judge.extra_runtime, judge.on_image = self.extra_runtime, True
        return judge

    def _tests(self, problem: Problem, lang: Language, files: Sequence[str],
               entry: str | None, own: Sequence[str], build: Path, out: Path,
               work: Path) -> tuple[list[TestResult], float, float]:
        """Every test the run plan keeps, on the shape's cores; a failed one of a parallel
        program run again (``judge.parallel``). (tests, run s, validate s)"""
        limits = lang.limits(problem.limits.slower(lang.time_multiplier))
        run_argv = parallel.run_argv(problem.shape, lang.run_argv(
            files, problem.compile_flags.get(lang.id), memory_bytes=limits.memory_bytes,
            entry=entry, own=own))
        env = parallel.run_env(problem.shape, {**DEFAULT_ENV, **lang.env},
                               parallel.run_gpus(problem.shape, self.gpus), self.peers)
        cpus = parallel.run_cpus(problem.shape, self.cpus)
        tests: list[TestResult] = []
        run_s = validate_s = 0.0
        plan = RunPlan(problem, self.on_reject)
        for i, case in enumerate(problem.cases):
            if not plan.should_run(case):
                continue
            group = problem.group(case.group)
            again = functools.partial(self._run_test, problem, group, case, i, run_argv,
                                      build, out, work, limits, env, cpus)
            result, r_s, v_s = again()
            result = parallel.settle(result, again, problem.reruns)
            tests.append(result)
            plan.record(case, result.verdict)
            run_s += r_s
            validate_s += v_s
        return tests, run_s, validate_s

    def _compile(self, problem: Problem, lang: Language, files: Sequence[str], build: Path,
                 out: Path, own: Sequence[str] = ()) -> CompileResult:
        argv = parallel.compile_argv(problem.shape, lang.compile_argv(
            files, parallel.compile_flags(problem.shape, lang.id,
                                          problem.compile_flags.get(lang.id)),
            accelerate=self.accelerate, own=own or None))
        if not argv:
            return CompileResult(ok=True)
        key = None
        if self.cache is not None:
            key = cache_key(str(self.sandbox.describe().get("image", "")), lang.id, argv, build,
                            files)
            if self.cache.fetch(key, build):
                self.sandbox.own(build)
                return CompileResult(ok=True, cpu_time_s=0.0, wall_time_s=0.0, cached=True)
        limits = lang.limits(problem.compile_limits)
        meta = self.sandbox.run(RunRequest(argv, build, limits, stdout=out / "compile.out",
                                           stderr=out / "compile.err", workdir_writable=True,
                                           cpus=self.cpus, env={**DEFAULT_ENV, **lang.env}))
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
                  run_argv: list[str], build: Path, out: Path, work: Path,
                  limits: Limits, env: Mapping[str, str], cpus: Sequence[int]
                  ) -> tuple[TestResult, float, float]:
        stdout, stderr, stdin = out / f"{index}.out", out / f"{index}.err", out / f"{index}"
        rundir = with_test_files(case, build, work, index)
        validation: Validation | None = None
        v_s = 0.0
        try:
            if problem.is_interactive or problem.is_multi_pass:
                t0 = time.monotonic()
                outcome = self.passes.run(problem, case, index, [*run_argv, *case.args],
                                          rundir, out, work, limits,
                                          problem.allow_file_writing, env)
                meta, validation, verdict = outcome.meta, outcome.validation, outcome.verdict
                v_s = time.monotonic() - t0 - meta.wall_time_s
                stderr = out / f"{index}.p{outcome.passes}.err"
            else:
                link_or_copy(case.input_path, stdin)
                req = RunRequest(
                    [*run_argv, *case.args], rundir, limits, stdout=stdout, stderr=stderr,
                    stdin=stdin, cpus=cpus, workdir_writable=problem.allow_file_writing,
                    env=env, count_threads=not problem.shape.serial and not problem.shape.mpi,
                    net_peers=self.peers)
                meta = self.sandbox.run_ranks(req, problem.shape) if problem.shape.nodes > 1 \
                    else self.sandbox.run(req)
                t0 = time.monotonic()
                if meta.ok:
                    try:
                        validation = self.validators.validate(problem, group, case, stdout,
                                                              work, index)
                    except SandboxError as e:
                        validation = Validation(None,
                                                judge_error=f"validator sandbox failed: {e}")
                v_s = time.monotonic() - t0
                verdict = determine_verdict(meta, validation)
        except SandboxError as e:
            log.error("sandbox failed on %s: %s", case.name, e)
            return TestResult(case.name, case.group, Verdict.JE, feedback=str(e)), 0.0, 0.0
        finally:
            if rundir != build:
                shutil.rmtree(rundir, ignore_errors=True)
        points = None
        if validation is not None and verdict is Verdict.AC:
            points, why = case_points(problem, case, validation)
            if why:
                verdict, validation = Verdict.JE, Validation(None, judge_error=why)
        feedback = parallel.feedback(problem.shape, meta, limits, validation, verdict,
                                     stderr)
        return TestResult(
            name=case.name, group=case.group, verdict=verdict, cpu_time_s=meta.cpu_time_s,
            wall_time_s=meta.wall_time_s, memory_bytes=meta.memory_bytes,
            exit_code=meta.exit_code, signal=meta.signal, termination=meta.termination,
            feedback=feedback[:FEEDBACK_LIMIT],
            score=validation.score if validation else None, points=points,
            output="" if verdict is Verdict.AC else head(stdout, OUTPUT_LIMIT),
        ), meta.wall_time_s, v_s

    # -- result records --------------------------------------------------------
    def _no_tests(self, problem: Problem, sub: Submission, lang: Language, verdict: Verdict,
                  comp: CompileResult, t_start: float,
                  timing: dict[str, float] | None = None) -> SubmissionResult:
        return records.no_tests(problem, sub, lang, verdict, comp, t_start, timing,
                                self._runtime())

    def _runtime(self) -> dict[str, Any]:
        """Where and how a submission is graded, for its record."""
        return {**self.sandbox.describe(), "host": platform.node(), "cpus": self.cpus,
                **({"on_reject": self.on_reject} if self.on_reject else {}),
                **self.extra_runtime}

    def _result(self, problem: Problem, sub: Submission, lang: Language, verdict: Verdict,
                score: float, comp: CompileResult, tests: list[TestResult],
                groups: Sequence[GroupResult], timing: dict[str, float]) -> SubmissionResult:
        return records.result(problem, sub, lang, verdict, score, comp, tests, groups, timing,
                              self._runtime())
