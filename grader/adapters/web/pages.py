"""The staff pages (an assignment, a student, one submission, a regrade preview, the
similarity report and one pair, the cluster use), rendered on the server from the
values of ``course.staffview``, ``course.similarity_pairs`` and ``views.staff_pages``:
what is on a page is decided there, how it looks here (in the shared design,
``design``)."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

from grader.adapters.web.design import (
    breadcrumbs,
    esc,
    layout,
    link,
    message_page,
    meta,
    muted,
    nav_links,
    notice,
    num,
    percent_bar,
    pre,
    score_bar,
    stats,
    table,
    verdict_badge,
)
from grader.course.similarity_pairs import FileLines, PairView, SimilarityReport
from grader.course.staffview import (
    AssignmentRow,
    AttemptView,
    HistoryView,
    RegradePreview,
    ResultView,
    SubmissionDetail,
    TestView,
    UsageView,
)

MARKS = 6  # background colours of matched regions (.m1 ... .m6), then they repeat


def staff_nav(assignments: Sequence[str], current: str | None = None,
              graded: Sequence[str] = ()) -> str:
    """The staff pages' main navigation; ``current`` is the path of the page shown;
    ``graded``: the assignments graded by hand (their grading pages linked)."""
    items = [("/", "Live"), *((f"/a/{quote(a)}", a) for a in assignments),
             *((f"/a/{quote(a)}/grade", f"{a}: grading") for a in graded),
             ("/regrades", "Regrades"), ("/usage", "Cluster use")]
    return nav_links(items, current)


def _crumbs(*items: tuple[str | None, str]) -> str:
    return breadcrumbs([("/", "Live"), *items])


def _a(name: str) -> str:
    return f"/a/{quote(name)}"


def refused_page(message: str) -> str:
    """Why a student's link is not taken (the reader may open no other page)."""
    return message_page("refused", message, site_href=None)


def assignment_page(name: str, rows: Sequence[AssignmentRow], nav: str) -> str:
    """Every student of an assignment: attempts, the latest verdict, the grade."""
    cells = [[link(f"/s/{quote(r.student)}", r.student),
              esc(r.name) + (f' <span class="gl-tag">team {esc(r.team)}</span>'
                             if r.team else ""),
              str(r.attempts), verdict_badge(r.last_verdict), esc(r.status),
              link(f"/sub/{quote(r.counting)}", r.counting[:19]) if r.counting
              else muted(), num(r.late_hours), num(r.grace_days),
              num(r.penalty_pct), num(r.raw_pct),
              percent_bar(r.final_pct, sign=False) if r.final_pct is not None
              else muted(), num(r.points)] for r in rows]
    figures = stats([
        ("Students", str(len(rows))),
        ("Handed in", str(sum(1 for r in rows if r.attempts))),
        ("Latest accepted", str(sum(1 for r in rows if r.last_verdict == "AC")))])
    extra = (f"<p>{link(_a(name) + '/preview', 'regrade preview')} · "
             f"{link(_a(name) + '/similarity', 'similarity')} · "
             f"JSON: {link('/api' + _a(name), 'api')}</p>")
    body = figures + table(
        f"Every student's attempts at {name}",
        ["Student", "Name", "Attempts", "Last verdict", "Grade", "Counting", "Late h",
         "Grace d", "Penalty %", "Raw %", "Final %", "Points"], cells,
        numeric=(2, 6, 7, 8, 9, 11)) + extra
    return layout(f"{name}: every student", body, nav=nav, crumbs=_crumbs((None, name)))


def _attempts(assignment: str, rows: Sequence[AttemptView], tid: str) -> str:
    cells = [[link(f"/sub/{quote(a.id)}", a.id[:19]), esc(a.submitted_at),
              num(a.late_hours),
              esc(a.state) + (f" <small>{esc(a.reason)}</small>" if a.reason else ""),
              verdict_badge(a.verdict),
              num(a.score) + (" / " + num(a.max_score) if a.max_score else ""),
              num(a.phase), '<span class="gl-tag">counts</span>' if a.counts else ""]
             for a in rows]
    return table(f"Attempts at {assignment}", ["Submission", "Handed in", "Late h", "State",
                                               "Verdict", "Score", "Phase", "Counts"],
                 cells, numeric=(2,), wrap=(3,), table_id=tid)


