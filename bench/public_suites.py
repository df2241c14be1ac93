"""The public example packages of the field, checked by gradeline: per suite, how many
labelled example submissions gradeline grades and how many get what their directory
and submissions.yaml say.

Each package is copied to scratch (nothing is written into the suite), then
``gradeline check --no-record`` grades its ``submissions/``; a package gradeline
refuses counts its reason. The suites are the git trees of DOMjudge
(``example_problems``, ``example_scoring_problems``), BAPCtools (``test/problems``),
problemtools (``examples``) and the format repository (``examples/problems``), checked
out anywhere:

    .venv/bin/python bench/public_suites.py --out bench/results/suites \\
        domjudge=~/src/domjudge/example_problems \\
        domjudge-scoring=~/src/domjudge/example_scoring_problems \\
        bapctools=~/src/BAPCtools/test/problems problemtools=~/src/problemtools/examples \\
        format=~/src/problem-package-format/examples/problems
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

BIN = Path(sys.executable).parent / "gradeline"
LINE = re.compile(r"^(ok|MISMATCH|skipped|ERROR)\s+(\S+?):")


def check(pkg: Path, log: Path) -> Counter[str]:
    """Counts of ok / MISMATCH / skipped / ERROR lines, or 'refused' for the package."""
    with tempfile.TemporaryDirectory(prefix="gl-suite-") as tmp:
        copy = Path(tmp) / pkg.name
        shutil.copytree(pkg, copy, symlinks=True)
        r = subprocess.run([str(BIN), "check", "--no-record", pkg.name], cwd=tmp,
                           capture_output=True, text=True, timeout=3600, check=False)
    text = (r.stdout + r.stderr).replace(str(copy), pkg.name)
    log.write_text(text)
    counts: Counter[str] = Counter()
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            counts[m.group(1)] += 1
    if r.returncode == 2 and not counts:
        counts["refused"] += 1
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("suites", nargs="+", help="NAME=DIR (a directory of packages)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = ["suite,package,graded,match,mismatch,skipped,error,refused"]
    for spec in args.suites:
        name, _, where = spec.partition("=")
        root = Path(where).expanduser()
        for pkg in sorted(p.parent for p in root.glob("*/problem.yaml")):
            c = check(pkg, args.out / f"{name}-{pkg.name}.log")
            graded = c["ok"] + c["MISMATCH"]
            rows.append(f"{name},{pkg.name},{graded},{c['ok']},{c['MISMATCH']},"
                        f"{c['skipped']},{c['ERROR']},{c['refused']}")
            print(rows[-1], flush=True)
    (args.out / "suites.csv").write_text("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
