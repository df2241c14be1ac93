"""The staff pages (an assignment, a student, one submission, a regrade preview) and a
student's own page, rendered on the server from the plain data of
``course.staffview`` and ``course.studentview``: what is on a page is decided there,
how it looks here."""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from grader.adapters.web.live import CSS

esc = html.escape
MORE_CSS = """nav a{margin-right:1em}pre{background:#f6f6f6;padding:.5em;overflow-x:auto;
max-height:24em;white-space:pre-wrap}.ok{color:#070}.muted{color:#888}
.hidden{background:#fff3f3}.counts{font-weight:bold}.side{display:flex;gap:1em}
.side>div{flex:1;min-width:0}pre.source{max-height:none;white-space:pre}"""


def layout(title: str, body: str, nav: str = "", refresh_s: int | None = None) -> str:
    """A whole page (``data-ready`` tells a headless browser it rendered)."""
    meta = f"<meta http-equiv='refresh' content='{refresh_s}'>" if refresh_s else ""
    return (f"<!doctype html><html><head><meta charset='utf-8'>{meta}<title>{esc(title)}"
            f"</title><style>{CSS}{MORE_CSS}</style></head><body data-ready='1'>{nav}"
            f"<h1>{esc(title)}</h1>{body}</body></html>")


def link(href: str, text: object) -> str:
    return f"<a href='{esc(href, quote=True)}'>{esc(str(text))}</a>"


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "") -> str:
    """Cells are HTML already (escape what came from data)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(f"<tr>{''.join(f'<td>{c}</td>' for c in r)}</tr>" for r in rows)
    return f"<table class='{cls}'><tr>{head}</tr>{body}</table>" if body else \
        "<p class='muted'>none</p>"


def _n(v: object, unit: str = "") -> str:
    if v is None or v == "":
        return "<span class='muted'>–</span>"
    if isinstance(v, float):
        return f"{v:.4g}{unit}"
    return esc(str(v)) + unit


def _verdict(v: object) -> str:
    if v is None:
        return "<span class='muted'>–</span>"
    return f"<span class='{'ok' if v == 'AC' else 'bad'}'>{esc(str(v))}</span>"


def staff_nav(assignments: Sequence[str]) -> str:
    items = [link("/", "live")] + [link(f"/a/{quote(a)}", a) for a in assignments] + \
        [link("/usage", "cluster use")]
    return "<nav>" + "".join(items) + "</nav>"


def assignment_page(name: str, rows: Sequence[Mapping[str, Any]], nav: str) -> str:
    body = table(
        ("student", "name", "attempts", "last", "grade", "counting", "late h", "grace d",
         "penalty %", "raw %", "final %", "points"),
        ([link(f"/s/{quote(r['student'])}", r["student"]), esc(r["name"]),
          str(r["attempts"]), _verdict(r["last_verdict"]), esc(r["status"]),
          link(f"/sub/{quote(r['counting'])}", r["counting"][:19]) if r["counting"]
          else _n(None), _n(r.get("late_hours")), _n(r.get("grace_days")),
          _n(r.get("penalty_pct")), _n(r.get("raw_pct")), _n(r.get("final_pct")),
          _n(r.get("points"))] for r in rows))
    extra = f"<p>{link(f'/a/{quote(name)}/preview', 'regrade preview')} &middot; " \
            f"{link(f'/a/{quote(name)}/similarity', 'similarity')} &middot; " \
            f"JSON: {link(f'/api/a/{quote(name)}', 'api')}</p>"
    return layout(f"{name}: every student", body + extra, nav)


def _attempts(rows: Sequence[Mapping[str, Any]]) -> str:
    return table(("submission", "handed in", "late h", "state", "verdict", "score",
                  "phase", "counts"),
                 ([link(f"/sub/{quote(a['id'])}", a["id"][:19]), esc(a["submitted_at"]),
                   _n(a["late_hours"]), esc(a["state"]) + (
                       f" <small>{esc(a['reason'])}</small>" if a["reason"] else ""),
                   _verdict(a["verdict"]),
                   _n(a["score"]) + ("/" + _n(a["max_score"]) if a["max_score"] else ""),
                   _n(a["phase"]), "<span class='counts'>counts</span>" if a["counts"]
                   else ""] for a in rows))


def student_page(student: str, history: Sequence[Mapping[str, Any]], nav: str) -> str:
    parts = []
    for h in history:
        g = h["grade"]
        parts.append(f"<h2>{esc(h['assignment'])}</h2><p>due {esc(h['deadline'][:16])}; "
                     f"grade: {esc(g['status'])} {_n(g.get('final_pct'), ' %')}</p>"
                     + _attempts(h["attempts"]))
    return layout(f"{student}: every attempt", "".join(parts), nav)


def _tests(tests: Sequence[Mapping[str, Any]]) -> str:
    return table(("test", "group", "shown to students", "verdict", "cpu s", "memory",
                  "feedback", "output"),
                 ([esc(t["name"]), esc(t["group"]), esc(t["shown"]), _verdict(t["verdict"]),
                   _n(t["cpu_s"]), _n((t["memory_bytes"] or 0) >> 20, " MiB")
                   if t["memory_bytes"] else _n(None),
                   f"<small>{esc(t['feedback'][:300])}</small>",
                   f"<pre>{esc(t['output'][:300])}</pre>" if t["output"] else ""]
                  for t in tests))


def submission_page(s: Mapping[str, Any], nav: str) -> str:
    stamps = ", ".join(f"{k} {esc(v[11:19])}" for k, v in s["stamps"].items() if v)
    head = (f"<p>{link('/s/' + quote(s['student']), s['student'])} &middot; "
            f"{link('/a/' + quote(s['assignment']), s['assignment'])} &middot; handed in "
            f"{esc(s['submitted_at'])} ({_n(s['late_hours'])} h late) &middot; "
            f"{esc(s['state'])} {esc(s['reason'])} &middot; {esc(s['language'] or '')}</p>"
            f"<p class='muted'>{stamps}</p>")
    files = "".join(f"<h3>{esc(f['name'])}</h3><pre class='source'>{esc(f['text'])}</pre>"
                    for f in s["files"]) or "<p class='muted'>no files kept</p>"
    results = []
    for r in s["results"]:
        gone = f", superseded {esc(r['superseded'][:19])}" if r["superseded"] else ""
        comp = f"<h4>compiler</h4><pre>{esc(r['compile_output'])}</pre>" \
            if r["compile_output"] else ""
        msg = f"<p>{esc(r['message'])}</p>" if r["message"] else ""
        results.append(f"<h3>{esc(r['phase'])} phase: {_verdict(r['verdict'])} "
                       f"{_n(r['score'])}/{_n(r['max_score'])}</h3><p class='muted'>"
                       f"version {esc(r['version'])}, graded {esc(str(r['made'])[:19])}"
                       f"{gone}</p>{msg}{comp}{_tests(r['tests'])}")
    return layout(f"submission {s['id'][:19]}", head + "<h2>Files</h2>" + files
                  + "<h2>Results</h2>" + ("".join(results) or "<p>not graded yet</p>"),
                  nav)


def preview_page(name: str, p: Mapping[str, Any] | None, nav: str) -> str:
    if p is None:
        body = (f"<p>No preview yet. Run <code>gradeline regrade --assignment {esc(name)} "
                "--preview</code> after changing the package.</p>")
        return layout(f"{name}: regrade preview", body, nav)
    changed = [c for c in p["changes"] if c["changed"]]
    body = (f"<p>package version {esc(p['new_version'][:12])}, previewed "
            f"{esc(p['made'][:19])}: {len(changed)} of {len(p['changes'])} submissions "
            f"would change. Apply with <code>gradeline regrade --assignment {esc(name)}"
            "</code>.</p>"
            + table(("student", "submission", "verdict now", "would be", "score now",
                     "would be"),
                    ([link(f"/s/{quote(c['student'])}", c["student"]),
                      link(f"/sub/{quote(c['id'])}", c["id"][:19]), _verdict(c["old_verdict"]),
                      _verdict(c["new_verdict"]), _n(c["old_score"]), _n(c["new_score"])]
                     for c in changed)))
    return layout(f"{name}: regrade preview", body, nav)


def mine_page(view: Mapping[str, Any]) -> str:
    """A student's own page (what ``course.studentview`` allows, nothing more)."""
    parts = []
    for a in view["assignments"]:
        rel = f"; results released {esc(a['released'][:16])}" if a["released"] else ""
        parts.append(f"<h2>{esc(a['name'])}</h2><p>your deadline {esc(a['deadline'][:16])}"
                     f"{rel}</p>")
        for s in a["submissions"]:
            parts.append(_mine_submission(s))
        if not a["submissions"]:
            parts.append("<p class='muted'>nothing handed in</p>")
    return layout(f"{view['student']} in {view['course']}", "".join(parts), refresh_s=30)


