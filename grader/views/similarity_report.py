"""A similarity report as staff read it: the report ``pipeline.similarity_jobs`` wrote,
and one of its pairs side by side with both students' files."""

from __future__ import annotations

import json

from pydantic import ValidationError

from grader.adapters.spool import Spool
from grader.core.errors import GradelineError
from grader.course.similarity_pairs import PairView, SimilarityReport, side_by_side


def read_report(spool: Spool, assignment: str) -> SimilarityReport | None:
    """The assignment's report (None: none made yet, or one this version cannot read:
    made again, it is)."""
    try:
        data = json.loads((spool.similarity(assignment) / "report.json").read_text())
        return SimilarityReport.from_json(data)
    except (OSError, ValueError, ValidationError):
        return None


def pair_view(spool: Spool, assignment: str, index: int) -> PairView | None:
    """Pair ``index`` of the report side by side (None: no such pair)."""
    report = read_report(spool, assignment)
    if report is None or not 0 <= index < len(report.pairs):
        return None
    p = report.pairs[index]
    def files(student: str) -> dict[str, str]:
        root = spool.compared(assignment, p.language, student)
        if not root.is_dir():
            raise GradelineError(f"{root}: gone (run the report again)")
        return {str(f.relative_to(root)): f.read_text(errors="replace")
                for f in sorted(root.rglob("*")) if f.is_file()}

    return side_by_side(p, files(p.a), files(p.b))
