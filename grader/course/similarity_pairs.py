"""The similarity report from the checker's pairs: which pairs staff look at (above a
threshold, most similar first) and a pair side by side with the matched lines marked.
Pure: the checker's JSON and the files' text in, values out (the report as
``pipeline.similarity_jobs`` writes it and the staff pages read it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from grader.course.shown import Shown

DEFAULT_THRESHOLD = 0.5  # JPlag's average similarity; staff lower it to see more
MAX_LINES = 2000  # of a file in the side-by-side view


@dataclass(frozen=True, slots=True)
class Region(Shown):
    """Lines ``start`` to ``end`` (1-based, inclusive) of a file."""

    file: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Match(Shown):
    """A region of the first student's files matched in the second's."""

    first: Region
    second: Region
    tokens: int


@dataclass(frozen=True, slots=True)
class SimilarPair(Shown):
    """Two students whose files are alike (``a`` before ``b``), how much, and where;
    in a report, the language compared and the two submissions (``ids``)."""

    a: str
    b: str
    similarity: float
    max_similarity: float
    matches: tuple[Match, ...]
    language: str = ""
    ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SimilarityReport(Shown):
    """One assignment's report: what was compared, what was left out and why, and the
    pairs at or above ``threshold``, most similar first."""

    assignment: str
    made: str  # ISO
    tool: str
    threshold: float
    min_tokens: int
    students: int
    languages: dict[str, int]
    starter: bool
    skipped: tuple[str, ...]
    pairs: tuple[SimilarPair, ...]


@dataclass(frozen=True, slots=True)
class Line(Shown):
    """A numbered line and the match it belongs to (0: none)."""

    n: int
    text: str
    match: int


@dataclass(frozen=True, slots=True)
class FileLines(Shown):
    file: str
    lines: tuple[Line, ...]


@dataclass(frozen=True, slots=True)
class PairView(Shown):
    """A pair side by side: both students' files, the matched lines marked."""

    a: str
    b: str
    similarity: float
    matches: int
    left: tuple[FileLines, ...]
    right: tuple[FileLines, ...]


def _region(side: Mapping[str, object]) -> Region:
    return Region(str(side["file"]), int(str(side["start"])), int(str(side["end"])))


def _pair(p: Mapping[str, object]) -> SimilarPair:
    """A pair as the checker wrote it (``first``, ``second``, ``matches``: JSON)."""
    raw = p.get("matches")
    matches = tuple(Match(_region(m["first"]), _region(m["second"]), int(m["tokens"]))
                    for m in (raw if isinstance(raw, list) else []))
    return SimilarPair(str(p["first"]), str(p["second"]), float(str(p["similarity"])),
                       float(str(p.get("max_similarity", 0.0))), matches)


def flagged(pairs: Sequence[Mapping[str, object]], threshold: float) -> list[SimilarPair]:
    """The checker's pairs at or above ``threshold`` similarity, most similar first
    (names sorted within a pair, so a pair reads the same in every run)."""
    out = []
    for p in map(_pair, pairs):
        if p.similarity + 1e-12 < threshold:
            continue
        if p.b < p.a:
            p = replace(p, a=p.b, b=p.a, matches=tuple(Match(m.second, m.first, m.tokens)
                                                       for m in p.matches))
        out.append(replace(p, similarity=round(p.similarity, 4),
                           max_similarity=round(p.max_similarity, 4)))
    return sorted(out, key=lambda p: (-p.similarity, p.a, p.b))


def _marks(matches: Sequence[Match], first: bool) -> dict[tuple[str, int], int]:
    """(file, line) -> the number of the match covering it (1-based)."""
    out: dict[tuple[str, int], int] = {}
    for i, m in enumerate(matches, 1):
        s = m.first if first else m.second
        for line in range(s.start, s.end + 1):
            out.setdefault((s.file, line), i)
    return out


def side_by_side(pair: SimilarPair, files_a: Mapping[str, str],
                 files_b: Mapping[str, str]) -> PairView:
    """Both students' files as numbered lines, each marked with the match it belongs
    to (0: none), for a view that shows them next to each other."""
    def lines(files: Mapping[str, str], first: bool) -> tuple[FileLines, ...]:
        marks = _marks(pair.matches, first)
        return tuple(FileLines(name, tuple(Line(n, text, marks.get((name, n), 0))
                                           for n, text in
                                           enumerate(body.splitlines()[:MAX_LINES], 1)))
                     for name, body in sorted(files.items()))

    return PairView(pair.a, pair.b, pair.similarity, len(pair.matches),
                    lines(files_a, True), lines(files_b, False))
