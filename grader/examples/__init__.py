"""Bundled example assignments (Kattis packages) for the demo, tests and benchmarks.

The course (``EXAMPLES``: what the demo, the generated courses and the benchmarks
grade):

- ``bigsum``: test groups with all-or-nothing and proportional points.
- ``meanstd``: default validator with a float tolerance.
- ``spread``: a custom output validator (many correct answers).

The package format's other kinds (``FORMATS``), checked by ``gradeline check``:

- ``guess`` (2025-09, interactive): an interactor plays higher/lower with the program.
- ``codec`` (2025-09, multi-pass): encode, then decode your own encoding; accepted
  solutions in every language gradeline grades.
- ``subtasks`` (legacy, scoring): IOI-style subtasks sharing test cases by symlink,
  default grader flags (``min always_accept``, ``ignore_sample``).
- ``parts`` (2025-09, scoring): pass-fail and sum groups, ``require_pass``, a validator
  that reports ``score_multiplier.txt``, ``submissions.yaml`` score ranges.

Assignments graded by an autograder the course wrote for Gradescope (``AUTOGRADERS``):

- ``wordfreq``: a Python unittest autograder that writes its own results.json, with
  tests of each visibility (``image: base``: its setup.sh installs nothing).
- ``gsutils``: written as Gradescope's documentation shows: setup.sh installs pip and
  gradescope-utils, run_tests.py uses its JSONTestRunner (its image is built first:
  ``gradeline image build --assignment``, or by the first ``check``/``run`` as root).
- ``ringbuf``: Java, JUnit 5's XML report turned into results.json by the autograder
  (``image: base``: the grading image has the JDK and JUnit 5).
- ``notebook``: a Jupyter notebook graded by the autograder ``otter assign`` made
  (Otter-Grader 7), unchanged; its image is built with pip alone.

Assignments graded by the course's unit tests and their JUnit report (``UNIT_TESTS``):

- ``stats``: pytest tests, visible and hidden files with their own points.
- ``intstack``: Java with JUnit 5 (the console launcher in the grading image): a
  compile error, a crash, a wrong answer.
- ``strutil``: a C library built with CMake and make, tested by CTest programs.
- ``romans``: a cargo crate (a directory submission) and the staff's integration tests,
  offline; libtest writes the report.
- ``bank``: a Maven project graded offline: its setup/setup.sh installs Maven and warms
  the pom's plugins and JUnit into the assignment's image.

Parallel programs, graded on the cores their ``resources:`` ask for (``PARALLEL``):

- ``primecount``: OpenMP C (and std::thread C++) on 2 cores: a data race (WA), a
  deadlock (TLE, no CPU progress), a crashing thread (RE), and a correct but serial
  program (accepted; the performance tests score it low).
- ``pimp``: Fortran with OpenMP on 2 cores, the same kinds of submission.
- ``mpisum``: MPI C, 2 ranks on 2 nodes (on one machine without Slurm: both there): a
  race (reading before MPI_Wait), a deadlock (two receives), a crashing rank, MPI_Abort,
  and a serial program (rank 0 does it all).
- ``gpusum``: CUDA on one GPU, nvcc in the package's own image (``setup/setup.sh``): a
  reduction, a host loop (correct, the GPU unused), a race, a kernel that never ends,
  an out-of-bounds write, a compile error; where no GPU is, ``check`` compiles them only.
"""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

EXAMPLES = ("bigsum", "meanstd", "spread")
FORMATS = ("guess", "codec", "subtasks", "parts")
AUTOGRADERS = ("wordfreq", "gsutils", "ringbuf", "notebook")
UNIT_TESTS = ("stats", "intstack", "strutil", "romans", "bank")
PARALLEL = ("primecount", "pimp", "mpisum", "gpusum")


def example_dirs(names: tuple[str, ...] = EXAMPLES) -> list[Path]:
    """Paths of the bundled course packages (or of ``names``)."""
    here = Path(__file__).resolve().parent
    return [here / name for name in names]


def all_example_dirs() -> list[Path]:
    """Every bundled package: the course's, the format examples, the autograders, the
    unit-test assignments and the parallel ones."""
    return example_dirs((*EXAMPLES, *FORMATS, *AUTOGRADERS, *UNIT_TESTS, *PARALLEL))


def course_file() -> Path:
    """The example course file for the bundled course's three assignments."""
    return Path(__file__).resolve().parent / "course.yaml"


#: what gradeline itself writes into a package it grades (``check``'s derived time
#: limit, Python's byte code): a copy holding them is still the bundled one
OWN = ("__pycache__", ".timelimit")


def _names(root: Path) -> set[str]:
    """Every file and link under ``root``, relative, without gradeline's own."""
    out = set()
    for p in root.rglob("*"):
        rel = p.relative_to(root)
        if any(part in OWN for part in rel.parts):
            continue
        if p.is_symlink() or p.is_file():
            out.add(rel.as_posix())
    return out


def differences(src: Path, dst: Path) -> list[str]:
    """How ``dst`` (a copy that exists) differs from the bundled ``src``: files edited,
    added or removed, links retargeted; empty when it is the same."""
    if src.is_file():
        return [] if dst.is_file() and filecmp.cmp(src, dst, shallow=False) else \
            ["differs from the bundled one"]
    if not dst.is_dir() or dst.is_symlink():
        return ["is not a directory"]
    mine, theirs = _names(src), _names(dst)
    out = [f"{n} is not in the bundled package" for n in sorted(theirs - mine)]
    out += [f"{n} was removed" for n in sorted(mine - theirs)]
    for n in sorted(mine & theirs):
        a, b = src / n, dst / n
        if a.is_symlink() or b.is_symlink():
            same = a.is_symlink() and b.is_symlink() and a.readlink() == b.readlink()
        else:
            same = filecmp.cmp(a, b, shallow=False)
        if not same:
            out.append(f"{n} differs")
    return out


def copy_examples(dest: Path) -> list[Path]:
    """Copy the packages to ``dest``, with the example course file beside them. Nothing
    there is overwritten or deleted: what is there already and the same as the bundled
    copy is kept as it is; anything else of the same name (an edited course.yaml, a
    package with files of its own) is refused before anything is written.

    :raises ExamplesConflict: naming each one and how it differs.
    """
    if dest.exists() and not dest.is_dir():
        raise ExamplesConflict(f"{dest}: not a directory")
    pairs = [(course_file(), dest / "course.yaml"),
             *((src, dest / src.name) for src in all_example_dirs())]
    found = [(t, differences(s, t)) for s, t in pairs if t.exists() or t.is_symlink()]
    clash = [(t, d) for t, d in found if d]
    if clash:
        shown = "; ".join(f"{t}: {', '.join(d[:3])}{' ...' if len(d) > 3 else ''}"
                          for t, d in clash[:5])
        raise ExamplesConflict(
            f"{dest}: what is there under the bundled names differs from the bundled "
            f"copy ({shown}): nothing was written; give a new or empty directory, or "
            "move those away first")
    dest.mkdir(parents=True, exist_ok=True)
    for src, target in pairs:
        if target.exists():
            continue  # the same as the bundled one (checked above)
        if src.is_file():
            shutil.copyfile(src, target)
        else:
            shutil.copytree(src, target, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__"))
    return [t for _, t in pairs[1:]]


class ExamplesConflict(ValueError):
    """``dest`` holds files of the same names as the bundled ones, and they differ."""
