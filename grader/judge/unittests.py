"""Grading with the course's unit tests: the assignment's test command run in the
sandbox once per visibility, and the JUnit XML reports it leaves read into per-test
results (``grader.core.junit``).

Per run a fresh tree is bound at ``/autograder``: ``submission/`` the student's files
(the current directory, writable: builds write there), the staff's tests of that
visibility (and the shared files) bound read-only at ``submission/<tests_at>`` over
whatever the student put there, and ``results/`` empty, named by
``$GRADELINE_REPORTS``. A hidden test's source is only present in the hidden run,
whose results a student does not see before staff release them.

A report is written by the test framework inside the student's process, so it is
checked, not trusted: only regular files in the report directory count, size-limited
and parsed safely; a test named twice, a report that claims every test passed from a
command that failed, and a report with no test are judge errors with the reason (a
forgery, or an assignment to fix); no report from a command that failed is the
student's build or import failing (CE, with its output in the visible run).
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from grader.core.errors import GradelineError
from grader.core.junit import (
    MAX_BYTES,
    Case,
    ReportError,
    parse_junit,
    to_test_results,
    weight,
)
from grader.core.result import FEEDBACK_LIMIT, CompileResult, TestResult
from grader.core.runmeta import RunMeta, describe_termination
from grader.core.submission import Submission, load_submission
from grader.core.textfile import head, tail
from grader.core.verdict import Verdict, submission_verdict
from grader.formats.gradescope.package import GROUPS
from grader.formats.problem import Problem
from grader.formats.unittests.package import VISIBILITIES, UnitTests
from grader.judge.graded import Graded, kept_groups, visibility_groups
from grader.judge.ports import DEFAULT_ENV, Bind, RunRequest, Sandbox

log = logging.getLogger(__name__)

INSIDE = "/autograder"
REPORTS = f"{INSIDE}/results"
LOG_LIMIT = 8000  # bytes of each run's output kept
#: the name of a run that gave no per-test results (stopped, or did not build)
WHOLE = {v: f"({v} tests)" for v in VISIBILITIES}
#: per visibility, the test ids the package's accepted submission's reports name
Expected = dict[str, frozenset[str]]


@dataclass(frozen=True, slots=True)
class Run:
    """One visibility's run: its tests, or why it has none."""

    visibility: str
    meta: RunMeta
    output: str
    tests: tuple[TestResult, ...] = ()
    judge_error: str = ""  # the assignment's (or a forgery's) fault: no score


def _tree(ut: UnitTests, sub: Submission, work: Path, files: Sequence[str]) -> Path:
    """The run's /autograder tree and its read-only tests, under ``work``."""
    tree = work / "autograder"
    (tree / "submission").mkdir(parents=True)
    sub.copy_to(tree / "submission")
    at = tree / "submission" / ut.tests_at
    if at.exists() or at.is_symlink():  # the student's own copy of the tests is covered
        shutil.rmtree(at) if at.is_dir() and not at.is_symlink() else at.unlink()
    at.mkdir(parents=True)
    for rel in files:
        dest = work / "tests" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ut.tests / rel, dest)
    (work / "tests").mkdir(exist_ok=True)
    (tree / "results").mkdir()
    return tree


def read_reports(results: Path) -> list[Case]:
    """Every case of the ``*.xml`` reports in ``results`` (not below it: the test tools
    write there, and a tree the student's code built is not walked); :raises
    ReportError:."""
    found = sorted(results.glob("*.xml"))
    links = [p.name for p in found if p.is_symlink() or not p.is_file()]
    if links:
        raise ReportError(f"JUnit report {links[0]} is a link, not a file")
    if sum(p.stat().st_size for p in found) > MAX_BYTES:
        raise ReportError(f"the JUnit reports are over the {MAX_BYTES} bytes allowed")
    cases: list[Case] = []
    for p in found:  # an empty one is a redirect that got nothing: the tests never ran
        data = p.read_bytes()
        cases += parse_junit(data) if data.strip() else []
    ids = [c.id for c in cases]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ReportError(f"the JUnit reports name test {twice[0]} twice")
    return cases


