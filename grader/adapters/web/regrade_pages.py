"""The staff pages of regrade requests: the queue (filtered by assignment, group, status
and age, oldest first) and one request with what answering it needs -- the student's
reason, the group's tests with input, expected answer and output side by side, the
submission's files -- and the answer's form (where the front end takes staff's posts;
elsewhere the command lines that answer it). Values: ``course.regrades``."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

from grader.adapters.web.design import (
    breadcrumbs,
    esc,
    layout,
    link,
    meta,
    muted,
    notice,
    num,
    pre,
    stats,
    table,
    verdict_badge,
)
from grader.adapters.web.forms import field, post_form
from grader.course.regrades import OUTCOMES, STATUSES, Queue, RegradeDetail

STATUS_WORDS = {"": "every status", "open": "open", "answered": "answered",
                "regraded": "regraded", "adjusted": "adjusted", "declined": "declined"}


def _crumbs(*items: tuple[str | None, str]) -> str:
    return breadcrumbs([("/", "Live"), *items])


def _filters(q: Queue, assignments: Sequence[str]) -> str:
    """The queue's filters, as a form that GETs the queue again."""
    fields = (
        field("assignment", "Assignment", field_id="f-assignment", kind="select",
              value=q.assignment, required=False,
              options=[("", "every assignment"), *((a, a) for a in assignments)]) +
        field("group", "Test group", field_id="f-group", value=q.target, required=False,
              hint="Its name, as the results name it; empty: every group.") +
        field("status", "Status", field_id="f-status", kind="select", value=q.status,
              required=False, options=[(s, STATUS_WORDS[s]) for s in ("", *STATUSES)]) +
        field("older", "Opened at least (hours ago)", field_id="f-older", kind="number",
              value="" if q.older_h is None else f"{q.older_h:g}", required=False,
              extra=' min="0" step="any"'))
    return (f'<form class="gl-form" method="get" action="/regrades" aria-label="Filter the '
            f'queue">{fields}<button class="gl-button" type="submit">Filter</button></form>')


def queue_page(q: Queue, assignments: Sequence[str], nav: str) -> str:
    """The regrade queue: what the filters let through, oldest first."""
    counts = q.counts or {}
    figures = stats([(STATUS_WORDS.get(k, k).capitalize(), str(counts.get(k, 0)))
                     for k in ("open", *OUTCOMES)])
    rows = [[link(f"/regrades/{r.request.id}", f"#{r.request.id}"),
             link(f"/a/{quote(r.assignment)}", r.assignment),
             link(f"/s/{quote(r.student)}", r.student),
             f"{esc(r.request.target_kind)} {esc(r.request.target)}",
             esc(r.request.status), num(r.age_h), esc(r.request.reason[:200])]
            for r in q.rows]
    body = (figures + _filters(q, assignments) +
            table("Regrade requests, oldest first", ["Request", "Assignment", "Student",
                                                     "About", "Status", "Age h", "Reason"],
                  rows, numeric=(5,), wrap=(6,)) +
            f"<p>JSON: {link('/api/regrades', 'api')}</p>")
    return layout("Regrade requests", body, nav=nav,
                  crumbs=_crumbs((None, "regrade requests")))


def _tests(d: RegradeDetail) -> str:
    out = []
    for t in d.tests:
        sides = "".join(f'<div><strong class="gl-label">{label}</strong>{pre(text or "")}</div>'
                        for text, label in ((t.input, "input"), (t.expected, "expected"),
                                            (t.output, "the submission's output")))
        out.append(f"<h3>{esc(t.name)}: {verdict_badge(t.verdict)}</h3>"
                   f"<p>{esc(t.feedback) or muted('no feedback')}</p>"
                   f'<div class="gl-side">{sides}</div>')
    return "".join(out) or f"<p>{muted('no test of this group in the current result')}</p>"


