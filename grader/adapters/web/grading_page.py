"""The grading pages (grading by hand), rendered on the server from the values of
``course.gradingview`` and ``course.gradingpage``: an assignment's questions with each
grader's queue, the course's progress and the graders' statistics; and one student's
question -- the rubric as a form worked by keyboard (each item's access key, Alt+key
in Chromium; Tab, Space and Enter for the rest), a comment anchored to a file's
lines, an adjustment with its reason, save and next -- beside the counting
submission's files (numbered, highlighted: ``highlight``) and the autograder's result.
No script: the form posts, the server answers with the next page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import quote

from grader.adapters.web.design import (
    breadcrumbs,
    esc,
    layout,
    link,
    muted,
    notice,
    num,
    progress,
    score_bar,
    table,
    verdict_badge,
)
from grader.adapters.web.highlight import highlighted
from grader.course.gradingpage import AuditEntry, GradingPage, ItemView
from grader.course.gradingview import FormProblem, GradingIndex, QuestionQueue
from grader.course.handgrades import LineComment
from grader.course.staffview import ResultView

Draft = Mapping[str, Sequence[str]]
SAVE_KEY, NEXT_KEY = "s", "n"  # the buttons' access keys (Alt+S, Alt+N)


def _base(assignment: str) -> str:
    return f"/a/{quote(assignment)}/grade"


def _crumbs(assignment: str, *more: tuple[str | None, str]) -> str:
    return breadcrumbs([("/", "Live"), (f"/a/{quote(assignment)}", assignment),
                        *more])


def _reveal_form(idx: GradingIndex, token: str) -> str:
    if idx.can_reveal:
        return (f'<form method="post" action="{esc(_base(idx.assignment))}/reveal">'
                f'<input type="hidden" name="csrf" value="{esc(token)}">'
                '<button class="gl-button" type="submit">Reveal the names (recorded)</button>'
                "</form>")
    return ""


def _queue(idx: GradingIndex, q: QuestionQueue) -> str:
    base = f"{_base(idx.assignment)}/{quote(q.id)}"
    cells = [[link(f"{base}/{quote(r.key)}", r.label), esc(r.assigned or "") or muted(),
              esc(r.graded_by or "") or muted("not yet"), num(r.points)] for r in q.queue]
    todo = next((r for r in q.queue if r.graded_by is None), None)
    start = (f'<p>{link(f"{base}/{quote(todo.key)}", "Grade the next one")}</p>' if todo
             else "<p>Every one in this queue is graded.</p>")
    whose = "Your queue" if q.mine else "Every student"
    loads = table(f"Graders of {q.title}", ["Grader", "Assigned", "Graded"],
                  [[esc(g.grader), str(g.assigned), str(g.graded)] for g in q.graders],
                  numeric=(1, 2), table_id=f"graders-{q.id}")
    return (f"<h2>{esc(q.title)} <small>({num(q.points)} points)</small></h2>"
            + progress(q.graded, q.total, f"{q.title}: graded", field_id=f"progress-{q.id}")
            + start + table(f"{whose}: {q.title}", ["Student", "Assigned to", "Graded by",
                                                    "Points"], cells, numeric=(3,),
                            table_id=f"queue-{q.id}") + loads)


def grading_index_page(idx: GradingIndex, nav: str, token: str) -> str:
    """An assignment's grading: each question's progress, the viewer's queue, the graders'
    loads and statistics, the evaluation export; an instructor's reveal of names."""
    if idx.anonymous and not idx.names_shown:
        names = notice("info", "<p>Graded anonymously: students are named by a pseudonym "
                               "on every page until an instructor reveals the names.</p>")
    else:
        names = notice("info", "<p>Names were revealed by an instructor.</p>") \
            if idx.anonymous else ""
    stats = [[esc(s.grader), esc(s.question), str(s.graded), num(s.mean_points),
              num(s.mean_adjustment),
              esc(", ".join(f"{i.item} {i.share:.0%}" for i in s.items if i.share))]
             for s in idx.stats]
    body = (names + _reveal_form(idx, token)
            + "".join(_queue(idx, q) for q in idx.questions)
            + "<h2>Calibration</h2>"
            + table("Each grader's grades per question", ["Grader", "Question", "Graded",
                                                           "Mean points", "Mean adjustment",
                                                           "Items applied (share)"],
                    stats, numeric=(2, 3, 4), wrap=(5,), table_id="calibration")
            + f"<p>{link(_base(idx.assignment) + '/evaluations.csv', 'Evaluations (CSV)')}"
              f" · JSON: {link('/api' + _base(idx.assignment), 'api')}</p>")
    return layout(f"{idx.assignment}: grading by hand", body, nav=nav,
                  crumbs=_crumbs(idx.assignment, (None, "grading")))


