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
"""

from __future__ import annotations

import shutil
from pathlib import Path

EXAMPLES = ("bigsum", "meanstd", "spread")
FORMATS = ("guess", "codec", "subtasks", "parts")
AUTOGRADERS = ("wordfreq", "gsutils", "ringbuf", "notebook")
UNIT_TESTS = ("stats", "intstack", "strutil", "romans", "bank")
PARALLEL = ("primecount", "pimp")


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


def copy_examples(dest: Path) -> list[Path]:
    """Copy the packages to ``dest`` (existing copies are replaced), with the example
    course file beside them."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(course_file(), dest / "course.yaml")
    out = []
    for src in all_example_dirs():
        target = dest / src.name
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(src, target, symlinks=True)
        out.append(target)
    return out
