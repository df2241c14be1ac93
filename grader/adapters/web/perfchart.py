"""A student's performance tests on their page (``course.shown.ShownPerformance``): the
speedup curve S(N) of their program against the reference's and the ideal line, with
95 % confidence bars, drawn as inline SVG (no script, the page's colours, light and
dark), described for a screen reader, and the same figures in a table beside it; the
cache reading's sentence, its source and its counts in a table; and the measurements a
student asked for on demand, each marked so."""

from __future__ import annotations

from grader.adapters.web.design import esc, muted, notice, num, table
from grader.course.shown import OnDemand, ShownCache, ShownPerformance, ShownTiming

W, H = 480, 300
LEFT, RIGHT, TOP, BOTTOM = 52, 16, 20, 46


def _x(cores: int, lo: int, hi: int) -> float:
    return LEFT + (W - LEFT - RIGHT) * ((cores - lo) / (hi - lo) if hi > lo else 0.5)


def _y(value: float, top: float) -> float:
    return H - BOTTOM - (H - TOP - BOTTOM) * (value / top if top > 0 else 0)


def _polyline(points: list[tuple[float, float]], css: str) -> str:
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return f'<polyline class="{css}" points="{path}"/>'


def speedup_chart(ts: tuple[ShownTiming, ...], tid: str) -> str:
    """The S(N) chart (``tid``: its ids on the page)."""
    lo, hi = ts[0].cores, ts[-1].cores
    ideal = [t.cores / lo for t in ts]
    top = max([*ideal, *(t.speedup + (t.speedup_ci or 0) for t in ts),
               *(t.reference_speedup for t in ts)]) * 1.15
    parts = [f'<line class="axis" x1="{LEFT}" y1="{H - BOTTOM}" x2="{W - RIGHT}" '
             f'y2="{H - BOTTOM}"/>',
             f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{H - BOTTOM}"/>']
    for k in range(int(top) + 1):  # a grid line and label per whole speedup
        y = _y(k, top)
        parts.append(f'<line class="grid" x1="{LEFT}" y1="{y:.1f}" x2="{W - RIGHT}" '
                     f'y2="{y:.1f}"/><text x="{LEFT - 6}" y="{y + 4:.1f}" '
                     f'text-anchor="end">{k}</text>')
    for t in ts:
        x = _x(t.cores, lo, hi)
        parts.append(f'<text x="{x:.1f}" y="{H - BOTTOM + 18}" '
                     f'text-anchor="middle">{t.cores}</text>')
    parts.append(f'<text class="name" x="{(LEFT + W - RIGHT) / 2:.0f}" y="{H - 6}" '
                 'text-anchor="middle">cores</text>')
    parts.append(f'<text class="name" x="14" y="{(TOP + H - BOTTOM) / 2:.0f}" '
                 f'text-anchor="middle" transform="rotate(-90 14 '
                 f'{(TOP + H - BOTTOM) / 2:.0f})">speedup S(N)</text>')
    xy = [(_x(t.cores, lo, hi), t) for t in ts]
    parts.append(_polyline([(x, _y(i, top)) for (x, _), i in zip(xy, ideal, strict=True)],
                           "ideal"))
    parts.append(_polyline([(x, _y(t.reference_speedup, top)) for x, t in xy], "ref"))
    parts.append(_polyline([(x, _y(t.speedup, top)) for x, t in xy], "mine"))
    for x, t in xy:
        if t.speedup_ci:
            a, b = _y(t.speedup - t.speedup_ci, top), _y(t.speedup + t.speedup_ci, top)
            parts.append(f'<line class="mine" x1="{x:.1f}" y1="{a:.1f}" x2="{x:.1f}" '
                         f'y2="{b:.1f}"/>')
        parts.append(f'<circle class="ref" cx="{x:.1f}" '
                     f'cy="{_y(t.reference_speedup, top):.1f}" r="4"/>'
                     f'<rect class="mine" x="{x - 4:.1f}" y="{_y(t.speedup, top) - 4:.1f}" '
                     'width="8" height="8"/>')
    legend = [("mine", "your program"), ("ref", "the reference"),
              ("ideal", "ideal (N times faster)")]
    for k, (css, label) in enumerate(legend):
        y = TOP + 4 + 16 * k
        parts.append(f'<rect class="{css}" x="{LEFT + 10}" y="{y - 8}" width="10" '
                     f'height="10"/><text class="name" x="{LEFT + 26}" y="{y + 1}">{label}'
                     '</text>')
    desc = "; ".join(f"on {t.cores} cores yours {t.speedup:.2f}x, the reference "
                     f"{t.reference_speedup:.2f}x, ideal {t.cores / lo:g}x" for t in ts)
    return (f'<svg class="gl-chart gl-speedup" role="img" viewBox="0 0 {W} {H}" '
            f'aria-labelledby="{tid}-t {tid}-d">'
            f'<title id="{tid}-t">Speedup against cores</title>'
            f'<desc id="{tid}-d">{esc(desc)}</desc>{"".join(parts)}</svg>')


def _ci(value: float | None) -> str:
    return f"± {num(value)}" if value is not None else muted()


def performance_section(p: ShownPerformance, tid: str) -> str:
    """The performance tests of one submission: points, reading, chart, tables."""
    out = [f"<h4>Performance: {num(p.points)} of {num(p.max_points)} points</h4>",
           f"<p>{esc(p.reading)}</p>"]
    if p.not_in_force:
        out.append(notice("info", "<p>Timed without: " + esc(", ".join(p.not_in_force)) +
                          " (the figures may vary more than they should).</p>"))
    if len(p.timings) >= 2:
        out.append(speedup_chart(p.timings, f"{tid}-s"))
    if p.timings:
        out.append(table("Times (median of the runs, 95 % confidence interval, seconds)",
                         ["Cores", "Yours", "±", "Reference", "±", "Runs", "Speedup",
                          "Reference's"],
                         [[str(t.cores), num(t.median_s), _ci(t.ci_s),
                           num(t.reference_median_s), _ci(t.reference_ci_s), str(t.runs),
                           num(t.speedup), num(t.reference_speedup)] for t in p.timings],
                         numeric=tuple(range(8)), table_id=f"{tid}-t"))
    if p.cache is not None:
        out.append(cache_section(p.cache, f"{tid}-c"))
    if p.items:
        out.append(table("Performance points",
                         ["Measured", "Figure", "Points", "Rule"],
                         [[esc(i.label), num(i.figure) if i.figure is not None else muted(),
                           f"{num(i.points)} of {num(i.max_points)}", esc(i.rule)]
                          for i in p.items], numeric=(1, 2), wrap=(3,),
                         table_id=f"{tid}-i"))
    return "".join(out)


def count(x: float | None) -> str:
    """An event count for a person: 8 412, 1.23 M, 4.5 G (a dash for none)."""
    if x is None:
        return muted()
    for unit, size in (("G", 1e9), ("M", 1e6)):
        if abs(x) >= size:
            return f"{x / size:.3g} {unit}"
    return f"{x:,.0f}".replace(",", "\u2009")


def _factor(x: float | None) -> str:
    return muted() if x is None else f"{x:.2f}x"


def cache_section(c: ShownCache, tid: str) -> str:
    """The cache reading: its sentence, where the counts come from, and the counts."""
    simulated = any(r.l3_bytes is not None for r in c.rows)
    heads = ["Cores", *(["Simulated L3"] if simulated else []), "Your L3 accesses",
             "Your L3 misses", "Growth", "Reference's L3 misses", "Growth"]
    rows = [[str(r.cores), *([num(f"{(r.l3_bytes or 0) / 2**20:g}", " MiB")]
                             if simulated else []),
             count(r.accesses), count(r.misses), _factor(r.inflation),
             count(r.reference_misses), _factor(r.reference_inflation)] for r in c.rows]
    out = [f"<p><strong>Caches:</strong> {esc(c.reading)}.</p>",
           f'<p class="gl-muted">Counted on the small input {esc(c.input)}: {esc(c.note)}. '
           "Growth: the misses over those on the fewest cores, for the same work.</p>"]
    if rows:
        out.append(table(f"L3 misses on {c.input}", heads, rows,
                         numeric=tuple(range(len(heads))), table_id=tid))
    return "".join(out)


#: a request's state, as the page says it
STATES = {"waiting": "waiting to be measured", "measured": "measured",
          "failed": "not measured",
          "refunded": "not measured, and the token is yours again"}


def on_demand_section(d: OnDemand, tid: str, form: str = "") -> str:
    """An assignment's performance measurements on demand: tokens used of those
    offered, the ``form`` that asks for one (where the page's door takes it), and each
    request, newest first, with its curve once measured."""
    out = [f"<h3>Performance on demand: {d.used} of {d.tokens} used</h3>"]
    if form:
        out.append('<p class="gl-hint">Measures the performance tests of your latest '
                   "submission the visible tests accepted, before your deadline, on cores "
                   f"of its own; it takes one of your {d.tokens}.</p>{form}")
    elif not d.measurements:
        out.append('<p class="gl-hint">Ask for a measurement of your latest accepted '
                   "submission before your deadline: gradeline measure ASSIGNMENT.</p>")
    for k, m in enumerate(d.measurements):
        why = f": {esc(m.reason)}" if m.reason else ""
        out.append(f'<p><span class="gl-tag">on demand</span> measurement {m.token} of '
                   f"{d.tokens}, submission {esc(m.submission[:19])}, asked "
                   f"{esc(m.requested_at[:16])}: {esc(STATES.get(m.state, m.state))}{why}.</p>")
        if m.performance is not None:
            out.append(performance_section(m.performance, f"{tid}-{k}"))
    return f'<div class="gl-card">{"".join(out)}</div>'