def _answer_form(d: RegradeDetail, action: str, csrf: str) -> str:
    most = d.row.request.most
    fields = (
        field("outcome", "Answer", field_id="a-outcome", kind="select", value="adjusted",
              options=[("adjusted", "adjusted: set the group's points"),
                       ("declined", "declined: the grade stands"),
                       ("regraded", "regraded: the package was fixed and regraded")]) +
        field("points", "The group's points (adjusted)", field_id="a-points", kind="number",
              required=False, hint=f"From 0 to {most:g}." if most is not None else "",
              extra=f' min="0" max="{most or 0:g}" step="any"') +
        field("reason", "Reason (the student reads it)", field_id="a-reason", kind="area"))
    return post_form(action, "Answer the request", csrf_token=csrf, fields=fields,
                     label=f"Answer request {d.row.request.id}")


def _thread(d: RegradeDetail) -> str:
    """The student's earlier requests about the same target and their answers, oldest
    first: what this request answers back to."""
    if not d.earlier:
        return ""
    items = []
    for e in d.earlier:
        answered = (f"<p>{esc(e.status.capitalize())} by {esc(e.answered_by)} at "
                    f"{esc((e.answered_at or '')[:16])}: {num(e.before)} → {num(e.after)} "
                    f"points.</p>{pre(e.answer)}") if e.answered_at else muted("not answered")
        items.append(f"<li><p>#{e.id}, {esc(e.opened_at[:16])}, submission "
                     f"{esc(e.submission[:19])}:</p>{pre(e.reason)}{answered}</li>")
    return (f'<div class="gl-card"><h2>Earlier about {esc(d.row.request.target)}</h2>'
            f'<ol class="gl-thread">{"".join(items)}</ol></div>')


def request_page(d: RegradeDetail, nav: str, *, form: tuple[str, str] | None = None,
                 done: str = "", refused: str = "") -> str:
    """One request: who asked what and why, the group's tests side by side, the files,
    and the answer (the form, where ``form`` gives its action and token)."""
    r = d.row.request
    g = d.group
    facts = meta([
        ("Student", link(f"/s/{quote(d.row.student)}", d.row.student)),
        ("Assignment", link(f"/a/{quote(d.row.assignment)}", d.row.assignment)),
        ("Submission", link(f"/sub/{quote(r.submission)}", r.submission[:19])),
        ("About", f"{esc(r.target_kind)} {esc(r.target)}"),
        ("Opened", f"{esc(r.opened_at[:16])} by {esc(r.opened_by)} ({num(d.row.age_h)} h ago)"),
        ("Points now", f"{num(g.points)} of {num(g.max_points)} {verdict_badge(g.verdict)}"
         if g else muted()),
        ("Status", esc(r.status))])
    parts = [notice("info", f"<p>{esc(done)}</p>") if done else "",
             notice("error", f"<p>Refused: {esc(refused)}</p>") if refused else "",
             _thread(d),
             f'<div class="gl-card">{facts}<h2>The student\'s reason</h2>{pre(r.reason)}</div>']
    if r.status != "open":
        parts.append(notice("info", f"<p>Answered {esc(r.status)} by {esc(r.answered_by)} at "
                                    f"{esc((r.answered_at or '')[:16])}: {num(r.before)} → "
                                    f"{num(r.after)} points. {esc(r.answer)}</p>"))
    elif form is not None:
        parts.append(f"<h2>Answer</h2>{_answer_form(d, *form)}")
    if r.status == "open":
        parts.append("<p>From a shell:</p>" + "".join(f"<p><code>{esc(c)}</code></p>"
                                                       for c in d.commands))
    parts.append(f"<h2>The tests of {esc(r.target)}</h2>{_tests(d)}")
    files = "".join(f"<h3>{esc(f.name)}</h3>{pre(f.text, source=True)}" for f in d.files)
    parts.append(f"<h2>Files</h2>{files or muted('no files kept')}")
    return layout(f"Regrade request #{r.id}", "".join(parts), nav=nav, crumbs=_crumbs(
        ("/regrades", "regrade requests"), (None, f"#{r.id}")))
