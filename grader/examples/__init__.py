"""Bundled example assignments (Kattis packages) for the demo, tests and benchmarks.

- ``bigsum``: test groups with all-or-nothing and proportional points.
- ``meanstd``: default validator with a float tolerance.
- ``spread``: a custom output validator (many correct answers).
"""

from __future__ import annotations

import shutil
from pathlib import Path

EXAMPLES = ("bigsum", "meanstd", "spread")


def example_dirs() -> list[Path]:
    """Paths of the bundled packages."""
    here = Path(__file__).resolve().parent
    return [here / name for name in EXAMPLES]


def copy_examples(dest: Path) -> list[Path]:
    """Copy the packages to ``dest`` (existing copies are replaced)."""
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for src in example_dirs():
        target = dest / src.name
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(src, target)
        out.append(target)
    return out
