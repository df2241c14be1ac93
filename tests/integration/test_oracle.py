"""Kattis's own verifier (problemtools' ``verifyproblem``, from PyPI) as a differential
oracle: on the bundled legacy packages, on generated ones (random test data trees,
shared cases by symlink, random testdata.yaml grader settings, pass-fail and scoring)
and on an interactive one, every example submission must get the same verdict --
and, for scoring problems, the same score -- from gradeline as from problemtools.

problemtools supports the legacy and 2023-07-draft formats (not 2025-09); it runs
submissions on the host with its own language table, which the test points at the
host's python3, gcc and g++ (its default Python is PyPy). Verdicts are compared in
Kattis's categories: gradeline's MLE and OLE are RTE there.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..support import EXAMPLES

VENV_BIN = Path(sys.executable).parent
pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

KATTIS = {"AC": "AC", "WA": "WA", "TLE": "TLE", "RE": "RTE", "MLE": "RTE", "OLE": "RTE",
          "CE": "CE", "JE": "JE"}
LANGUAGES = """\
c:
    name: 'C'
    priority: 950
    files: '*.c'
    compile: 'gcc -O2 -std=gnu17 -o {binary} {files} -lm'
    run: '{binary}'
cpp:
    name: 'C++'
    priority: 1000
    files: '*.cc *.C *.cpp *.cxx *.c++'
    compile: 'g++ -O2 -std=gnu++17 -o {binary} {files}'
    run: '{binary}'
python3:
    name: 'Python 3'
    priority: 850
    files: '*.py *.py3'
    compile: 'python3 -m py_compile {files}'
    run: 'python3 "{mainfile}"'
