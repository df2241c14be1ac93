"""The similarity report from the checker's pairs: which pairs staff look at (above a
threshold, most similar first) and a pair side by side with the matched lines marked.
Pure: the checker's JSON and the files' text in, plain data out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

DEFAULT_THRESHOLD = 0.5  # JPlag's average similarity; staff lower it to see more
MAX_LINES = 2000  # of a file in the side-by-side view


def flagged(pairs: Sequence[Mapping[str, Any]], threshold: float) -> list[dict[str, Any]]:
    """Pairs at or above ``threshold`` similarity, most similar first (names sorted
    within a pair, so a pair reads the same in every run)."""
    out = []
    for p in pairs:
        if float(p["similarity"]) + 1e-12 < threshold:
            continue
        a, b = str(p["first"]), str(p["second"])
        matches = list(p.get("matches", []))
        if b < a:
            a, b = b, a
            matches = [{"first": m["second"], "second": m["first"], "tokens": m["tokens"]}
                       for m in matches]
        out.append({"a": a, "b": b, "similarity": round(float(p["similarity"]), 4),
                    "max_similarity": round(float(p.get("max_similarity", 0.0)), 4),
                    "matches": matches})
    return sorted(out, key=lambda p: (-p["similarity"], p["a"], p["b"]))


def _marks(matches: Sequence[Mapping[str, Any]], side: str) -> dict[tuple[str, int], int]:
    """(file, line) -> the number of the match covering it (1-based)."""
    out: dict[tuple[str, int], int] = {}
    for i, m in enumerate(matches, 1):
        s = m[side]
        for line in range(int(s["start"]), int(s["end"]) + 1):
            out.setdefault((str(s["file"]), line), i)
    return out


def side_by_side(pair: Mapping[str, Any], files_a: Mapping[str, str],
                 files_b: Mapping[str, str]) -> dict[str, Any]:
    """Both students' files as numbered lines, each marked with the match it belongs
    to (0: none), for a view that shows them next to each other."""
    def lines(files: Mapping[str, str], side: str) -> list[dict[str, Any]]:
        marks = _marks(pair["matches"], side)
        return [{"file": name,
                 "lines": [{"n": n, "text": text, "match": marks.get((name, n), 0)}
                           for n, text in enumerate(body.splitlines()[:MAX_LINES], 1)]}
                for name, body in sorted(files.items())]

    return {"a": pair["a"], "b": pair["b"], "similarity": pair["similarity"],
            "matches": len(pair["matches"]), "left": lines(files_a, "first"),
            "right": lines(files_b, "second")}
