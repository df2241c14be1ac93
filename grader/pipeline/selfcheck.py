"""``gradeline check``: grade a package's example submissions and hold each to what its
directory and ``submissions.yaml`` require; derive and record the time limit when the
package gives none (``grader.formats.expectations`` has the rules and the arithmetic).

Deriving a limit takes up to three rounds, as a judge would: the submissions that
bound it from below run under a generous limit to measure ``T_ac``; then every
submission runs under the derived limit and is checked; the ones that must time out
run once more under the limit times ``time_limit_to_tle`` and must still time out.
The limit is written to the package's ``.timelimit`` (what ``gradeline grade`` then
uses), or, where the package is read-only, only reported.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from grader.core.errors import SubmissionError
from grader.core.jobs import GradingJob, JudgeFault
from grader.core.languages import detect_language, load_languages
from grader.core.result import SubmissionResult
from grader.core.verdict import Verdict
from grader.formats import expectations as ex
from grader.formats.kattis.constants import substitute_tree
from grader.formats.kattis.package_limits import MEASURING_TIME_LIMIT_S
from grader.formats.load import load_problem, verify_package
from grader.formats.pkgfs import PackageFS
from grader.formats.problem import Problem
from grader.pipeline.ports import Executor


@dataclass
class ExampleRun:
    """One example submission: its rules and how it fared."""

    expectation: ex.Expectation
    result: SubmissionResult | JudgeFault | None = None
    check: ex.Check = field(default_factory=lambda: ex.Check(False, ("not graded",)))


@dataclass
class PackageReport:
    problem: Problem
    examples: list[ExampleRun] = field(default_factory=list)
    time_limit: ex.TimeLimit | None = None
    time_limit_note: str = ""
    errors: list[str] = field(default_factory=list)
    #: example submissions not graded, and why (disabled, a language gradeline lacks)
    skipped: list[tuple[Path, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors and all(o.check.ok for o in self.examples)


def submissions_of(problem: Problem) -> list[Path]:
    """Every program under ``submissions/<dir>/``: a file, or a directory of files."""
    fs = PackageFS(problem.short_name, problem.path)
    root = problem.path / "submissions"
    out: list[Path] = []
    if not fs.is_dir(root):
        return out
    for d in fs.entries(root):
        if not fs.is_dir(d):
            continue
        for s in fs.entries(d):
            if s.name != "__pycache__":
                out.append(s)
    return out


def package_expectations(problem: Problem) -> list[ex.Expectation]:
    fs = PackageFS(problem.short_name, problem.path)
    yml = problem.path / "submissions" / "submissions.yaml"
    rules = fs.read_yaml(yml)
    return ex.expectations(problem, submissions_of(problem), rules, yml)


def skip_reason(problem: Problem, exp: ex.Expectation) -> str | None:
    """Why an example submission is not graded: disabled by name (``*.disabled``, as
    BAPCtools marks them), or in a language gradeline does not grade here. A package
    may carry solutions in languages a judge lacks; they are no mismatch."""
    if exp.path.name.endswith(".disabled"):
        return "disabled (*.disabled)"
    table = load_languages()
    if exp.language is not None:
        return None if exp.language in table else \
            f"language {exp.language!r} (submissions.yaml) is not one gradeline grades"
    if problem.graded_by_autograder and problem.languages is None:
        return None  # an autograder that names no language takes any files (a notebook)
    files = [str(p.relative_to(exp.path)) for p in sorted(exp.path.rglob("*"))
             if p.is_file()] if exp.path.is_dir() else [exp.path.name]
    try:
        detect_language(files, problem.languages, table)
    except SubmissionError as e:
        return str(e).split(";")[0]
    return None


def _grade(executor: Executor, problem: Problem, exps: Sequence[ex.Expectation],
           time_limit: float | None, compile_only: bool = False
           ) -> dict[str, SubmissionResult | JudgeFault]:
    """Each submission's result by its path; with the problem's constants substituted
    in a copy of it first (2025-09 substitutes them in example submissions)."""
    if not problem.constants:
        jobs = [GradingJob(problem.path, e.path, e.language, time_limit,
                           compile_only=compile_only) for e in exps]
        return {o.key: o.result for o in executor.run(jobs)}
    with tempfile.TemporaryDirectory(prefix="gl-check-") as tmp:
        Path(tmp).chmod(0o755)
        copies: dict[str, str] = {}
        jobs = []
        for n, e in enumerate(exps):
            copy = Path(tmp) / str(n) / e.path.name
            copy.parent.mkdir()
            if e.path.is_dir():
                shutil.copytree(e.path, copy)
            else:
                shutil.copyfile(e.path, copy)
            substitute_tree(copy, problem.constants)
            copies[str(copy)] = str(e.path)
            jobs.append(GradingJob(problem.path, copy, e.language, time_limit))
        return {copies[o.key]: o.result for o in executor.run(jobs)}


def check_package(root: Path, executor: Executor, *, record: bool = True,
                  say: Callable[[str], None] = print,
                  faults: Mapping[Path, str] | None = None,
                  gpus: int | None = None) -> PackageReport:
    """Check one package (see the module docstring); ``faults``: what was found wrong
    with a package before (its validator does not compile), by its path: reported, and
    nothing of it graded (every run would be a judge error). ``gpus``: the GPUs here;
    a package that needs more is compiled only (``compile_only``)."""
    problem = load_problem(root, require_time_limit=False)
    if gpus is not None and problem.shape.gpus > gpus:
        return compile_only(problem, executor, gpus)
    verify_package(problem)
    report = PackageReport(problem)
    if faults and problem.path in faults:
        report.errors.append(faults[problem.path])
        return report
    exps = []
    for e in package_expectations(problem):
        why = skip_reason(problem, e)
        if why is None:
            exps.append(e)
        else:
            report.skipped.append((e.path, why))
    if not exps:
        report.errors.append("no example submissions (submissions/<expected>/)")
        return report
    limit: float | None = None
    if problem.time_limit_source == "unset":
        lower = [e for e in exps if any(ex.bound_kind(r) == "lower" for r in e.rules)]
        if not lower:
            report.errors.append("no time limit, and no submission bounds one from below "
                                 "(an accepted one, say) to derive it from")
            return report
        say(f"{problem.short_name}: no time limit given; measuring {len(lower)} "
            f"submission(s) under {MEASURING_TIME_LIMIT_S:g} s to derive one")
        measured = _grade(executor, problem, lower, MEASURING_TIME_LIMIT_S)
        t_ac = 0.0
        for e in lower:
            r = measured[str(e.path)]
            if isinstance(r, SubmissionResult):
                t = ex.slowest(e, r, "lower")
                t_ac = max(t_ac, t or 0.0)
                cut = ex.timed_out(e, r)
                if cut:
                    report.errors.append(
                        f"{e.label} may not time out, but ran over the measuring limit of "
                        f"{MEASURING_TIME_LIMIT_S:g} s on {', '.join(cut[:3])}: no time limit "
                        "derived (fix the submission, or mark it use_for_time_limit: false)")
        if report.errors:
            return report
        try:
            tl = ex.infer_time_limit(problem, t_ac, None)
        except ValueError as err:
            report.errors.append(str(err))
            return report
        limit = tl.limit_s
        report.time_limit = tl
        say(f"{problem.short_name}: time limit {limit:g} s ({tl.note})")
    results = _grade(executor, problem, exps, limit)
    for e in exps:
        report.examples.append(_checked(problem, e, results[str(e.path)]))
    if limit is not None and report.time_limit is not None:
        upper = [e for e in exps if any(ex.bound_kind(r) == "upper" for r in e.rules)]
        if upper:
            high = limit * problem.time_multipliers.time_limit_to_tle
            again = _grade(executor, problem, upper, high)
            for e in upper:
                r = again[str(e.path)]
                if isinstance(r, SubmissionResult) and not any(
                        t.verdict is Verdict.TLE for t in r.tests):
                    t = ex.slowest(e, r, "upper")
                    report.errors.append(
                        f"{e.label} must time out, but finished within {high:g} s (the limit "
                        f"x time_limit_to_tle; its slowest test took {t or 0:.3f} s): the "
                        "limit is too close")
        if report.ok and record:
            report.time_limit_note = _record(problem.path, limit)
        elif not report.ok:
            report.time_limit_note = "not recorded: the package's checks failed"
    return report


def compile_only(problem: Problem, executor: Executor, gpus: int) -> PackageReport:
    """A GPU assignment's check where it cannot run: every example submission compiled
    (so one that must not compile is still checked, and every other must), none run;
    those are listed as not graded here, with the reason."""
    verify_package(problem)
    report = PackageReport(problem)
    exps = [e for e in package_expectations(problem) if skip_reason(problem, e) is None]
    results = _grade(executor, problem, exps, None, compile_only=True)
    why = (f"compiled; not run: the assignment needs {problem.shape.gpus} GPU(s) and "
           f"this machine has {gpus}")
    for e in exps:
        r = results[str(e.path)]
        if isinstance(r, SubmissionResult) and r.verdict is not Verdict.CE and \
                e.whole is not Verdict.CE:
            report.skipped.append((e.path, why))
            continue
        report.examples.append(_checked(problem, e, r))
    return report


def _checked(problem: Problem, e: ex.Expectation, r: SubmissionResult | JudgeFault
             ) -> ExampleRun:
    """An example's run held to its rules (a judge fault is never as expected)."""
    o = ExampleRun(e, r)
    o.check = ex.Check(False, (f"judge fault: {r.reason}",)) if isinstance(r, JudgeFault) \
        else ex.check(e, r, max_score=problem.max_score)
    return o


def _record(root: Path, limit: float) -> str:
    path = root / ".timelimit"
    try:
        path.write_text(f"{limit:g}\n")
    except OSError as e:
        return (f"not recorded ({path}: {e.strerror}); set time_limit_s in gradeline.yaml "
                f"or limits.time_limit to {limit:g}")
    with contextlib.suppress(OSError):
        os.chmod(path, 0o644)  # noqa: PTH101 -- readable by whoever grades
    return f"recorded in {path}"


def check_packages(roots: Iterable[Path], executor: Executor, *, record: bool = True,
                   say: Callable[[str], None] = print,
                   faults: Mapping[Path, str] | None = None,
                   gpus: int | None = None) -> list[PackageReport]:
    return [check_package(root, executor, record=record, say=say, faults=faults, gpus=gpus)
            for root in roots]
