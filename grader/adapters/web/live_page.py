"""The live page: backlog, throughput, latency and verdicts of one snapshot, as plain
HTML with inline SVG charts in the shared design (no JavaScript, no network beyond
this server)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from grader.adapters.web.design import (
    esc,
    layout,
    link,
    reload_links,
    share_bar,
    stats,
    table,
    verdict_badge,
)
from grader.course.staffview import Bin, Snapshot

#: a line of a chart: (its value in a bin, its label)
Line = tuple[Callable[[Bin], float | None], str]


def span(seconds: float) -> str:
    """A window for people: "10 min", "28 h", "3 d" (never "1666.67 min").

    >>> span(600), span(100_000), span(3 * 86400)
    ('10 min', '28 h', '3 d')
    """
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} d"


def _summary(series: Sequence[Bin], keys: Sequence[Line], unit: str) -> str:
    """The chart in words, for its accessible name: each line's latest value and peak."""
    said = []
    for k, label in keys:
        vals = [v for p in series if (v := k(p)) is not None]
        if vals:
            said.append(f"{label} now {vals[-1]:.3g} {unit}, peak {max(vals):.3g} {unit}")
    return "; ".join(said) or "no data yet"


def _chart(series: Sequence[Bin], keys: Sequence[Line], unit: str, name: str,
           chart_id: str, w: int = 520, h: int = 160) -> str:
    """A line chart of ``series`` (oldest first) as inline SVG, named by its ``<title>``
    (what it shows, then the figures in words); the second line is dashed as well as
    coloured."""
    vals = [v for p in series for k, _ in keys if (v := k(p)) is not None]
    top = max(vals, default=0.0) or 1.0
    n = max(len(series) - 1, 1)
    lines = []
    for i, (k, label) in enumerate(keys, 1):
        xy = [(30 + (w - 40) * j / n, h - 20 - (h - 40) * v / top)
              for j, p in enumerate(series) if (v := k(p)) is not None]
        pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
        if pts:  # a lone point shows too
            lines.append(f'<polyline class="s{i}" points="{pts}"/>' + "".join(
                f'<circle class="s{i}" cx="{x:.1f}" cy="{y:.1f}" r="2.5"/>' for x, y in xy))
        lines.append(f'<text class="s{i}" x="{w - 60}" y="{14 * i}">{esc(label)}</text>')
    since = f"{span(-series[0].t)} ago" if series else ""
    return (f'<svg class="gl-chart" viewBox="0 0 {w} {h}" role="img" '
            f'aria-labelledby="{chart_id}"><title id="{chart_id}">{esc(name)}: '
            f"{esc(_summary(series, keys, unit))}</title>"
            f'<line class="axis" x1="30" y1="{h - 20}" x2="{w - 10}" y2="{h - 20}"/>'
            f'<text x="2" y="12">{top:.3g} {esc(unit)}</text>'
            f'<text x="30" y="{h - 4}">{since}</text><text x="{w - 30}" y="{h - 4}">now'
            "</text>" + "".join(lines) + "</svg>")


def _counts(caption: str, head: str, counts: Mapping[str, int], badges: bool) -> str:
    total = sum(counts.values())
    rows = [[verdict_badge(k) if badges else esc(k), str(v), share_bar(v, total)]
            for k, v in counts.items()]
    return table(caption, [head, "Submissions", "Share"], rows, numeric=(1,))


def page(s: Snapshot, refresh_s: int = 5, nav: str = "", *,
         auto: bool = False) -> str:
    """The live page of one snapshot.

    :param refresh_s: how often the page reloads once the reader turns that on.
    :param auto: the reader turned it on (``?refresh=on``).
    """
    def sec(v: float | None) -> str:
        return "–" if v is None else f"{v:.1f} s"

    window = span(s.window_s)
    figures = stats([
        ("waiting", str(s.waiting)), ("in progress", str(s.in_progress)),
        (f"stored (last {window})", str(s.stored)),
        ("per minute", f"{s.throughput_per_min:.1f}"), ("p50 feedback", sec(s.p50_s)),
        ("p95 feedback", sec(s.p95_s))])
    fails = [[esc(f.when), esc(f.student), esc(f.assignment), esc(f.what)]
             for f in s.failures]
    body = (
        reload_links(refresh_s, on=auto) + figures
        + "<h2>Throughput</h2>"
        + _chart(s.series, [(lambda p: p.per_min, "per min")], "/min",
                 f"Submissions stored per minute, last {window}", "chart-throughput")
        + "<h2>Feedback latency</h2>"
        + _chart(s.series, [(lambda p: p.p50, "p50"), (lambda p: p.p95, "p95")], "s",
                 f"Seconds from hand-in to feedback, median and 95th percentile, "
                 f"last {window}", "chart-latency")
        + "<h2>Verdicts</h2>"
        + _counts(f"Verdicts, last {window}", "Verdict", s.verdicts, badges=True)
        + "<h2>Where grading ran</h2>"
        + _counts(f"Results per node, last {window}", "Node", s.by_node, badges=False)
        + "<h2>Failures</h2>"
        + table("Failures (judge errors, refused submissions)",
                ["When", "Student", "Assignment", "What"], fails, wrap=(3,))
        + f'<p class="gl-muted">JSON at {link("api/snapshot", "api/snapshot")}</p>')
    return layout(f"gradeline live · {s.course}", body, nav=nav,
                  refresh_s=refresh_s if auto else None)
