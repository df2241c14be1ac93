"""Grading without a spool or database: a manifest of submissions (``gradeline
batch``), through the dedupe planner and an executor, like a run. (The packages'
self-check, ``gradeline check``, is ``pipeline.selfcheck``.)"""

from __future__ import annotations

import csv
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.core.errors import ConfigError
from grader.core.jobs import GradingJob, JudgeFault
from grader.core.submission import load_submission
from grader.formats.load import load_problem
from grader.formats.problem import Problem
from grader.pipeline import dedupe
from grader.pipeline.journal import append_line
from grader.pipeline.ports import Executor
from grader.pipeline.run import RunSummary

log = logging.getLogger(__name__)


@dataclass
class BatchSummary(RunSummary):
    """What a manifest batch did (``verdicts`` counts ``error`` for judge faults)."""

    submissions: int = 0
    mismatched: int = 0


def find_packages(names: Sequence[str], search: Sequence[Path]) -> dict[str, Problem]:
    """Each named assignment's package, from the first search directory holding it."""
    out: dict[str, Problem] = {}
    for a in names:
        if a in out:
            continue
        found = next((d / a for d in search if (d / a / "problem.yaml").is_file()), None)
        if found is None:
            raise ConfigError(f"assignment {a!r} not found under {[str(d) for d in search]}; "
                              "pass --assignments DIR")
        out[a] = load_problem(found)
    return out


def grade_manifest(manifest: Path, search: Sequence[Path], executor: Executor, out: Path,
                   *, dedupe_on: bool = True) -> BatchSummary:
    """Grade every row of ``manifest`` (see ``gradeline corpus``); one JSON line per row
    in ``out`` (student, assignment, path, reused_from, result or error)."""
    base = manifest.parent
    with manifest.open(encoding="utf-8") as mf:
        rows = list(csv.DictReader(mf))
    problems = find_packages([r["assignment"] for r in rows], search)
    cands = []
    for r in rows:
        path = (base / r["path"]).resolve()
        p = problems[r["assignment"]]
        cands.append(dedupe.Candidate(str(path), GradingJob(p.path, path), p,
                                      load_submission(path).content_hash))
    plan = dedupe.plan(cands, dedupe=dedupe_on)
    s = BatchSummary(submissions=len(rows), graded=len(plan.leaders), reused=plan.reused)
    t0 = time.monotonic()
    graded = {g.candidate.key: g for g in dedupe.execute(plan, executor)}
    s.elapsed_s = time.monotonic() - t0
    out.unlink(missing_ok=True)
    for r, c in zip(rows, cands, strict=True):
        g = graded[c.key]
        a = r["assignment"]
        rec: dict[str, object] = {
            "student": r["student"], "assignment": a, "path": r["path"],
            "reused_from": os.path.relpath(g.reused_from, base) if g.reused_from else None}
        result = g.outcome.result
        if isinstance(result, JudgeFault):
            s.count(a, "error", None)
            rec["error"] = result.reason
        else:
            s.count(a, result.verdict.value, result.score)
            rec["result"] = result.to_dict()
            want = r.get("expected_verdict")
            if want and want != result.verdict.value:
                s.mismatched += 1
                log.warning("%s: expected %s, got %s", r["path"], want, result.verdict.value)
        append_line(out, rec)
    return s
