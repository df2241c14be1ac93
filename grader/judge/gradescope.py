"""Grading with a Gradescope autograder: ``run_autograder`` run once per submission in
the sandbox, as Gradescope's specification lays the tree out, and its
``results.json`` read into a result.

Per submission a fresh tree is bound at ``/autograder`` (writable, as on Gradescope):
``source/`` the autograder's files, ``run_autograder`` a copy of its script,
``submission/`` the student's files, ``results/`` empty, and
``submission_metadata.json``. ``run_autograder`` runs under gl-runner like any run,
with the package's limits (the time-out is its wall time) and no network; nothing it
starts survives it. What it leaves in ``results/results.json`` is untrusted: a
missing, malformed or oversized file is a judge error with the reason, never a
score. As on Gradescope, the student's code runs beside the autograder and can reach
its files: an autograder that must keep its tests from the submission runs the
submission as another user, as Gradescope's own advice says.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from grader.core.errors import SandboxError
from grader.core.limits import Limits
from grader.core.result import CompileResult, SubmissionResult, TestResult
from grader.core.runmeta import RunMeta, describe_termination
from grader.core.submission import Submission
from grader.core.textfile import head, tail
from grader.core.verdict import Verdict, submission_verdict
from grader.formats.gradescope.autograder import Autograder, load_setup, open_autograder
from grader.formats.gradescope.package import GROUPS
from grader.formats.gradescope.results import (
    MAX_BYTES,
    GsResults,
    ResultsError,
    parse_results,
    to_test_results,
)
from grader.formats.problem import Problem
from grader.judge.graded import Graded, kept_groups, visibility_groups
from grader.judge.ports import DEFAULT_ENV, Bind, RunRequest, Sandbox
from grader.judge.unittests import Expected, expected_tests, grade_unit_tests

log = logging.getLogger(__name__)

INSIDE = "/autograder"
LOG_LIMIT = 8000  # bytes of run_autograder's output kept for staff (its log)


class Autograders:
    """Runs the autograders of packages in one sandbox, each unpacked once."""

    def __init__(self, sandbox: Sandbox, workroot: Path, cpus: Sequence[int], *,
                 keep_workdirs: bool = False) -> None:
        self.sandbox = sandbox
        self.keep_workdirs = keep_workdirs
        self.workroot = workroot
        self.cpus = list(cpus)
        self._loaded: dict[tuple[Path, str], Autograder] = {}
        self._images: dict[str, Sandbox] = {}  # autograder digest -> its image's sandbox
        #: unit tests: package version -> the tests its accepted submission's reports name
        self._expected: dict[str, Expected | None] = {}

    def sandbox_for(self, problem: Problem, ag: Autograder) -> Sandbox:
        """The sandbox on the assignment's image (one container per image, kept)."""
        if problem.autograder_image == "base":
            return self.sandbox
        found = self._images.get(ag.digest)
        if found is None:
            found = self._images[ag.digest] = self.sandbox.for_autograder(ag.digest)
        return found

    def close(self) -> None:
        """End the assignment images' containers."""
        for sandbox in self._images.values():
            sandbox.close()

    def abort(self) -> None:
        """Kill the assignment images' containers now."""
        for sandbox in self._images.values():
            sandbox.abort()

    def load(self, problem: Problem) -> Autograder:
        """The package's autograder, checked (a zip unpacked once, keyed by its bytes)."""
        unit = problem.unit_tests
        src = problem.autograder if unit is None else unit.setup
        assert src is not None
        key = (src, problem.version)  # a package changed in place is loaded again
        found = self._loaded.get(key)
        if found is not None:
            return found
        ag = open_autograder(src, self.workroot / ".autograders") if unit is None else \
            load_setup(src)
        self._loaded[key] = ag
        return ag

    def grade_submission(self, problem: Problem, sub: Submission, language: str | None,
                         runtime: Callable[[], dict[str, Any]], *,
                         student: str | None = None, submitted_at: str | None = None,
                         team: tuple[str, ...] = ()) -> SubmissionResult:
        """The result record of ``sub`` graded by the package's autograder; the judge's
        ``runtime`` facts go in it."""
        t0 = time.monotonic()
        work = Path(tempfile.mkdtemp(prefix="sub-", dir=self.workroot))
        try:
            work.chmod(0o711)
            try:
                g = self.grade(problem, sub, work, metadata(
                    problem, sub.content_hash[:16], student, submitted_at, team))
            except SandboxError as e:
                log.error("sandbox failed running the autograder on %s: %s", sub.path, e)
                g = Graded(Verdict.JE, 0.0, problem.max_score, CompileResult(
                    ok=False, judge_error=str(e)), (),
                    visibility_groups([], {}, kept=kept_groups(problem)),
                    f"sandbox failed: {e}")
        finally:
            if not self.keep_workdirs:
                shutil.rmtree(work, ignore_errors=True)
        return SubmissionResult(
            problem=problem.short_name, problem_version=problem.version,
            submission=str(sub.path), content_hash=sub.content_hash, language=language,
            verdict=g.verdict, score=g.score if g.verdict is not Verdict.JE else 0.0,
            max_score=g.max_score, compile=g.log, tests=g.tests, groups=g.groups,
            runtime={**runtime(), **g.image,
                     "autograder": "unittest" if problem.unit_tests else "gradescope"},
            timing={"run_s": round(g.log.wall_time_s or 0.0, 6),
                    "total_s": round(time.monotonic() - t0, 6)},
            graded_at=datetime.now(UTC).isoformat(timespec="seconds"), message=g.message)

    def grade(self, problem: Problem, sub: Submission, work: Path,
              submission_meta: dict[str, object]) -> Graded:
        """Run the autograder (or the unit tests) on ``sub`` in ``work`` (the judge's
        per-submission dir)."""
        if problem.unit_tests is not None:
            sandbox = self.sandbox if problem.autograder_image == "base" else \
                self.sandbox_for(problem, self.load(problem))
            if problem.version not in self._expected:  # once per package (and phase)
                self._expected[problem.version] = expected_tests(
                    problem, sandbox, self.cpus, self.workroot)
            return replace(grade_unit_tests(problem, sub, work, sandbox, self.cpus,
                                            self._expected[problem.version]),
                           image=sandbox.describe())
        ag = self.load(problem)
        sandbox = self.sandbox_for(problem, ag)
        tree = work / "autograder"
        shutil.copytree(ag.root, tree / "source", symlinks=False)
        (tree / "run_autograder").write_bytes(ag.run_script())
        (tree / "run_autograder").chmod(0o755)
        if ag.otter is not None and ag.otter.config_overrides:  # PDF, upload: turned off
            config = tree / "source" / "otter_config.json"
            config.write_text(json.dumps({**json.loads(config.read_text() or "{}"),
                                          **ag.otter.config_overrides}))
        (tree / "submission").mkdir(parents=True)
        sub.copy_to(tree / "submission")
        (tree / "results").mkdir()
        (tree / "submission_metadata.json").write_text(json.dumps(submission_meta, indent=2))
        cwd, out = work / "cwd", work / "out"
        cwd.mkdir(mode=0o755)
        out.mkdir(mode=0o700, exist_ok=True)
        sandbox.own(work)
        meta = sandbox.run(RunRequest(
            _argv(tree / "run_autograder"), cwd, problem.limits, stdout=out / "autograder.out",
            stderr=out / "autograder.err", binds=(Bind(tree, INSIDE, writable=True),),
            cpus=self.cpus, env=dict(DEFAULT_ENV)))
        text = (head(out / "autograder.out", LOG_LIMIT // 2) +
                tail(out / "autograder.err", LOG_LIMIT // 2))
        return replace(outcome(problem, meta, text, tree / "results" / "results.json"),
                       image=sandbox.describe())


def _argv(script: Path) -> list[str]:
    """Gradescope runs ``run_autograder`` from /autograder; one without a ``#!`` line
    is a shell script."""
    with script.open("rb") as f:
        shebang = f.read(2) == b"#!"
    cmd = "exec ./run_autograder" if shebang else "exec /bin/bash ./run_autograder"
    return ["/bin/sh", "-c", f"cd {INSIDE} && {cmd}"]


def metadata(problem: Problem, submission_id: str, student: str | None = None,
             submitted_at: str | None = None, team: tuple[str, ...] = ()
             ) -> dict[str, object]:
    """``submission_metadata.json``: the specification's keys, with what gradeline knows
    (the student -- of team work every member, ``group_submission`` true -- and the
    hand-in time from the spool; due dates are the course file's, not the judge's)."""
    created = submitted_at or datetime.now(UTC).isoformat(timespec="seconds")
    who = team or ((student,) if student else ())
    users = [{"id": u, "name": u, "email": None} for u in who]
    return {"id": submission_id, "created_at": created, "submission_method": "upload",
            "assignment": {"title": problem.title, "id": problem.short_name,
                           "due_date": None, "late_due_date": None, "release_date": None,
                           "total_points": problem.autograder_max_score,
                           "group_submission": bool(team),
                           "group_size": len(team) if team else None},
            "users": users, "previous_submissions": []}


def read_results(path: Path) -> GsResults:
    """The checked results.json; :raises ResultsError: with the reason."""
    try:
        if path.is_symlink() or not path.is_file():
            raise ResultsError("run_autograder wrote no /autograder/results/results.json"
                               if not path.is_symlink() else
                               "results.json is a link, not a file")
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ResultsError(f"results.json is {size} bytes, over the {MAX_BYTES} allowed")
        data = path.read_bytes()[:MAX_BYTES + 1]
    except OSError as e:
        raise ResultsError(f"cannot read results.json: {e}") from None
    return parse_results(data)


def outcome(problem: Problem, meta: RunMeta, text: str, results: Path) -> Graded:
    """The result of one run_autograder: a limit it hit, a judge error when there is no
    usable results.json, else the scores results.json gives."""
    limits: Limits = problem.limits
    log_ = CompileResult(ok=meta.ok, cpu_time_s=meta.cpu_time_s,
                         wall_time_s=meta.wall_time_s, memory_bytes=meta.memory_bytes,
                         exit_code=meta.exit_code, signal=meta.signal,
                         termination=meta.termination, output=text)
    declared = problem.autograder_max_score
    kept = kept_groups(problem)
    if meta.termination is not None:
        verdict = {"memory": Verdict.MLE, "output": Verdict.OLE}.get(meta.termination,
                                                                      Verdict.TLE)
        why = f"the autograder stopped: {describe_termination(meta, limits)}"
        run = TestResult(  # the run itself, so that its limit shows as a test's would
            "run_autograder", GROUPS[0], verdict, cpu_time_s=meta.cpu_time_s,
            wall_time_s=meta.wall_time_s, memory_bytes=meta.memory_bytes,
            exit_code=meta.exit_code, signal=meta.signal, termination=meta.termination,
            feedback=why)
        return Graded(verdict, 0.0, declared or 0.0, log_, (run,),
                      visibility_groups([run], {}, kept=kept), why)
    try:
        res = read_results(results)
    except ResultsError as e:
        exit_ = f" (run_autograder exit {meta.exit_code})" if meta.exit_code else ""
        return Graded(Verdict.JE, 0.0, declared or 0.0, log_, (),
                      visibility_groups([], {}, kept=kept), f"{e}{exit_}")
    tests = to_test_results(res)
    score = res.score
    max_score = declared if declared is not None else (
        res.max_score if res.max_score is not None else res.score)
    if kept != set(GROUPS):  # a course's visible phase: the kept groups' tests count
        worth = {t.name: t.max_score or 0.0 for t in res.tests}
        tests = [t for t in tests if t.group in kept]
        score = sum(t.points or 0.0 for t in tests)
        max_score = sum(worth.get(t.name, 0.0) for t in tests)
    if tests:
        verdict = submission_verdict([t.verdict for t in tests])
    else:
        verdict = Verdict.AC if score >= max_score else Verdict.WA
    return Graded(verdict, score, max_score, log_, tuple(tests),
                  visibility_groups(
                      tests, {t.name: t.max_score for t in res.tests}, kept=kept), res.output)