def _chosen(p: GradingPage, draft: Draft | None) -> set[str]:
    if draft is not None:
        return {v for v in draft.get("item", ()) if v}
    return set(p.grade.items) if p.grade else set()


def _value(p: GradingPage, draft: Draft | None, name: str) -> str:
    if draft is not None:
        return (draft.get(name) or [""])[-1]
    if p.grade is None:
        return ""
    return {"adjustment": f"{p.grade.adjustment:g}" if p.grade.adjustment else "",
            "reason": p.grade.reason}.get(name, "")


def _item(p: GradingPage, i: ItemView, chosen: set[str]) -> str:
    kind = "radio" if p.question.select == "one" else "checkbox"
    key = f' accesskey="{esc(i.key)}"' if i.key else ""
    hint = f'<p class="gl-hint" id="note-{esc(i.id)}">{esc(i.note)}</p>' if i.note else ""
    described = f' aria-describedby="note-{esc(i.id)}"' if i.note else ""
    return (f'<div class="gl-item"><input type="{kind}" id="item-{esc(i.id)}" name="item" '
            f'value="{esc(i.id)}"{key}{described}{" checked" if i.id in chosen else ""}>'
            f'<label for="item-{esc(i.id)}">' + (f"<kbd>{esc(i.key)}</kbd> " if i.key else "")
            + f'<span class="gl-pts">{i.points:+g}</span> {esc(i.title)}</label>{hint}</div>')


def _rubric(p: GradingPage, draft: Draft | None) -> str:
    q, chosen = p.question, _chosen(p, draft)
    items = "".join(_item(p, i, chosen) for i in q.items)
    if q.select == "one":
        items += ('<div class="gl-item"><input type="radio" id="item-none" name="item" '
                  f'value=""{"" if chosen else " checked"}><label for="item-none">none'
                  "</label></div>")
    now = f"{num(p.points)} of {num(q.points)}" if p.points is not None else "not graded"
    how = (f"starts at {q.start:g}, kept within {q.min:g} to {q.max:g}"
           + ("; one item at most" if q.select == "one" else ""))
    return (f'<fieldset class="gl-fieldset"><legend>{esc(q.title)}: {now}</legend>'
            f'<p class="gl-hint">{esc(how)}. Alt and an item\'s key toggles it.</p>'
            f"{items}</fieldset>")


def _comment_form(p: GradingPage, draft: Draft | None, choices: Sequence[ItemView]
                  ) -> str:
    files = "".join(f'<option value="{esc(f.name)}"'
                    f'{" selected" if _value(p, draft, "file") == f.name else ""}>'
                    f"{esc(f.name)}</option>" for f in p.files)
    items = '<option value="">(none)</option>' + "".join(
        f'<option value="{esc(i.id)}"'
        f'{" selected" if _value(p, draft, "comment_item") == i.id else ""}>'
        f"{i.points:+g} {esc(i.title)}</option>" for i in choices)
    mine = p.grade.comments if p.grade else ()
    delete = "".join(
        f'<div class="gl-item"><input type="checkbox" id="del-{c.id}" name="delete" '
        f'value="{c.id}"><label for="del-{c.id}">delete the comment at {esc(c.file)} line '
        f"{c.first}: {esc(c.text[:60])}</label></div>" for c in mine)
    if not p.files:
        return delete
    return (
        '<fieldset class="gl-fieldset"><legend>Comment on lines</legend>'
        '<div class="gl-field"><label for="c-file">File</label>'
        f'<select id="c-file" name="file">{files}</select></div>'
        '<div class="gl-row"><div class="gl-field"><label for="c-first">From line</label>'
        f'<input type="number" min="1" id="c-first" name="first" '
        f'value="{esc(_value(p, draft, "first"))}"></div>'
        '<div class="gl-field"><label for="c-last">To line</label>'
        f'<input type="number" min="1" id="c-last" name="last" '
        f'value="{esc(_value(p, draft, "last"))}"></div></div>'
        '<div class="gl-field"><label for="c-text">Comment</label>'
        f'<textarea id="c-text" name="comment" rows="3">{esc(_value(p, draft, "comment"))}'
        "</textarea></div>"
        '<div class="gl-field"><label for="c-item">With the points of</label>'
        f'<select id="c-item" name="comment_item">{items}</select></div>{delete}</fieldset>')