def _mine_submission(s: Mapping[str, Any]) -> str:
    late = f", {s['late_hours']} h late" if s["late_hours"] else ""
    counts = " <span class='counts'>(counts)</span>" if s["counts"] else ""
    sha = f"<p class='muted'>sha256 {esc(s['sha256'])}</p>" if s.get("sha256") else ""
    head = f"<h3>{esc(s['id'][:19])}: {esc(s['submitted_at'][:19])}{late}{counts}</h3>{sha}"
    if s["state"] == "quarantined":
        return head + f"<p class='bad'>refused: {esc(s['reason'])}</p>"
    if s.get("verdict") is None:
        return head + "<p>waiting to be graded</p>"
    total = _n(s["score"]) + (f"/{_n(s['max_score'])}" if s.get("max_score") else "")
    more = "" if s.get("complete") else \
        " <small>(more groups after the deadline or when staff release)</small>"
    out = [head, f"<p>{_verdict(s['verdict'])} {total}{more}</p>"]
    if s.get("message"):
        out.append(f"<p>{esc(s['message'])}</p>")
    if s.get("compile_output"):
        out.append(f"<pre>{esc(s['compile_output'])}</pre>")
    out.append(table(("group", "verdict", "passed", "points"),
                     ([esc(g["name"]), _verdict(g["verdict"]), f"{g['passed']}/{g['total']}",
                       f"{_n(g['points'])} of {_n(g['max_points'])}"] for g in s["groups"])))
    for t in s["tests"]:
        if t["verdict"] == "AC":
            continue
        out.append(f"<h4>{esc(t['name'])}: {_verdict(t['verdict'])}</h4>"
                   f"<p>{esc(t['feedback'])}</p><div class='side'>"
                   + "".join(f"<div><b>{k}</b><pre>{esc(t.get(k, ''))}</pre></div>"
                             for k in ("input", "expected", "output")) + "</div>")
    return "".join(out)