def student_page(student: str, history: Sequence[HistoryView], nav: str) -> str:
    """A student's every attempt at every assignment, and which one counts."""
    parts = []
    for i, h in enumerate(history):
        g = h.grade
        final = f", final {num(g.final_pct, ' %')}" if g.final_pct is not None else ""
        parts.append(f"<h2>{esc(h.assignment)}</h2>"
                     f'<p class="gl-lead">due {esc(h.deadline[:16])}; grade: '
                     f"{esc(g.status or 'none yet')}{final}</p>"
                     + _attempts(h.assignment, h.attempts, f"attempts-{i}"))
    return layout(f"{student}: every attempt", "".join(parts), nav=nav,
                  crumbs=_crumbs((None, student)))


def _tests(tests: Sequence[TestView], caption: str, tid: str) -> str:
    cells = [[esc(t.name), esc(t.group), esc(t.shown), verdict_badge(t.verdict),
              num(t.cpu_s), num(t.memory_bytes >> 20, " MiB") if t.memory_bytes else muted(),
              esc(t.feedback[:300]) or muted(),
              pre(t.output[:300]) if t.output else muted()] for t in tests]
    return table(caption, ["Test", "Group", "Shown to students", "Verdict", "CPU s", "Memory",
                           "Feedback", "Output"], cells, numeric=(4, 5), wrap=(6,),
                 table_id=tid)


def _result(r: ResultView, i: int) -> str:
    gone = f", superseded {esc(r.superseded[:19])}" if r.superseded else ""
    comp = f"<h4>Compiler output</h4>{pre(r.compile_output)}" if r.compile_output else ""
    msg = f"<p>{esc(r.message)}</p>" if r.message else ""
    return (f"<h3>{esc(r.phase)} phase: {verdict_badge(r.verdict)} "
            f"{score_bar(r.score, r.max_score)}</h3>"
            f'<p class="gl-muted">version {esc(r.version)}, graded '
            f"{esc(str(r.made)[:19])}{gone}</p>{msg}{comp}"
            + _tests(r.tests, f"Tests of the {r.phase} phase, version {r.version[:12]}",
                     f"tests-{i}"))


def submission_page(s: SubmissionDetail, nav: str) -> str:
    """One submission: who and when, its files, every result with every test (the
    hidden ones marked)."""
    stamps = ", ".join(f"{k} {esc(v[11:19])}" for k, v in s.stamps.to_json().items()
                       if isinstance(v, str))
    facts = meta([
        ("Student", link("/s/" + quote(s.student), s.student)),
        ("Assignment", link(_a(s.assignment), s.assignment)),
        ("Handed in", f"{esc(s.submitted_at or '')} ({num(s.late_hours)} h late)"),
        ("State", f"{esc(s.state)} {esc(s.reason)}"),
        ("Language", esc(s.language or "") or muted()),
        ("Timeline", stamps or muted())])
    files = "".join(f"<h3>{esc(f.name)}</h3>{pre(f.text, source=True)}"
                    for f in s.files) or muted("no files kept")
    results = "".join(_result(r, i) for i, r in enumerate(s.results))
    body = (f'<div class="gl-card">{facts}</div><h2>Files</h2>{files}<h2>Results</h2>'
            + (results or "<p>not graded yet</p>"))
    sid = s.id[:19]
    return layout(f"submission {sid}", body, nav=nav, crumbs=_crumbs(
        (_a(s.assignment), s.assignment), ("/s/" + quote(s.student), s.student),
        (None, sid)))


def preview_page(name: str, p: RegradePreview | None, nav: str) -> str:
    """What a changed package would change, before anything is stored."""
    crumbs = _crumbs((_a(name), name), (None, "regrade preview"))
    if p is None:
        body = notice("info", "<p>No preview yet. Run <code>gradeline regrade --assignment "
                      f"{esc(name)} --preview</code> after changing the package.</p>")
        return layout(f"{name}: regrade preview", body, nav=nav, crumbs=crumbs)
    changed = [c for c in p.changes if c.changed]
    cells = [[link(f"/s/{quote(c.student)}", c.student),
              link(f"/sub/{quote(c.id)}", c.id[:19]), verdict_badge(c.old_verdict),
              verdict_badge(c.new_verdict), num(c.old_score), num(c.new_score)]
             for c in changed]
    body = (f"<p>package version {esc(p.new_version[:12])}, previewed "
            f"{esc(p.made[:19])}: {len(changed)} of {len(p.changes)} submissions "
            f"would change. Apply with <code>gradeline regrade --assignment {esc(name)}"
            "</code>.</p>"
            + table("Submissions whose verdict or score would change",
                    ["Student", "Submission", "Verdict now", "Would be", "Score now",
                     "Would be"], cells, numeric=(4, 5)))
    return layout(f"{name}: regrade preview", body, nav=nav, crumbs=crumbs)


