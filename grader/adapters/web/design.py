"""The one page design every gradeline web page shares: a whole accessible HTML document
and the pieces pages are made of, as strings.

Staff pages, a student's page, the hand-in form, and later the LTI and Open OnDemand
front ends all look alike and behave alike: a skip link, header/nav/main/footer
landmarks, verdicts that say their code and words (not colour alone), captioned
tables in named scroll regions, readable on a phone and inside an LMS iframe. The
stylesheet ``gradeline.css`` ships beside this module and is inlined, so a page fetches
nothing (login nodes are often offline) and a Content-Security-Policy can allow
exactly it (:data:`CSP`).

Pure: string building only. Plain-text arguments are escaped here; arguments named
``*_html`` (and ``body``, ``nav``, ``crumbs`` and table cells) are HTML already, so
escape data before putting it there.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from urllib.parse import quote

from grader.core.verdict import Verdict

CSS = resources.files("grader.adapters.web").joinpath("gradeline.css").read_text("utf-8")
#: the CSP ``style-src`` source of the inlined stylesheet (its hash)
STYLE_HASH = "sha256-" + base64.b64encode(hashlib.sha256(CSS.encode()).digest()).decode()
#: no script, no style but ours, nothing from elsewhere; frames are allowed (an LMS embeds)
CSP = (f"default-src 'none'; style-src '{STYLE_HASH}'; img-src 'self' data:; "
       "form-action 'self'; base-uri 'none'")

#: what a screen reader says after a verdict's code
VERDICT_WORDS: dict[str, str] = {
    Verdict.AC: "accepted", Verdict.WA: "wrong answer", Verdict.TLE: "time limit exceeded",
    Verdict.MLE: "memory limit exceeded", Verdict.RE: "run-time error",
    Verdict.OLE: "output limit exceeded", Verdict.CE: "compile error",
    Verdict.JE: "judge error"}
NOTICE_LABELS = {"info": "Note", "warn": "Warning", "error": "Error"}
RECEIPT_LABELS = (
    ("submission", "Submission"), ("course", "Course"), ("assignment", "Assignment"),
    ("student", "Student"), ("file", "File"), ("size", "Size"), ("sha256", "SHA-256"),
    ("received_at", "Received"), ("deadline", "Your deadline"), ("late", "Late"),
    ("deferred", "Deferred"), ("limit", "Limit met"), ("left", "Hand-ins left"))
DASH = "–"


def esc(text: object) -> str:
    """``text`` as HTML text or an attribute value (quotes escaped too)."""
    return html.escape(str(text), quote=True)


def link(href: str, text: object) -> str:
    """A link; both escaped."""
    return f'<a href="{esc(href)}">{esc(text)}</a>'


def muted(text: str = DASH) -> str:
    """Secondary text; a dash by default (a value that is not there)."""
    return f'<span class="gl-muted">{esc(text)}</span>'


def num(value: object, unit: str = "") -> str:
    """A value for a table cell: floats to 4 significant digits, missing as a dash."""
    if value is None or value == "":
        return muted()
    if isinstance(value, float):
        return f"{value:.4g}{esc(unit)}"
    return esc(value) + esc(unit)


def layout(title: str, body: str, *, nav: str = "", crumbs: str = "",
           site: str = "gradeline", site_href: str | None = "/", footer_html: str = "",
           refresh_s: int | None = None) -> str:
    """A whole HTML5 page: skip link, header (site name, ``nav``), main (``crumbs``,
    ``title`` as h1, ``body``) and footer, with the stylesheet inlined.

    :param nav: the main navigation's list (:func:`nav_links`).
    :param site_href: where the site name links (None: no link, for a page whose
        reader may open no other).
    :param refresh_s: reload the page every so many seconds. A page must not reload
        itself unasked (WCAG 2.2.1; axe's ``meta-refresh`` is critical), so pass it only
        when the reader turned it on.
    """
    meta = f'<meta http-equiv="refresh" content="{int(refresh_s)}">' if refresh_s else ""
    navigation = f'<nav class="gl-nav" aria-label="Main">{nav}</nav>' if nav else ""
    brand = (f'<a class="gl-brand" href="{esc(site_href)}">{esc(site)}</a>'
             if site_href is not None else f'<span class="gl-brand">{esc(site)}</span>')
    foot = footer_html or "gradeline: automatic grading and feedback"
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"{meta}<title>{esc(title)} · {esc(site)}</title><style>{CSS}</style></head>\n"
        '<body data-ready="1"><a class="gl-skip" href="#main">Skip to main content</a>\n'
        f'<header class="gl-header"><div class="gl-header-in">{brand}{navigation}</div>'
        f'</header>\n<main id="main" class="gl-main" tabindex="-1">{crumbs}'
        f"<h1>{esc(title)}</h1>\n{body}\n</main>\n"
        f'<footer class="gl-footer"><div class="gl-footer-in">{foot}</div></footer>\n'
        "</body></html>\n")


#: the query that turns a page's reloading on (``?refresh=on``)
REFRESH_QUERY = ("refresh", "on")


def reload_links(every_s: int, *, on: bool) -> str:
    """A Reload link, and one that turns reloading every ``every_s`` seconds on (or off):
    the reader chooses, since a page that reloads itself unasked moves focus and
    reading position away (WCAG 2.2.1). Relative links: the page may sit under a
    prefix (Open OnDemand, an LMS)."""
    key, value = REFRESH_QUERY
    if on:
        return (f'<p class="gl-lead">Reloading every {int(every_s)} s · '
                '<a href="?">Stop reloading</a></p>')
    return (f'<p class="gl-lead"><a href="?">Reload</a> · '
            f'<a href="?{key}={value}">Reload every {int(every_s)} s</a></p>')


def nav_links(items: Sequence[tuple[str, str]], current: str | None = None) -> str:
    """``(href, text)`` pairs as a list of links; the one at ``current`` is marked
    ``aria-current="page"`` (said, and shown, as where the reader is)."""
    mark = ' aria-current="page"'
    lis = "".join(
        f'<li><a href="{esc(href)}"{mark if href == current else ""}>{esc(text)}</a></li>'
        for href, text in items)
    return f"<ul>{lis}</ul>"


def breadcrumbs(items: Sequence[tuple[str | None, str]]) -> str:
    """``(href, text)`` pairs from the top down; the last is this page (its href unused)."""
    lis = [f'<li><a href="{esc(href)}">{esc(text)}</a></li>' for href, text in items[:-1]
           if href is not None]
    if items:
        lis.append(f'<li aria-current="page">{esc(items[-1][1])}</li>')
    return f'<nav class="gl-crumbs" aria-label="Breadcrumb"><ol>{"".join(lis)}</ol></nav>'


def verdict_badge(code: object) -> str:
    """A verdict as a badge: its code as text, a symbol (CSS), the words for screen
    readers, colour last; a code gradeline does not know (``quarantined``) plainly, and
    None (not graded) as a dash."""
    if code is None or code == "":
        return (f'<span class="v v-none">{DASH}<span class="visually-hidden"> not graded'
                "</span></span>")
    word = VERDICT_WORDS.get(str(code))
    if word is None:
        return f'<span class="v">{esc(code)}</span>'
    return (f'<span class="v v-{esc(code)}">{esc(code)}'
            f'<span class="visually-hidden"> ({word})</span></span>')


def _g(x: float) -> str:
    return f"{x:.4g}"


def score_bar(score: float, max_score: float) -> str:
    """``score / max_score`` as text, a bar beside it (hidden from screen readers: the
    text says it)."""
    if max_score <= 0:
        return f'<span class="gl-score">{_g(score)}</span>'
    value = min(max(score, 0.0), max_score)
    return (f'<span class="gl-score"><meter min="0" max="{_g(max_score)}" '
            f'value="{_g(value)}" aria-hidden="true"></meter>'
            f"{_g(score)} / {_g(max_score)}</span>")


def percent_bar(pct: float, *, sign: bool = True) -> str:
    """A percentage in text (to 4 significant digits), with a decorative bar.

    :param sign: write the "%" (leave it to a column header that says it).
    """
    text = ("< 1" if 0 < pct < 1 else f"{pct:.4g}") + (" %" if sign else "")
    return (f'<span class="gl-score"><meter min="0" max="100" '
            f'value="{min(max(pct, 0.0), 100.0):.4g}" aria-hidden="true"></meter>{text}</span>')


def share_bar(count: int, total: int) -> str:
    """``count`` of ``total`` as a whole percentage in text, with a decorative bar."""
    pct = 100 * count / total if total else 0.0
    return percent_bar(pct if 0 < pct < 1 else round(pct))


def table(caption: str, headers: Sequence[str], rows: Sequence[Sequence[str]], *,
          row_header: bool = True, numeric: Sequence[int] = (), wrap: Sequence[int] = (),
          table_id: str | None = None) -> str:
    """A captioned table in a scroll region that keyboard users can focus and that the
    caption names, so a wide table scrolls by itself instead of the page (WCAG 1.4.10).

    :param rows: cells as HTML; with ``row_header`` a row's first cell is its header.
    :param numeric: columns aligned right.
    :param wrap: columns whose long text wraps (the others stay on one line).
    :param table_id: the caption's id (default: from the caption, so keep captions on
        one page distinct).
    """
    tid = table_id or "t-" + hashlib.sha1(caption.encode(),
                                          usedforsecurity=False).hexdigest()[:8]
    if not rows:
        return f'<p class="gl-muted" id="{esc(tid)}">{esc(caption)}: none.</p>'

    def cls(i: int) -> str:
        names = ("num",) * (i in numeric) + ("gl-wrap",) * (i in wrap)
        return f' class="{" ".join(names)}"' if names else ""

    head = "".join(f'<th scope="col"{cls(i)}>{esc(h)}</th>' for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(f'<th scope="row"{cls(i)}>{c}</th>' if row_header and i == 0
                         else f"<td{cls(i)}>{c}</td>" for i, c in enumerate(row)) + "</tr>"
        for row in rows)
    return (f'<div class="gl-scroll" tabindex="0" role="region" aria-labelledby="{esc(tid)}">'
            f'<table class="gl-table"><caption id="{esc(tid)}"><span>{esc(caption)}</span>'
            f"</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")


def notice(kind: str, text_html: str) -> str:
    """A notice led by its word (Note, Warning, Error); an error is announced
    (``role="alert"``)."""
    if kind not in NOTICE_LABELS:
        raise ValueError(f"notice kind {kind!r}: one of {', '.join(NOTICE_LABELS)}")
    role = ' role="alert"' if kind == "error" else ""
    return (f'<div class="gl-notice gl-notice-{kind}"{role}><strong class="gl-notice-label">'
            f"{NOTICE_LABELS[kind]}:</strong><div>{text_html}</div></div>")


def message_page(title: str, text: str, *, kind: str = "error",
                 site_href: str | None = "/") -> str:
    """A page that says one thing (mostly why not), as a notice led by its word."""
    return layout(title, notice(kind, f"<p>{esc(text)}</p>"), site_href=site_href)


def pre(text: str, *, source: bool = False) -> str:
    """Program text or output, escaped, in a block keyboard users can focus and scroll.

    :param source: keep long lines whole (scroll sideways rather than wrap).
    """
    cls = ' class="gl-source"' if source else ""
    return f'<pre tabindex="0"{cls}>{esc(text)}</pre>'


def stats(items: Sequence[tuple[str, str]]) -> str:
    """Key figures as a row of cards: ``(label, value_html)`` pairs."""
    cards = "".join(f"<div><dt>{esc(k)}</dt><dd>{v}</dd></div>" for k, v in items)
    return f'<dl class="gl-stats">{cards}</dl>'


def meta(items: Sequence[tuple[str, str]]) -> str:
    """Facts as a two-column list: ``(label, value_html)`` pairs."""
    rows = "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in items)
    return f'<dl class="gl-meta">{rows}</dl>'


def progress(done: int, total: int, label: str, *, field_id: str = "gl-progress") -> str:
    """A progress bar whose numbers are also text (``label``: what is counted)."""
    pct = f" ({100 * done / total:.0f} %)" if total else ""
    return (f'<div class="gl-progress"><label for="{esc(field_id)}">{esc(label)}: '
            f"<strong>{done} of {total}</strong>{pct}</label>"
            f'<progress id="{esc(field_id)}" max="{max(total, 1)}" value="{done}">'
            f"{done} of {total}</progress></div>")


def upload_form(action: str, assignments: Sequence[str], *, csrf_token: str, max_mib: int,
                note_html: str = "", error: str = "", selected: str | None = None) -> str:
    """The hand-in form (multipart/form-data): an assignment, one file, a button.

    :param error: plain text shown under the file field and tied to it
        (``aria-describedby``), so a screen reader says it on the field.
    :param csrf_token: sent back in the hidden field ``csrf``.
    """
    options = "".join(
        f'<option value="{esc(a)}"{" selected" if a == selected else ""}>{esc(a)}</option>'
        for a in assignments)
    described, err, invalid = "handin-file-hint", "", ""
    if error:
        described = "handin-file-error handin-file-hint"
        err = f'<p class="gl-field-error" id="handin-file-error">{esc(error)}</p>'
        invalid = ' aria-invalid="true"'
    return (
        f'<form class="gl-form" method="post" action="{esc(action)}" '
        'enctype="multipart/form-data">'
        f'<input type="hidden" name="csrf" value="{esc(csrf_token)}">'
        '<div class="gl-field"><label for="handin-assignment">Assignment</label>'
        f'<select id="handin-assignment" name="assignment" required>{options}</select></div>'
        '<div class="gl-field"><label for="handin-file">File</label>'
        f'<input type="file" id="handin-file" name="file" required{invalid} '
        f'aria-describedby="{described}">{err}'
        f'<p class="gl-hint" id="handin-file-hint">One file, at most {int(max_mib)} MiB.</p>'
        f"</div>{note_html}"
        '<button class="gl-button" type="submit">Hand in</button></form>')


def _receipt_value(key: str, value: object) -> str:
    if key == "late":
        return "yes, after your deadline" if value else "no"
    if key == "deferred":
        return "yes: graded after the others, feedback after your deadline" if value else "no"
    if key == "size" and isinstance(value, int):
        return f"{value:,} bytes"
    return esc(value)


def receipt_box(receipt: Mapping[str, object]) -> str:
    """A hand-in's signed receipt: the fields people read, then the whole receipt as
    JSON (one click selects it) and as a file to download (a ``data:`` link: nothing
    is fetched)."""
    rows = "".join(f"<dt>{label}</dt><dd>{_receipt_value(key, receipt[key])}</dd>"
                   for key, label in RECEIPT_LABELS if key in receipt)
    text = json.dumps(dict(receipt), indent=1, sort_keys=True)
    name = f"receipt-{receipt.get('assignment', 'hand-in')}-{receipt.get('submission', '')}"
    href = "data:application/json;charset=utf-8," + quote(text)
    return (
        '<section class="gl-receipt" aria-labelledby="receipt-h">'
        '<h2 id="receipt-h">Receipt</h2>'
        "<p>Keep this receipt: it is signed, so staff can check that the course's desk "
        "issued it.</p>"
        f'<dl class="gl-meta">{rows}</dl>'
        f"<p>The whole receipt, as staff check it:</p>{pre(text)}"
        f'<p><a href="{esc(href)}" download="{esc(name.rstrip("-"))}.json">'
        "Download the receipt (JSON)</a></p></section>")


#: a link or form target that is absolute on the site (the staff pages' own paths)
_ROOTED = re.compile(r"""((?:href|action)=)(["'])/(?!/)""")


def rebase(html: str, base: str) -> str:
    """Links of a page rendered for the site's root, moved under ``base`` (where a front end serves
    them: an LMS launch's path, an OnDemand app's)."""
    return _ROOTED.sub(lambda m: f"{m.group(1)}{m.group(2)}{base}/", html)