def run_visibility(problem: Problem, ut: UnitTests, sub: Submission, work: Path,
                   visibility: str, sandbox: Sandbox, cpus: Sequence[int]) -> Run:
    """The test command over one visibility's tests, and what its reports say."""
    files = ut.files_of()
    tree = _tree(ut, sub, work, (*files[""], *files[visibility]))
    out = work / "out"
    out.mkdir(mode=0o700)
    sandbox.own(work)
    meta = sandbox.run(RunRequest(
        ["/bin/sh", "-c", f"cd {INSIDE}/submission && {ut.command}"], work / "tests",
        problem.limits, stdout=out / "tests.out", stderr=out / "tests.err",
        binds=(Bind(tree, INSIDE, writable=True),
               Bind(work / "tests", f"{INSIDE}/submission/{ut.tests_at}")),
        cpus=list(cpus), env={**DEFAULT_ENV, "GRADELINE_REPORTS": REPORTS,
                              "PYTHONDONTWRITEBYTECODE": "1"}))
    text = head(out / "tests.out", LOG_LIMIT // 2) + tail(out / "tests.err", LOG_LIMIT // 2)
    group = f"gradescope/{visibility}"
    if meta.termination is not None:
        verdict = {"memory": Verdict.MLE, "output": Verdict.OLE}.get(meta.termination,
                                                                      Verdict.TLE)
        why = f"the tests stopped: {describe_termination(meta, problem.limits)}"
        return Run(visibility, meta, text, (_whole(visibility, group, verdict, meta, why),))
    try:
        cases = read_reports(tree / "results")
    except ReportError as e:
        return Run(visibility, meta, text, judge_error=str(e))
    if not cases:
        if meta.exit_code == 0:
            return Run(visibility, meta, text, judge_error=(
                "the test command exited 0 and left no JUnit report (or one with no "
                "test) in $GRADELINE_REPORTS: the assignment's command must write it there"))
        shown = f":\n{text[-2000:]}" if visibility == "visible" else ""
        why = f"the tests did not run (the test command exited {meta.exit_code}){shown}"
        return Run(visibility, meta, text, (_whole(visibility, group, Verdict.CE, meta, why),))
    tests = to_test_results(cases, dict(ut.points), default=ut.default_points, group=group)
    if tests and all(t.verdict is Verdict.AC for t in tests) and meta.exit_code != 0:
        return Run(visibility, meta, text, judge_error=(
            f"the JUnit report says every test passed but the test command exited "
            f"{meta.exit_code if meta.exit_code is not None else meta.signal_name}: a report "
            "the tests did not write, or a command that fails after them"))
    return Run(visibility, meta, text, tuple(tests))


def _whole(visibility: str, group: str, verdict: Verdict, meta: RunMeta,
           why: str) -> TestResult:
    """A run that gave no per-test results, as one test (so its verdict shows)."""
    return TestResult(WHOLE[visibility], group, verdict, cpu_time_s=meta.cpu_time_s,
                      wall_time_s=meta.wall_time_s, memory_bytes=meta.memory_bytes,
                      exit_code=meta.exit_code, signal=meta.signal,
                      termination=meta.termination, feedback=why, points=0.0)


def _kept_runs(problem: Problem, ut: UnitTests) -> list[str]:
    kept = kept_groups(problem)
    return [v for v in ut.runs() if f"gradescope/{v}" in kept]


def reference_submission(problem: Problem) -> Path | None:
    """The package's first accepted submission, whose runs name the tests a report must
    name (``submissions/accepted/``, as ``gradeline check`` reads it)."""
    d = problem.path / "submissions" / "accepted"
    found = sorted(p for p in d.iterdir() if not p.name.startswith(".")) \
        if d.is_dir() else []
    return found[0] if found else None


def expected_tests(problem: Problem, sandbox: Sandbox, cpus: Sequence[int],
                   workroot: Path) -> Expected | None:
    """Per visibility, the test ids the reference submission's reports name, when every
    one of its tests passed (else None: reports are then taken as they come)."""
    ut = problem.unit_tests
    ref = reference_submission(problem)
    if ut is None or ref is None:
        return None
    try:
        sub = load_submission(ref)
    except GradelineError as e:
        log.warning("%s: the accepted submission %s cannot be read (%s); reports are not "
                    "checked against it", problem.short_name, ref.name, e)
        return None
    work = Path(tempfile.mkdtemp(prefix="ref-", dir=workroot))
    try:
        work.chmod(0o711)
        out: Expected = {}
        for vis in _kept_runs(problem, ut):
            r = run_visibility(problem, ut, sub, work / vis, vis, sandbox, cpus)
            if r.judge_error or not r.tests or any(t.verdict is not Verdict.AC
                                                   for t in r.tests):
                log.warning("%s: the accepted submission %s does not pass its %s tests "
                            "(%s); reports are not checked against it", problem.short_name,
                            ref.name, vis, r.judge_error or "some failed")
                return None
            out[vis] = frozenset(t.name for t in r.tests)
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def reconcile(run: Run, expected: frozenset[str]) -> Run:
    """The run's tests as the reference names them: a test the report lacks did not
    run (RE, with what the report's other cases said, e.g. a module that failed to
    import); a test the reference does not have earns nothing and is left out."""
    if run.judge_error or any(t.name in WHOLE.values() for t in run.tests):
        return run
    known = [t for t in run.tests if t.name in expected]
    said = "; ".join(f"{t.name}: {t.feedback}" for t in run.tests
                     if t.name not in expected and t.verdict is not Verdict.AC)
    group = f"gradescope/{run.visibility}"
    known += [TestResult(name, group, Verdict.RE, points=0.0, feedback=(
        "this test is not in the report: it did not run" + (f" ({said})" if said else "")
    )[:FEEDBACK_LIMIT]) for name in sorted(expected - {t.name for t in known})]
    return replace(run, tests=tuple(known))


def grade_unit_tests(problem: Problem, sub: Submission, work: Path, sandbox: Sandbox,
                     cpus: Sequence[int], expected: Expected | None = None) -> Graded:
    """Every kept visibility's run, in order (visible first), into one result; with
    ``expected``, each report is held to the reference's tests."""
    ut = problem.unit_tests
    assert ut is not None
    kept = kept_groups(problem)
    runs: list[Run] = []
    seen: set[str] = set()
    for vis in _kept_runs(problem, ut):
        r = run_visibility(problem, ut, sub, work / vis, vis, sandbox, cpus)
        if expected is not None and vis in expected:
            r = reconcile(r, expected[vis])
        fresh = tuple(t for t in r.tests if t.name not in seen)  # shared files' tests
        seen.update(t.name for t in fresh)  # count in the first run that has them
        runs.append(Run(r.visibility, r.meta, r.output, fresh, r.judge_error))
    return _combine(problem, ut, runs, kept)


def _combine(problem: Problem, ut: UnitTests, runs: list[Run], kept: set[str]) -> Graded:
    metas = [r.meta for r in runs]
    log_ = CompileResult(
        ok=all(m.ok for m in metas), cpu_time_s=sum(m.cpu_time_s for m in metas),
        wall_time_s=sum(m.wall_time_s for m in metas),
        memory_bytes=max((m.memory_bytes or 0 for m in metas), default=0) or None,
        exit_code=next((m.exit_code for m in metas if m.exit_code), 0),
        output="".join(f"== {r.visibility} tests ==\n{r.output}\n" for r in runs))
    tests = [t for r in runs for t in r.tests]
    worth = {t.name: 0.0 if t.name in WHOLE.values() else weight(t.name, dict(ut.points),
                                                             ut.default_points)
             for t in tests}
    score = sum(t.points or 0.0 for t in tests)
    declared = problem.autograder_max_score
    # the course's total, unless a phase grades only some visibilities: theirs
    max_score = declared if declared is not None and kept == set(GROUPS) else sum(
        worth.values())
    groups = visibility_groups(tests, worth, kept=kept)
    errors = [f"{r.visibility} tests: {r.judge_error}" for r in runs if r.judge_error]
    if errors:
        return Graded(Verdict.JE, 0.0, max_score, log_, tuple(tests), groups,
                      "; ".join(errors))
    verdict = submission_verdict([t.verdict for t in tests]) if tests else Verdict.AC
    counted = [t for t in tests if t.name not in WHOLE.values()]
    said = [f"{sum(t.verdict is Verdict.AC for t in counted)} of {len(counted)} tests "
            "passed"] if counted or not tests else []
    said += [f"{t.name.strip('()')}: {t.feedback.split(':' + chr(10))[0]}" for t in tests
             if t.name in WHOLE.values()]  # a run that stopped or did not build
    return Graded(verdict, score, max_score, log_, tuple(tests), groups, "; ".join(said))

