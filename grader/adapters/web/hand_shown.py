"""A student's grade by hand on their own pages (``course.shown.HandGradeView``, shown
once staff released the assignment): each question's points, the rubric items
applied (and those the rubric always shows), the adjustment with its reason, and each
comment beside the lines it is at, numbered as in their file."""

from __future__ import annotations

from grader.adapters.web.design import esc, num
from grader.course.shown import HandGradeView, ShownComment, ShownQuestion


def _lines(c: ShownComment) -> str:
    width = len(str(c.first + len(c.lines)))
    text = "\n".join(f"{n:>{width}}  {line}" for n, line in enumerate(c.lines, c.first))
    return f'<pre tabindex="0" class="gl-source">{esc(text)}</pre>' if c.lines else ""


def _comment(c: ShownComment) -> str:
    where = f"{c.file}, line {c.first}" + (f" to {c.last}" if c.last != c.first else "")
    item = f' <span class="gl-tag">{c.points:+g} {esc(c.item)}</span>' \
        if c.item and c.points is not None else ""
    return (f'<div class="gl-cmt" role="note"><p><strong>{esc(where)}</strong>:{item} '
            f"{esc(c.text)}</p>{_lines(c)}</div>")


def _question(q: ShownQuestion) -> str:
    items = "".join(
        f'<li><span class="gl-pts">{i.points:+g}</span> {esc(i.title)}'
        + ("" if i.applied else " <small>(not applied)</small>")
        + (f'<br><small>{esc(i.explanation)}</small>' if i.explanation else "") + "</li>"
        for i in q.items)
    adj = f"<p>Adjusted {q.adjustment:+g}: {esc(q.reason)}</p>" if q.adjustment else ""
    return (f"<h4>{esc(q.title)}: {num(q.points)} of {num(q.max_points)}</h4>"
            + (f"<ul>{items}</ul>" if items else "") + adj
            + "".join(_comment(c) for c in q.comments))


def hand_grade_html(h: HandGradeView, hid: str) -> str:
    """The hand-grade of one assignment, in a card (``hid``: its heading's id)."""
    pending = "" if h.complete else " <small>(more questions to be graded)</small>"
    return (f'<section class="gl-card gl-hand" aria-labelledby="{esc(hid)}">'
            f'<h3 id="{esc(hid)}">Graded by hand: {num(h.points)} of {num(h.max_points)}'
            f"{pending}</h3>{''.join(_question(q) for q in h.questions)}</section>")
