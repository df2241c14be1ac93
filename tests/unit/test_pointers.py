"""Every file and module the docs, docstrings and comments point to exists: a moved
file must not leave a pointer to where it was."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOP = ("grader", "analysis", "tests", "bench", "workflows", "profiles", "containers",
       "slurm", "docs", ".ci")
#: a path into the tree, e.g. grader/formats/problem.py or slurm/slurm.conf.in
_TOPS = "|".join(re.escape(t) for t in TOP)
PATH = re.compile(rf"(?<![\w./-])((?:{_TOPS})/[\w./+-]*\w)")
#: a module of the package, e.g. grader.pipeline.slurm.tickets (or a name in it)
MODULE = re.compile(r"(?<![\w.-])((?:grader|analysis)(?:\.\w+)+)")
#: a module named from inside the package in a docstring, e.g. ``pipeline.serve``
SHORT = re.compile(r"``((?:core|formats|judge|adapters|pipeline|views|compose|measure|planning|"
                   r"cli)(?:\.\w+)+)")
TEXT = (".py", ".md", ".smk", ".yaml", ".yml", ".sh", ".c", ".def", ".in", ".toml", ".cfg")


def _files() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.split()
    keep = []
    for name in out:
        p = ROOT / name
        text = name.endswith(TEXT) or p.name in ("Snakefile", "Makefile", "run")
        mine = name == "tests/unit/test_pointers.py"  # its own examples of missing ones
        if text and not mine and "/examples/" not in name \
                and not name.startswith("bench/results/"):
            keep.append(p)
    return keep


def _exists(ref: str) -> bool:
    if any(c in ref for c in "<>*{}$"):  # a pattern or a placeholder, not a file
        return True
    return (ROOT / ref.rstrip(".")).exists()


#: file names that read like dotted names (grader.def, grader.sif)
NOT_MODULES = ("def", "sif", "old", "py", "md", "yaml", "json", "csv", "txt")


def _module_exists(ref: str) -> bool:
    parts = ref.split(".")
    if parts[-1] in NOT_MODULES:
        return True
    # the longest prefix that is a module or package; the next part, if any, must be
    # a name it holds (``grader.formats.load.load_problem``)
    for n in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:n])
        source = base.with_suffix(".py") if base.with_suffix(".py").exists() \
            else base / "__init__.py"
        if source.exists():
            return n == len(parts) or re.search(
                rf"\b{re.escape(parts[n])}\b", source.read_text()) is not None
    return False


def test_the_scan_finds_pointers() -> None:
    """The scanner sees the pointers it is meant to check (a scan of nothing passes)."""
    text = "see grader/formats/problem.py and ``grader.pipeline.slurm.tickets``"
    assert PATH.findall(text) == ["grader/formats/problem.py"]
    assert MODULE.findall(text) == ["grader.pipeline.slurm.tickets"]
    assert SHORT.findall("as ``pipeline.serve`` does") == ["pipeline.serve"]
    assert not _exists("grader/pipeline/pilots.py")
    assert not _module_exists("grader.pipeline.pilots")
    assert _module_exists("grader.formats.load.load_problem")
    assert _module_exists("grader.def")
    assert len(_files()) > 100


def test_every_pointer_to_a_file_or_module_resolves() -> None:
    missing = []
    for p in _files():
        rel = p.relative_to(ROOT).as_posix()
        for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
            for ref in PATH.findall(line):
                if not _exists(ref):
                    missing.append(f"{rel}:{i}: {ref}")
            for ref in MODULE.findall(line):
                if not _module_exists(ref):
                    missing.append(f"{rel}:{i}: {ref}")
            for ref in SHORT.findall(line):
                if not _module_exists(f"grader.{ref}"):
                    missing.append(f"{rel}:{i}: {ref}")
    assert not missing, "\n".join(missing)