def similarity_page(name: str, r: SimilarityReport | None, nav: str) -> str:
    """The pairs of counting submissions that look alike, most similar first."""
    crumbs = _crumbs((_a(name), name), (None, "similarity"))
    if r is None:
        body = notice("info", "<p>No report yet. After the deadline run <code>gradeline "
                      f"similarity {esc(name)}</code>.</p>")
        return layout(f"{name}: similarity", body, nav=nav, crumbs=crumbs)
    starter = "starter code left out" if r.starter else "no starter code given"
    cells = [[link(f"{_a(name)}/similarity/{i}", f"{p.a} and {p.b}"),
              f"{p.similarity:.0%}", esc(p.language), str(len(p.matches)),
              f"{link('/s/' + quote(p.a), p.a)} · {link('/s/' + quote(p.b), p.b)}"]
             for i, p in enumerate(r.pairs)]
    body = (f"<p>{esc(r.tool)}, {esc(r.made[:19])}: {r.students} students' "
            f"counting submissions, {starter}; pairs at or above {r.threshold:g}:</p>"
            + table(f"Pairs at or above {r.threshold:g} similarity",
                    ["Pair (side by side)", "Similarity", "Language", "Matched regions",
                     "Students' pages"], cells, numeric=(1, 3))
            + "".join(f'<p class="gl-muted">left out: {esc(w)}</p>' for w in r.skipped))
    return layout(f"{name}: similarity", body, nav=nav, crumbs=crumbs)


def _code(files: Sequence[FileLines]) -> str:
    """Files as numbered lines; a matched line carries its match's number and colour."""
    out = []
    for f in files:
        rows = []
        for ln in f.lines:
            m = ln.match
            cls = f' class="m{(m - 1) % MARKS + 1}"' if m else ""
            mark = f"#{m}" if m else ""
            rows.append(f'<span{cls}><span class="ln">{ln.n}</span>'
                        f'<span class="mk">{mark}</span>{esc(ln.text)}</span>')
        out.append(f"<h3>{esc(f.file)}</h3>"
                   f'<pre tabindex="0" class="gl-source gl-code">{"".join(rows)}</pre>')
    return "".join(out)


def pair_page(name: str, index: int, v: PairView, nav: str) -> str:
    """Two students' files side by side, the matched regions marked alike."""
    body = (f"<p>{v.similarity:.0%} similar, {v.matches} matched regions: each is "
            "numbered (#1, #2, ...) and coloured the same on both sides. "
            f"{link(_a(name) + '/similarity', 'all pairs')}</p>"
            f'<div class="gl-side"><div><h2>{esc(v.a)}</h2>{_code(v.left)}</div>'
            f'<div><h2>{esc(v.b)}</h2>{_code(v.right)}</div></div>')
    return layout(f"{name}: {v.a} and {v.b}", body, nav=nav, crumbs=_crumbs(
        (_a(name), name), (f"{_a(name)}/similarity", "similarity"),
        (None, f"pair {index}")))


def usage_page(u: UsageView, nav: str) -> str:
    """The course account's core-hours per QOS: live feedback and bulk grading apart."""
    body = (f"<p>Slurm account <b>{esc(u.account or '(none)')}</b>, "
            f"{esc(u.period)}: core-hours as fair share charges them "
            "(allocated cores × elapsed time).</p>")
    if u.rows:
        body += table("Core-hours per account and QOS", ["Account", "QOS", "Jobs",
                                                          "Core-hours"],
                      [[esc(r.account), esc(r.qos), str(r.jobs), f"{r.core_hours:.3f}"]
                       for r in u.rows], numeric=(2, 3))
        body += f"<p>total: {sum(r.core_hours for r in u.rows):.3f} core-hours</p>"
    else:
        body += notice("info", f"<p>{esc(u.why or 'no jobs in this period')}</p>")
    return layout("cluster use", body, nav=nav, crumbs=_crumbs((None, "cluster use")))
