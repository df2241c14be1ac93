"""Notebook assignments (issue #46): the bundled Otter-Grader autograder, as ``otter
assign`` wrote it, graded by gradeline on its pip-built image gives each notebook the
score ``otter run`` gives the same notebook; hostile notebooks end in a verdict, never a
forged score, except where Otter itself runs the student's code in its grading kernel
(which the notebook page documents)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from ..support import EXAMPLES, ROOT, descendants, gl

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
NOTEBOOK = EXAMPLES / "notebook"
HOSTILE = Path(__file__).resolve().parent.parent / "hostile" / "notebooks"
OTTER = "otter-grader[grading]==7.0.0"


@pytest.fixture(scope="module")
def otter() -> Path:
    """Otter-Grader's own command line, in a venv of its own under build/ (made once
    from PyPI; what `make notebook-autograder` uses too)."""
    venv = ROOT / "build" / "tools" / "otter"
    exe = venv / "bin" / "otter"
    if not exe.exists():
        subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True)
        r = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", OTTER],
                           capture_output=True, text=True, timeout=1200)
        if r.returncode != 0:
            reason = f"pip install {OTTER} failed: {r.stderr[-500:]}"
            if os.environ.get("GRADELINE_REQUIRE_SANDBOX") == "1":
                pytest.fail(reason)
            pytest.skip(reason)
    return exe


def _gradeline(notebook: Path) -> tuple[dict[str, object], float]:
    t0 = time.monotonic()
    r = gl("grade", NOTEBOOK, notebook, "--json", timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout), time.monotonic() - t0


def _otter_run(otter: Path, notebook: Path, out: Path) -> tuple[float, float]:
    """(score, seconds) of ``otter run`` (Otter's way to grade without a container)."""
    out.mkdir(parents=True)
    t0 = time.monotonic()
    r = subprocess.run([str(otter), "run", "-a", str(NOTEBOOK / "autograder.zip"),
                        str(notebook), "-o", str(out)], capture_output=True, text=True,
                       timeout=900, env={**os.environ, "PATH": f"{otter.parent}:/usr/bin:/bin"})
    seconds = time.monotonic() - t0
    assert r.returncode == 0, r.stdout + r.stderr
    tests = json.loads((out / "results.json").read_text())["tests"]
    return sum(t.get("score", 0) for t in tests if "max_score" in t), seconds


def test_gradeline_gives_each_notebook_the_score_otter_run_gives(otter, tmp_path):
    rows = []
    for nb in sorted(NOTEBOOK.glob("submissions/*/*.ipynb")):
        result, gl_s = _gradeline(nb)
        score, otter_s = _otter_run(otter, nb, tmp_path / nb.stem)
        rows.append((f"{nb.parent.name}/{nb.name}", result["score"], score, gl_s, otter_s))
        assert result["score"] == score and result["max_score"] == 10, (nb, result)
        assert result["runtime"]["autograder"] == "gradescope"
    print("\nnotebook                      gradeline  otter run   gradeline s  otter run s")
    for name, ours, theirs, a, b in rows:
        print(f"{name:<30}{ours:>9g}{theirs:>11g}{a:>13.1f}{b:>13.1f}")
    assert {r[1] for r in rows} == {10, 7, 6, 0}


def test_the_students_see_public_output_never_hidden_tests(tmp_path):
    result, _ = _gradeline(NOTEBOOK / "submissions/wrong_answer/partial.ipynb")
    groups = {t["name"]: t["group"] for t in result["tests"]}
    assert groups["Public Tests"] == "gradescope/visible"
    assert {groups[q] for q in ("q1", "q2", "q3")} == {"gradescope/hidden"}


@pytest.mark.parametrize(("name", "verdicts", "scores", "why"), [
    ("overwrite_results", {"WA"}, {0}, "a forged results.json (now, and by a process left "
                                       "behind after grading) is never what is read"),
    ("network", {"WA"}, {3}, "no network: both probes fail, the answers needing them too"),
    ("fork", {"AC", "MLE", "TLE"}, {10, 0}, "the run's process and memory limits hold: the "
                                            "bomb ends in a limit's verdict or is survived"),
    ("read_hidden", {"AC"}, {10}, "Otter's tests are readable by the kernel running the "
                                  "student's code: not preventable outside Otter"),
    ("monkeypatch", {"AC"}, {10}, "Otter runs its tests in the student's kernel: not "
                                  "preventable outside Otter"),
])
def test_hostile_notebooks_end_in_a_verdict(name, verdicts, scores, why):
    result, seconds = _gradeline(HOSTILE / f"{name}.ipynb")
    assert result["verdict"] in verdicts, (why, result["verdict"], result["message"])
    assert result["score"] in scores, (why, result["score"])
    assert seconds < 600
    left = [pid for pid in descendants() if Path(f"/proc/{pid}/cmdline").exists()
            and b"ipykernel" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    assert not left, f"{name}: kernels outlived the run: {left}"
    print(f"\n{name}: {result['verdict']} {result['score']:g}/10 in {seconds:.1f} s ({why})")


def test_an_environment_pip_cannot_build_is_refused_at_build_naming_it(tmp_path):
    """A conda-only dependency (R's r-base) is named, with what to do, before anything
    builds; nothing is graded."""
    pkg = tmp_path / "notebook-r"
    shutil.copytree(NOTEBOOK, pkg)
    src = tmp_path / "unzipped"
    with zipfile.ZipFile(NOTEBOOK / "autograder.zip") as z:
        z.extractall(src)
    env = (src / "environment.yml").read_text().replace("  - pip\n", "  - pip\n  - r-base\n")
    (src / "environment.yml").write_text(env)
    with zipfile.ZipFile(pkg / "autograder.zip", "w") as z:
        for f in sorted(src.rglob("*")):
            if f.is_file():
                z.write(f, f.relative_to(src).as_posix())
    r = gl("image", "build", "--assignment", pkg)
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert "'r-base' is a conda package" in r.stderr and "pip alone" in r.stderr
