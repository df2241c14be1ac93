"""A student's pages: their own results (what ``course.studentview`` allows, nothing
more) and the hand-in form with its receipt. Renderers only: the routes (a signed link
here, an LTI launch or an Open OnDemand app elsewhere) decide who the student is."""

from __future__ import annotations

from collections.abc import Sequence

from grader.adapters.web.design import (
    esc,
    layout,
    muted,
    notice,
    num,
    pre,
    receipt_box,
    reload_links,
    score_bar,
    table,
    upload_form,
    verdict_badge,
)
from grader.adapters.web.hand_shown import hand_grade_html
from grader.adapters.web.perfchart import on_demand_section, performance_section
from grader.course.shown import LimitsLeft, Receipt, StudentView, SubmissionView

MINE_RELOAD_S = 30
FOOTER = "gradeline · this page shows only your own submissions"


def limits_note(lim: LimitsLeft) -> str:
    """What an assignment's hand-in limits leave: used and left, and why (and until
    when) a hand-in now would be refused or deferred ("" when there are no limits)."""
    out = ""
    if lim.left is not None:
        out += f"<p>Hand-ins used: {lim.used}, left: {lim.left}.</p>"
    if lim.why:
        when = f" The next one within the limits: {esc(lim.next_at[:16])}." \
            if lim.next_at else ""
        later = "taken but deferred (graded after the others, feedback after your " \
            "deadline)" if lim.deferring else "refused"
        out += notice("warn", f"<p>A hand-in now would be {later}: {esc(lim.why)}."
                              f"{when}</p>")
    return out


def mine_page(view: StudentView, *, auto_refresh_s: int | None = None) -> str:
    """A student's own page.

    :param auto_refresh_s: reload every so many seconds (None: only when asked, by the
        page's own link).
    """
    body = reload_links(auto_refresh_s or MINE_RELOAD_S, on=auto_refresh_s is not None)
    return layout(f"{view.student} in {view.course}", body + _results(view),
                  site_href=None, footer_html=FOOTER, refresh_s=auto_refresh_s)


def _results(view: StudentView) -> str:
    """Each assignment (an h2) with the deadline, limits and submissions."""
    parts = []
    for i, a in enumerate(view.assignments):
        rel = f"; results released {esc(a.released[:16])}" if a.released else ""
        parts.append(f"<h2>{esc(a.name)}</h2><p class=\"gl-lead\">your "
                     f"deadline {esc(a.deadline[:16])}{rel}</p>{limits_note(a.limits)}")
        if a.on_demand is not None:
            parts.append(on_demand_section(a.on_demand, f"m-{i}"))
        if a.hand is not None:
            parts.append(hand_grade_html(a.hand, f"hand-{i}"))
        parts += [_submission(s, f"g-{i}-{j}") for j, s in enumerate(a.submissions)]
        if not a.submissions:
            parts.append(f"<p>{muted('nothing handed in')}</p>")
    return "".join(parts)


def _head(s: SubmissionView) -> str:
    late = f", {num(s.late_hours)} h late" if s.late_hours else ""
    counts = ' <span class="gl-tag">counts</span>' if s.counts else ""
    sha = f'<p class="gl-muted">sha256 {esc(s.sha256)}</p>' if s.sha256 else ""
    return f"<h3>{esc(s.id[:19])}: {esc(s.submitted_at[:19])}{late}{counts}</h3>{sha}"


def _submission(s: SubmissionView, tid: str) -> str:
    """One submission in a card: refused, deferred, waiting, or graded with the groups
    and the failed tests the course shows."""
    out = [_head(s)]
    if s.state == "quarantined":
        out.append(notice("error", f"<p>refused: {esc(s.reason)}</p>"))
    elif s.deferred:
        out.append(notice("info", f"<p><span class=\"gl-tag\">deferred</span> "
                                  f"{esc(s.message)}</p>"))
    elif s.verdict is None:
        out.append(f"<p>{verdict_badge(None)} waiting to be graded</p>")
    else:
        out += _graded(s, tid)
    return f'<div class="gl-card">{"".join(out)}</div>'