def _adjustment(p: GradingPage, draft: Draft | None) -> str:
    return ('<fieldset class="gl-fieldset"><legend>Adjustment</legend><div class="gl-row">'
            '<div class="gl-field"><label for="adj">Points (+ or −)</label>'
            f'<input type="number" step="any" id="adj" name="adjustment" '
            f'value="{esc(_value(p, draft, "adjustment"))}"></div>'
            '<div class="gl-field gl-grow"><label for="reason">Reason (the student reads it)'
            f'</label><input type="text" id="reason" name="reason" maxlength="500" '
            f'value="{esc(_value(p, draft, "reason"))}"></div></div></fieldset>')


def _form(p: GradingPage, token: str, draft: Draft | None, problem: FormProblem | None
          ) -> str:
    action = f"{_base(p.assignment)}/{quote(p.question.id)}/{quote(p.key)}"
    err = notice("error", f"<p>Not saved: {esc(problem.field)}: {esc(problem.message)}. "
                          "What you entered is still below.</p>") if problem else ""
    version = p.grade.version if p.grade else 0
    return (f'{err}<form class="gl-form gl-rubric" method="post" action="{esc(action)}">'
            f'<input type="hidden" name="csrf" value="{esc(token)}">'
            f'<input type="hidden" name="version" value="{version}">'
            + _rubric(p, draft) + _comment_form(p, draft, p.question.items)
            + _adjustment(p, draft)
            + '<div class="gl-row"><button class="gl-button" type="submit" name="then" '
              f'value="stay" accesskey="{SAVE_KEY}">Save <kbd>s</kbd></button>'
              '<button class="gl-button" type="submit" name="then" value="next" '
              f'accesskey="{NEXT_KEY}">Save and next <kbd>n</kbd></button></div></form>')


def _comment_html(c: LineComment, p: GradingPage, other: bool) -> str:
    item = next((i for i in p.question.items if i.id == c.item), None)
    carries = f" <span class=\"gl-tag\">{item.points:+g} {esc(item.title)}</span>" \
        if item else (f' <span class="gl-tag">{esc(c.item)}</span>' if c.item else "")
    whose = " (another question)" if other else ""
    lines = f"line {c.first}" + (f" to {c.last}" if c.last != c.first else "")
    return (f'<span class="gl-cmt" role="note"><strong>{esc(c.grader)}</strong>, {lines}'
            f"{whose}:{carries} {esc(c.text)}</span>")


def code_view(p: GradingPage) -> str:
    """The submission's files, numbered and highlighted, each comment after its last
    line (and its lines marked)."""
    notes = [(c, False) for c in (p.grade.comments if p.grade else ())] + \
        [(c, True) for c in p.others]
    out = []
    for n, f in enumerate(p.files):
        mine = [(c, o) for c, o in notes if c.file == f.name]
        marked = {ln for c, _ in mine for ln in range(c.first, c.last + 1)}
        rows = []
        for i, html in enumerate(highlighted(f.name, f.text), start=1):
            cls = ' class="gl-marked"' if i in marked else ""
            rows.append(f'<span id="f{n}-L{i}"{cls}><span class="ln">{i}</span>{html}</span>')
            rows += [_comment_html(c, p, o) for c, o in mine if c.last == i]
        out.append(f'<h3 id="file-{n}">{esc(f.name)}</h3><pre tabindex="0" '
                   f'class="gl-source gl-code gl-hl" aria-labelledby="file-{n}">'
                   f'{"".join(rows)}</pre>')
    return "".join(out) or muted("no files kept of this submission")


