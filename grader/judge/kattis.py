"""What grading a Kattis package needs around each run: the package's ``include/``
files in the build, a test's own files beside the program, a test's points under the
package's scoring, a JVM submission's entry class, and stdin under a neutral name.
(The runs themselves: ``judge.judge``; interactive and multi-pass ones:
``judge.kattis_passes``; output validation: ``judge.kattis_validators``.)"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from grader.core.entrypoint import JVM_LANGUAGES, main_class
from grader.core.languages import Language
from grader.core.result import CompileResult
from grader.core.submission import Submission
from grader.core.verdict import Validation
from grader.formats.kattis.constants import substitute_file
from grader.formats.problem import Problem, TestCase


def add_included(problem: Problem, language: str, build: Path,
                 files: Sequence[str]) -> list[str]:
    """Copy the package's ``include/`` files for ``language`` into the build directory
    (over the submission's own, as the spec says, with the problem's constants
    substituted); the submission's file list with them."""
    inc = problem.included_files(language)
    names = set(files)
    if inc is None:
        return list(files)
    for f in sorted(inc.rglob("*")):
        rel = f.relative_to(inc)
        if f.is_dir() or any(p.startswith(".") for p in rel.parts):
            continue
        target = build / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
        shutil.copyfile(f, target)
        target.chmod(0o644)
        substitute_file(target, problem.constants)
        names.add(str(rel))
    return sorted(names)


def with_test_files(case: TestCase, build: Path, work: Path, index: int) -> Path:
    """The run's working directory: the build itself, or -- for a test with a ``.files``
    directory -- a copy of it (hard links) with those files added, so nothing of one
    test's files is left for the next."""
    if case.files is None:
        return build
    rundir = work / f"run-{index}"
    shutil.copytree(build, rundir, copy_function=os.link, symlinks=True)
    for f in sorted(case.files.rglob("*")):
        rel = f.relative_to(case.files)
        target = rundir / rel
        if f.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)
        target.chmod(0o644)
    rundir.chmod(0o755)
    return rundir


def case_points(problem: Problem, case: TestCase, v: Validation
                ) -> tuple[float | None, str | None]:
    """An accepted test's score in a problem of type scoring, and the judge error when
    the validator's scores break the spec's rules (both files, a multiplier outside
    [0, 1], an unbounded test without score.txt, a score above the test's maximum)."""
    if problem.scoring_model != "kattis":
        return None, None
    if v.score_txt is not None and v.multiplier is not None:
        return None, "the validator wrote both score.txt and score_multiplier.txt"
    node = next((problem.nodes[a] for a in case.ancestors if a in problem.nodes), None)
    if node is None:
        return None, None
    if node.legacy:
        if v.score_txt is None and problem.validator_scores:
            return None, "the problem has custom scoring but the validator wrote no score.txt"
        return v.score_txt, None
    if case.group == "sample":
        return None, None  # samples are never scored (their score files are ignored)
    mx = node.case_max.get(case.name)
    if node.aggregation == "pass-fail":
        if v.score_txt is not None or v.multiplier is not None:
            return None, "the validator gave a score in a group with pass-fail aggregation"
        return None, None
    if v.multiplier is not None:
        if mx is None:
            return None, "score_multiplier.txt for a test with unbounded maximum score"
        if not 0.0 <= v.multiplier <= 1.0:
            return None, f"score_multiplier.txt {v.multiplier:g} is outside [0, 1]"
        return v.multiplier * mx, None
    if v.score_txt is not None:
        if v.score_txt < 0:
            return None, f"score.txt {v.score_txt:g} is negative"
        if mx is not None and v.score_txt > mx + 1e-9:
            return None, f"score.txt {v.score_txt:g} is above the test's maximum {mx:g}"
        return v.score_txt, None
    if mx is None:
        return None, "an accepted test with unbounded maximum score needs a score.txt"
    return mx, None


def entry_class(lang: Language, files: Sequence[str], build: Path,
                 own: Sequence[str]) -> str | None:
    """A JVM submission's entry class, from its sources (the entry file's first)."""
    if lang.id not in JVM_LANGUAGES:
        return None
    names = dict.fromkeys([lang.main_file(files, own), *lang.sources(files)])
    try:
        return main_class(lang.id, {n: (build / n).read_text(errors="replace") for n in names})
    except OSError:
        return None


def link_or_copy(src: Path, dst: Path) -> None:
    """Expose ``src`` under a neutral name: the program can readlink its stdin
    (/proc/self/fd/0), which must not reveal the test's name or the package path. A
    test run again (``judge.parallel``) finds its earlier link in place."""
    with contextlib.suppress(FileNotFoundError):
        dst.unlink()
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def not_accepted(problem: Problem, sub: Submission, lang: Language) -> CompileResult | None:
    """Why a submission is not even compiled (a CE with the reason), or None: a language
    the assignment does not accept, or more code than its limit."""
    if problem.languages is not None and lang.id not in problem.languages:
        return CompileResult(ok=False, output=f"language {lang.id} is not accepted for this "
                                              f"assignment (accepted: "
                                              f"{', '.join(problem.languages)})")
    size = sub.size_bytes()
    if problem.code_limit_bytes is not None and size > problem.code_limit_bytes:
        return CompileResult(ok=False, output=f"the submission is {size / 1024:.1f} KiB, over "
                                              f"the {problem.code_limit_bytes / 1024:g} KiB "
                                              "code limit")
    return None