def _graded(s: SubmissionView, tid: str) -> list[str]:
    total = score_bar(s.score, s.max_score or 0.0) if s.score is not None else ""
    more = "" if s.complete else \
        " <small>(more groups after the deadline or when staff release)</small>"
    out = [f"<p>{verdict_badge(s.verdict)} {total}{more}</p>"]
    if s.message:
        out.append(f"<p>{esc(s.message)}</p>")
    if s.compile_output:
        out.append(f"<h4>Compiler output</h4>{pre(s.compile_output)}")
    groups = [[esc(g.name), verdict_badge(g.verdict), f"{g.passed}/{g.total}",
               f"{num(g.points)} of {num(g.max_points)}"] for g in s.groups]
    if groups:
        out.append(table(f"Test groups of {s.id[:19]}",
                         ["Group", "Verdict", "Passed", "Points"], groups, numeric=(2, 3),
                         table_id=tid))
    if s.performance is not None:
        out.append(performance_section(s.performance, f"{tid}-p"))
    for t in s.tests:
        if t.verdict == "AC":
            continue
        sides = "".join(f'<div><strong class="gl-label">{label}</strong>'
                        f"{pre(text or '')}</div>"
                        for text, label in ((t.input, "input"), (t.expected, "expected"),
                                            (t.output, "your output")))
        out.append(f"<h4>{esc(t.name)}: {verdict_badge(t.verdict)}</h4>"
                   f"<p>{esc(t.feedback) or muted('no feedback')}</p>"
                   f'<div class="gl-side">{sides}</div>')
    return out


def _deadlines(view: StudentView) -> str:
    rows = []
    for a in view.assignments:
        lim = a.limits
        left = muted("no limit") if lim.left is None else str(lim.left)
        nxt = esc(lim.next_at[:16]) if lim.next_at else muted()
        rows.append([esc(a.name), esc(a.deadline[:16]), left, nxt, esc(lim.why) or muted()])
    return table("Your deadlines and hand-in limits",
                 ["Assignment", "Your deadline", "Hand-ins left", "Next allowed at",
                  "Limit met"], rows, numeric=(2,), wrap=(4,))


def handin_page(view: StudentView, assignments: Sequence[str], *, action: str,
                csrf_token: str, max_mib: int, receipt: Receipt | None = None,
                error: str | None = None, selected: str | None = None,
                results: bool = False) -> str:
    """Handing in through a browser: the form, and after a hand-in its receipt (shown,
    and downloadable as JSON); with ``results``, the student's own submissions below
    (a front end's one page, in an LMS or the cluster's portal).

    :param view: the student's view (``course.studentview``): who, the course, each
        assignment's deadline and limits.
    :param assignments: those the form offers.
    :param action: where the form posts (the front end's route).
    :param error: why the last try handed nothing in (plain text).
    :param selected: the assignment the form starts at (a receipt's, else this).
    """
    selected = receipt.assignment if receipt else selected
    parts = [f'<p class="gl-lead">{esc(view.student)} in {esc(view.course)}</p>']
    if error:
        parts.append(notice("error", f"<p>Nothing was handed in: {esc(error)} "
                                     '<a href="#handin-file">Choose the file again</a>.</p>'))
    if receipt:
        late = " after your deadline" if receipt.late else ""
        parts.append(notice("info", f"<p>Handed in {esc(receipt.file)} for "
                                    f"{esc(receipt.assignment)}{late}.</p>"))
        if receipt.deferred:
            parts.append(notice("warn", "<p>Past the assignment's hand-in limit "
                                        f"({esc(receipt.limit)}): it is graded "
                                        "after everyone else's, and its feedback comes "
                                        "after your deadline.</p>"))
        parts.append(receipt_box(receipt.to_json()))
    note = ('<p class="gl-hint">You may hand in again until your deadline; your results '
            "page says which submission counts.</p>")
    form = upload_form(action, assignments, csrf_token=csrf_token, max_mib=max_mib,
                       note_html=note, error=error or "", selected=selected)
    parts.append(f'<h2>Hand in a file</h2><div class="gl-card">{form}</div>{_deadlines(view)}')
    if results:
        parts.append(_results(view))
    return layout("Hand in", "".join(parts), site_href=None, footer_html=FOOTER)