def _autograder(r: ResultView | None) -> str:
    if r is None:
        return "<h2>Autograder</h2><p>not graded yet</p>"
    cells = [[esc(t.name), esc(t.group), verdict_badge(t.verdict)] for t in r.tests]
    return (f"<h2>Autograder</h2><p>{verdict_badge(r.verdict)} "
            f"{score_bar(r.score, r.max_score)} <small>({esc(r.phase)} phase)</small></p>"
            + table("The autograder's tests", ["Test", "Group", "Verdict"], cells,
                    table_id="auto-tests"))


def _history(h: Sequence[AuditEntry]) -> str:
    cells = [[esc(e.at[:19]), esc(e.grader), esc(e.action), num(e.version),
              esc(", ".join(e.items)) or muted(), num(e.adjustment or None),
              esc(e.comment) or muted()] for e in h]
    return table("Changes to this grade", ["When", "Grader", "What", "Version", "Items",
                                          "Adjustment", "Comment added"], cells,
                 wrap=(6,), table_id="history")


def _steps(p: GradingPage) -> str:
    base = f"{_base(p.assignment)}/{quote(p.question.id)}"
    where = "your queue" if p.mine else "every student's"
    prev = link(f"{base}/{quote(p.prev_key)}", "Previous") if p.prev_key else muted("Previous")
    nxt = link(f"{base}/{quote(p.next_key)}", "Next") if p.next_key else muted("Next")
    others = " · ".join(link(f"{_base(p.assignment)}/{quote(q.id)}/{quote(p.key)}", q.title)
                        if q.id != p.question.id else esc(q.title) for q in p.questions)
    return (f'<nav class="gl-steps" aria-label="Students"><p>{p.position} of {p.of} in '
            f"{where} · {prev} · {nxt} · {link(_base(p.assignment), 'all questions')}</p>"
            f"<p>Questions: {others}</p></nav>")


def grading_page(p: GradingPage, nav: str, token: str, *, draft: Draft | None = None,
                 said: str = "", conflict: bool = False, problem: FormProblem | None = None
                 ) -> str:
    """One student's question (see the module docstring).

    :param draft: the fields a grader sent that were not saved (a conflict, a field
        refused): the form shows them again, so nothing typed is lost.
    :param said: a line to say at the top (``saved``).
    """
    top = notice("info", f"<p>{esc(said)}</p>") if said else ""
    if conflict and p.grade is not None:
        top += notice("warn", f"<p>Not saved: {esc(p.grade.grader)} saved this question "
                              f"(version {p.grade.version}, {esc(p.grade.graded_at[11:19])}) "
                              "after you opened it. Their grade is the one stored: "
                              f"{num(p.points)} points, items "
                              f"{esc(', '.join(p.grade.items)) or 'none'}. Your choices are "
                              "still in the form: save again to replace theirs.</p>")
    if p.stale:
        top += notice("warn", "<p>This grade was given to an earlier submission than the "
                              "one that counts now.</p>")
    who = esc(p.submission[:19]) if p.submission else "no submission"
    body = (top + _steps(p)
            + f'<div class="gl-grade"><div class="gl-grade-form">'
              f"<p class=\"gl-lead\">Submission {who}"
              + (f", handed in {esc(p.submitted_at[:16])}" if p.submitted_at else "") + "</p>"
            + _form(p, token, draft, problem) + _autograder(p.autograder)
            + _history(p.history) + "</div>"
            + f'<div class="gl-grade-code"><h2>Files</h2>{code_view(p)}</div></div>')
    return layout(f"{p.question.title}: {p.label}", body, nav=nav,
                  crumbs=_crumbs(p.assignment, (_base(p.assignment), "grading"),
                                 (None, f"{p.question.id}: {p.label}")))
