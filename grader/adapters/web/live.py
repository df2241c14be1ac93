"""The live page: backlog, throughput, latency and verdicts of one snapshot, as plain
HTML with inline SVG charts (no JavaScript library, no network beyond this server)."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

CSS = """body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1100px;color:#222}
.cards{display:flex;gap:1em;flex-wrap:wrap}.card{border:1px solid #ddd;border-radius:6px;
padding:.6em 1em;min-width:9em}.card b{display:block;font-size:1.6em}
table{border-collapse:collapse}td,th{padding:.2em .7em;border-bottom:1px solid #eee;
text-align:left}svg{border:1px solid #eee;background:#fcfcfc}.bad{color:#b00}"""


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


def _chart(series: Sequence[Mapping[str, Any]], keys: Sequence[tuple[str, str]],
           unit: str, w: int = 520, h: int = 160) -> str:
    """A line chart of ``series`` (oldest first) as inline SVG."""
    vals = [p[k] for p in series for k, _ in keys if p.get(k) is not None]
    top = max(vals, default=0.0) or 1.0
    n = max(len(series) - 1, 1)
    lines = []
    for k, color in keys:
        xy = [(30 + (w - 40) * i / n, h - 20 - (h - 40) * p[k] / top)
              for i, p in enumerate(series) if p.get(k) is not None]
        pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
        dots = "".join(f"<circle cx='{x:.1f}' cy='{y:.1f}' r='2.5' fill='{color}'/>"
                       for x, y in xy)  # a lone point shows too
        lines.append(f"<polyline fill='none' stroke='{color}' stroke-width='2' "
                     f"points='{pts}'/>{dots}" if pts else "")
        lines.append(f"<text x='{w - 60}' y='{14 + 14 * len(lines) // 2}' fill='{color}' "
                     f"font-size='11'>{html.escape(k)}</text>")
    return (f"<svg class='chart' width='{w}' height='{h}' role='img'>"
            f"<text x='2' y='12' font-size='11'>{top:.3g} {html.escape(unit)}</text>"
            f"<text x='2' y='{h - 4}' font-size='11'>{series[0]['t'] / 60 if series else 0:.0f}"
            f" min</text><text x='{w - 30}' y='{h - 4}' font-size='11'>now</text>"
            + "".join(lines) + "</svg>")


def _bars(counts: Mapping[str, int]) -> str:
    total = sum(counts.values()) or 1
    rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{v}</td><td><svg width='200' "
                   f"height='10'><rect width='{200 * v / total:.0f}' height='10' "
                   f"fill='#4a7'/></svg></td></tr>" for k, v in counts.items())
    return f"<table>{rows}</table>" if rows else "<p>none yet</p>"


def page(s: Mapping[str, Any], refresh_s: int = 5, nav: str = "") -> str:
    """The live page of one snapshot."""
    def sec(v: float | None) -> str:
        return "–" if v is None else f"{v:.1f} s"

    esc = html.escape
    cards = "".join(f"<div class='card'>{esc(label)}<b>{value}</b></div>" for label, value in (
        ("waiting", s["waiting"]), ("in progress", s["in_progress"]),
        (f"stored (last {span(s['window_s'])})", s["stored"]),
        ("per minute", f"{s['throughput_per_min']:.1f}"), ("p50 feedback", sec(s["p50_s"])),
        ("p95 feedback", sec(s["p95_s"]))))
    fails = "".join(f"<tr class='bad'><td>{esc(f['when'])}</td><td>{esc(f['student'])}</td>"
                    f"<td>{esc(f['assignment'])}</td><td>{esc(f['what'])}</td></tr>"
                    for f in s["failures"])
    return (f"<!doctype html><html><head><meta charset='utf-8'>"
            f"<meta http-equiv='refresh' content='{refresh_s}'>"
            f"<title>gradeline live: {esc(s['course'])}</title><style>{CSS}</style></head>"
            f"<body data-ready='1'><h1>gradeline live &middot; {esc(s['course'])}</h1>{nav}"
            f"<div class='cards'>{cards}</div>"
            f"<h2>Throughput</h2>{_chart(s['series'], [('per_min', '#1f77b4')], '/min')}"
            f"<h2>Feedback latency</h2>"
            f"{_chart(s['series'], [('p50', '#2ca02c'), ('p95', '#d62728')], 's')}"
            f"<h2>Verdicts</h2>{_bars(s['verdicts'])}"
            f"<h2>Where grading ran</h2>{_bars(s['by_node'])}"
            f"<h2>Failures (judge errors, refused submissions)</h2>"
            + (f"<table>{fails}</table>" if fails else "<p>none</p>")
            + f"<p><small>refreshes every {refresh_s} s; JSON at "
              "<a href='api/snapshot'>api/snapshot</a></small></p></body></html>")