"""
# "   accepted/sum.c (C) OK: AC [CPU: 0.02s @ testcase secret/large/03]"
RESULT = re.compile(r"^\s*(\S+/\S+) \([^)]*\) .*?\b(AC|WA|TLE|RTE|JE|PAC)\b"
                    r"(?: \((-?[\d.]+)\))?", re.M)


def _need_problemtools() -> Path:
    tool = VENV_BIN / "verifyproblem"
    if not tool.exists():
        if os.environ.get("GRADELINE_REQUIRE_SANDBOX") == "1":
            pytest.fail("make test installs problemtools (the dev extra); it is missing")
        pytest.skip("needs problemtools (pip install problemtools)")
    return tool


def problemtools(pkg: Path, tmp: Path, time_limit: float) -> dict[str, tuple[str, float | None]]:
    """{submission dir/file: (verdict, score)} as verifyproblem judged them."""
    xdg = tmp / "xdg"
    (xdg / "problemtools").mkdir(parents=True, exist_ok=True)
    (xdg / "problemtools" / "languages.yaml").write_text(LANGUAGES)
    r = subprocess.run([str(_need_problemtools()), "-p", "config", "data", "submissions",
                        "-t", f"{time_limit:g}", "-l", "info", str(pkg)],
                       capture_output=True, text=True, timeout=900,
                       env={**os.environ, "XDG_CONFIG_HOME": str(xdg)})
    out: dict[str, tuple[str, float | None]] = {}
    for m in RESULT.finditer(r.stdout + r.stderr):
        out[m.group(1)] = (m.group(2), float(m.group(3)) if m.group(3) else None)
    assert out, f"verifyproblem judged nothing:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return out


def gradeline(pkg: Path, sub: Path) -> tuple[str, float]:
    r = subprocess.run([str(VENV_BIN / "gradeline"), "grade", str(pkg), str(sub), "--json"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    return KATTIS[res["verdict"]], float(res["score"])


def compare(pkg: Path, tmp: Path, time_limit: float, scoring: bool) -> None:
    theirs = problemtools(pkg, tmp, time_limit)
    diffs = []
    for name, (verdict, score) in sorted(theirs.items()):
        mine, my_score = gradeline(pkg, pkg / "submissions" / name)
        if verdict == "PAC":
            verdict = "AC"
        if mine != verdict or (scoring and score is not None and round(my_score) != score):
            diffs.append(f"{name}: problemtools {verdict} {score}, gradeline {mine} {my_score:g}")
    assert not diffs, f"{pkg.name}: " + "; ".join(diffs)


# problemtools limits CPU time only: a submission that sleeps forever hangs it (gradeline
# gives TLE on the wall clock, tests/integration/test_hostile.py checks that)
CPU_ONLY_BLIND = {"spread": ["time_limit_exceeded/search.py"]}


@pytest.mark.parametrize("name", ["bigsum", "meanstd", "spread", "subtasks"])
def test_bundled_legacy_packages_agree(name: str, tmp_path: Path, sandbox_factory: object
                                       ) -> None:
    pkg = tmp_path / name
    shutil.copytree(EXAMPLES / name, pkg, symlinks=True)
    for rel in CPU_ONLY_BLIND.get(name, ()):
        (pkg / "submissions" / rel).unlink()
    compare(pkg, tmp_path, 1.0, scoring=name == "subtasks")


# -- generated packages --------------------------------------------------------------
PROGRAMS = {
    # every submission reads "a b" and answers a + b, except where its flaw bites
    "accepted/ok.py": "a, b = map(int, input().split())\nprint(a + b)\n",
    "wrong_answer/w3.py": "a, b = map(int, input().split())\nprint(a + b + (a % 3 == 0))\n",
    "run_time_error/c5.py": ("a, b = map(int, input().split())\nassert a % 5\n"
                             "print(a + b)\n"),
    "time_limit_exceeded/l7.py": ("a, b = map(int, input().split())\n"
                                  "while a % 7 == 0:\n    pass\nprint(a + b)\n"),
    "wrong_answer/mix.py": ("a, b = map(int, input().split())\nassert a % 11\n"
                            "print(a + b + (a % 2 == 0))\n"),
}


def generate(root: Path, rng: random.Random, scoring: bool) -> None:
    """A random legacy package: groups (some nested), cases shared by symlink, grader
    settings at random nodes."""
    (root / "data" / "sample").mkdir(parents=True)
    kind = "scoring" if scoring else "pass-fail"
    (root / "problem.yaml").write_text(f"name: Gen\ntype: {kind}\n")
    (root / ".timelimit").write_text("1\n")  # legacy has no limits.time_limit

    def case(d: Path, name: str) -> Path:
        a, b = rng.randint(1, 60), rng.randint(1, 60)
        (d / f"{name}.in").write_text(f"{a} {b}\n")
        (d / f"{name}.ans").write_text(f"{a + b}\n")
        return d / f"{name}.in"

    def settings(d: Path, top: bool = False) -> None:
        if rng.random() < 0.3 and not top:
            return
        cfg = [f"on_reject: {rng.choice(['break', 'continue'])}"]
        if scoring:
            flags = [rng.choice(["sum", "min", "max", "avg"]),
                     rng.choice(["worst_error", "first_error", "always_accept"])]
            if rng.random() < 0.2:
                flags.append("accept_if_any_accepted")
            cfg += [f"grader_flags: {' '.join(flags)}",
                    f"accept_score: {rng.randint(0, 40)}"]
            if rng.random() < 0.3:
                cfg.append(f"reject_score: {rng.randint(0, 3)}")
        (d / "testdata.yaml").write_text("\n".join(cfg) + "\n")

    case(root / "data" / "sample", "1")
    settings(root / "data", top=True)
    secret = root / "data" / "secret"
    made: list[Path] = []
    for g in range(rng.randint(1, 3)):
        gd = secret / f"g{g}"
        gd.mkdir(parents=True)
        settings(gd)
        for c in range(rng.randint(1, 4)):
            made.append(case(gd, f"{c:02d}"))
        if rng.random() < 0.4:
            sub = gd / "deep"
            sub.mkdir()
            settings(sub)
            made.append(case(sub, "01"))
        if made and rng.random() < 0.5:  # share an earlier case by symlink
            src = rng.choice(made)
            for ext in ("in", "ans"):
                (gd / f"zz.{ext}").symlink_to(os.path.relpath(src.with_suffix(f".{ext}"), gd))
    for rel, text in PROGRAMS.items():
        p = root / "submissions" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


@pytest.mark.parametrize("seed", range(6))
def test_generated_packages_agree(seed: int, tmp_path: Path, sandbox_factory: object) -> None:
    rng = random.Random(seed)
    scoring = seed % 2 == 1
    pkg = tmp_path / f"gen{seed}"
    generate(pkg, rng, scoring)
    compare(pkg, tmp_path, 1.0, scoring=scoring)


def test_interactive_package_agrees(tmp_path: Path, sandbox_factory: object) -> None:
    """guess, rewritten in the legacy format (problemtools reads no 2025-09)."""
    src, pkg = EXAMPLES / "guess", tmp_path / "guesslegacy"
    shutil.copytree(src / "data", pkg / "data")
    (pkg / "problem.yaml").write_text("name: Guess\nvalidation: custom interactive\n"
                                      "limits: {memory: 256}\n")
    (pkg / "output_validators" / "interactor").mkdir(parents=True)
    shutil.copy(src / "output_validator" / "validator.py",
                pkg / "output_validators" / "interactor" / "validator.py")
    for sub in ("accepted/binary.py", "wrong_answer/linear.py", "wrong_answer/garbage.py",
                "wrong_answer/quits.py", "run_time_error/crash.py"):
        (pkg / "submissions" / sub).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src / "submissions" / sub, pkg / "submissions" / sub)
    (pkg / "gradeline.yaml").write_text("time_limit_s: 1\n")
    compare(pkg, tmp_path, 1.0, scoring=False)


def test_float_tolerance_flags_agree(tmp_path: Path, sandbox_factory: object) -> None:
    """The default validator's float_tolerance (legacy validator_flags): an answer off
    by less than the tolerance is AC in both, one off by more is WA in both."""
    pkg = tmp_path / "third"
    (pkg / "data" / "sample").mkdir(parents=True)
    (pkg / "data" / "secret").mkdir()
    (pkg / "problem.yaml").write_text("name: Third\nvalidator_flags: float_tolerance 1e-6\n")
    (pkg / ".timelimit").write_text("1\n")
    for d, (a, b) in (("sample/1", (1, 3)), ("secret/1", (2, 7)), ("secret/2", (10, 9))):
        (pkg / "data" / f"{d}.in").write_text(f"{a} {b}\n")
        (pkg / "data" / f"{d}.ans").write_text(f"{a / b:.12f}\n")
    programs = {"accepted/exact.py": "print(f'{a / b:.12f}')",
                "accepted/near.py": "print(a / b + 4e-7)",
                "accepted/relative.py": "print(f'{a / b * (1 + 5e-7):.9f}')",
                "wrong_answer/far.py": "print(a / b + 3e-6)",
                "wrong_answer/rounded.py": "print(f'{a / b:.3f}')"}
    for rel, line in programs.items():
        (pkg / "submissions" / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / "submissions" / rel).write_text(f"a, b = map(int, input().split())\n{line}\n")
    compare(pkg, tmp_path, 1.0, scoring=False)
    # and both agree with the labels: within the tolerance AC, beyond it WA
    r = subprocess.run([str(VENV_BIN / "gradeline"), "check", "--no-record", str(pkg)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "5 as expected" in r.stdout, r.stdout[-3000:]