def similarity_page(name: str, r: Mapping[str, Any] | None, nav: str) -> str:
    if r is None:
        body = (f"<p>No report yet. After the deadline run <code>gradeline similarity "
                f"{esc(name)}</code>.</p>")
        return layout(f"{name}: similarity", body, nav)
    starter = "starter code left out" if r["starter"] else "no starter code given"
    body = (f"<p>{esc(r['tool'])}, {esc(r['made'][:19])}: {r['students']} students' "
            f"counting submissions, {starter}; pairs at or above {r['threshold']:g}:</p>"
            + table(("similarity", "student", "student", "language", "matches", ""),
                    ([f"{p['similarity']:.0%}", link(f"/s/{quote(p['a'])}", p["a"]),
                      link(f"/s/{quote(p['b'])}", p["b"]), esc(p["language"]),
                      str(len(p["matches"])),
                      link(f"/a/{quote(name)}/similarity/{i}", "side by side")]
                     for i, p in enumerate(r["pairs"])))
            + "".join(f"<p class='muted'>left out: {esc(w)}</p>" for w in r["skipped"]))
    return layout(f"{name}: similarity", body, nav)


PALETTE = ("#ffe08a", "#a8e6a1", "#9fd3ff", "#f7b2d9", "#d4c2ff", "#ffc9a3")


def _code(files: Sequence[Mapping[str, Any]]) -> str:
    out = []
    for f in files:
        rows = "".join(
            f"<div class='m{ln['match']}' style='background:"
            f"{PALETTE[(ln['match'] - 1) % len(PALETTE)] if ln['match'] else 'none'}'>"
            f"<span class='muted'>{ln['n']:4d}</span> {esc(ln['text'])}</div>"
            for ln in f["lines"])
        out.append(f"<h3>{esc(f['file'])}</h3><pre class='source'>{rows}</pre>")
    return "".join(out)


def pair_page(name: str, index: int, v: Mapping[str, Any], nav: str) -> str:
    body = (f"<p>{v['similarity']:.0%} similar, {v['matches']} matched regions (same "
            f"colour on both sides). {link(f'/a/{quote(name)}/similarity', 'all pairs')}"
            f"</p><div class='side'><div><h2>{esc(v['a'])}</h2>{_code(v['left'])}</div>"
            f"<div><h2>{esc(v['b'])}</h2>{_code(v['right'])}</div></div>")
    return layout(f"{name}: {v['a']} and {v['b']}", body, nav)


def usage_page(u: Mapping[str, Any], nav: str) -> str:
    """The course account's core-hours per QOS: live feedback and bulk grading apart."""
    rows = u.get("rows") or []
    body = f"<p>Slurm account <b>{esc(str(u.get('account') or '(none)'))}</b>, " \
           f"{esc(str(u.get('period', '')))}: core-hours as fair share charges them " \
           "(allocated cores &times; elapsed time).</p>"
    if rows:
        body += table(("account", "QOS", "jobs", "core-hours"),
                      ([esc(r["account"]), esc(r["qos"]), str(r["jobs"]),
                        f"{r['core_hours']:.3f}"] for r in rows))
        body += f"<p>total: {sum(r['core_hours'] for r in rows):.3f} core-hours</p>"
    else:
        body += f"<p class='muted'>{esc(str(u.get('why') or 'no jobs in this period'))}</p>"
    return layout("cluster use", body, nav)

