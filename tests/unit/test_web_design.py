"""The shared page design (``adapters.web.design``) and every page built on it: whole
documents with balanced tags and unique ids, data escaped, verdicts that say their code
and words, captioned tables in named scroll regions, labelled form fields, a receipt
that round-trips, colours with enough contrast, no script, no style attribute and
nothing from the network. (In a browser, with axe-core: tests/integration/
test_page_design.py.)"""

from __future__ import annotations

import html
import json
import re
import tomllib
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest

from grader.adapters.web import design as d
from grader.adapters.web import live_page, pages, student
from grader.core.verdict import Verdict
from grader.course.similarity_pairs import FileLines, Line, PairView
from grader.course.staffview import Snapshot

from ..page_samples import PAGES, RECEIPT, VIEW

ROOT = Path(__file__).resolve().parents[2]
VOID = {"meta", "link", "input", "br", "hr", "img", "source", "col", "wbr", "circle",
        "line", "polyline"}


class Balance(HTMLParser):
    """Records ids and attributes; fails on a closing tag that does not match."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.ids: list[str] = []
        self.attrs: list[tuple[str, str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        self.ids += [v for k, v in attrs if k == "id" and v]
        self.attrs += [(tag, k, v) for k, v in attrs]
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.attrs += [(tag, k, v) for k, v in attrs]

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-5:])
        self.stack.pop()


def parse(doc: str) -> Balance:
    b = Balance()
    b.feed(doc)
    b.close()
    assert b.stack == [], b.stack
    assert len(b.ids) == len(set(b.ids)), "duplicate ids"
    return b


def test_layout_is_a_whole_accessible_document():
    doc = d.layout("a <b> & c", "<p>body</p>", nav=d.nav_links([("/", "Home")], "/"))
    parse(doc)
    assert doc.startswith("<!doctype html>") and '<html lang="en">' in doc
    assert 'name="viewport" content="width=device-width, initial-scale=1"' in doc
    assert "<title>a &lt;b&gt; &amp; c · gradeline</title>" in doc
    body = doc.split("<body", 1)[1]
    assert re.match(r'[^>]*><a class="gl-skip" href="#main">', body), "skip link first"
    for landmark in ("<header", '<nav class="gl-nav" aria-label="Main"', '<main id="main"',
                     "<footer"):
        assert landmark in doc
    assert '<a href="/" aria-current="page">Home</a>' in doc
    assert f"<style>{d.CSS}</style>" in doc and "refresh" not in doc
    assert 'http-equiv="refresh" content="30"' in d.layout("t", "", refresh_s=30)
    assert '<span class="gl-brand">' in d.layout("t", "", site_href=None)


def test_the_stylesheet_ships_and_the_policy_allows_exactly_it():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "adapters/web/gradeline.css" in data["tool"]["setuptools"]["package-data"]["grader"]
    assert (ROOT / "grader/adapters/web/gradeline.css").read_text() == d.CSS
    assert f"style-src '{d.STYLE_HASH}';" in d.CSP and "default-src 'none'" in d.CSP
    assert "script-src" not in d.CSP and "url(" not in d.CSS and "@import" not in d.CSS


def test_verdict_badges_carry_code_and_words():
    assert set(d.VERDICT_WORDS) == set(Verdict)
    for code, words in d.VERDICT_WORDS.items():
        badge = d.verdict_badge(code)
        assert f'class="v v-{code}"' in badge and f">{code}<" in badge and words in badge
        assert f".v-{code} " in d.CSS, f"no style for {code}"
    assert "&lt;x&gt;" in d.verdict_badge("<x>") and "v-<" not in d.verdict_badge("<x>")
    assert "not graded" in d.verdict_badge(None)


def test_table_has_caption_scopes_and_a_named_scroll_region():
    t = d.table("Scores & more", ["Student", "Score"], [["<a href='/s/x'>x</a>", "3"]],
                numeric=(1,))
    parse(t)
    m = re.search(r'<div class="gl-scroll" tabindex="0" role="region" '
                  r'aria-labelledby="([^"]+)">', t)
    assert m and f'<caption id="{m[1]}"><span>Scores &amp; more</span></caption>' in t
    assert '<th scope="col">Student</th>' in t and '<th scope="row"><a' in t
    assert '<td class="num">3</td>' in t
    assert 'scope="row"' not in d.table("c", ["a", "b"], [["1", "2"]], row_header=False)
    assert "none" in d.table("Empty", ["a"], [])


def test_bars_say_it_in_text():
    bar = d.score_bar(7, 10)
    assert "7 / 10" in bar and 'aria-hidden="true"' in bar
    assert 'value="10"' in d.score_bar(12, 10) and "<meter" not in d.score_bar(3, 0)
    assert "< 1 %" in d.share_bar(1, 400) and "25 %" in d.share_bar(1, 4)


def test_notice_and_reload_links():
    assert 'role="alert"' in d.notice("error", "x") and "Error:" in d.notice("error", "x")
    assert "role=" not in d.notice("info", "x")
    with pytest.raises(ValueError, match="notice kind"):
        d.notice("fatal", "x")
    assert 'href="?refresh=on"' in d.reload_links(5, on=False)
    assert "Stop reloading" in d.reload_links(5, on=True)


def test_upload_form_labels_csrf_and_error():
    f = d.upload_form("/hand-in?a=1&b=2", ["bigsum", "<evil>"], csrf_token='t"k',
                      max_mib=16, error="too <big>", selected="bigsum")
    ids = parse(f).ids
    assert 'enctype="multipart/form-data"' in f and 'method="post"' in f
    assert 'action="/hand-in?a=1&amp;b=2"' in f
    assert '<input type="hidden" name="csrf" value="t&quot;k">' in f
    fields = re.findall(r'<(?:input|select) [^>]*\bid="([^"]+)"', f)
    assert fields == ["handin-assignment", "handin-file"]
    for field in fields:
        assert f'<label for="{field}">' in f
    described = re.search(r'aria-describedby="([^"]+)"', f)
    assert described and all(i in ids for i in described[1].split())
    assert 'aria-invalid="true"' in f and "too &lt;big&gt;" in f and "&lt;evil&gt;" in f
    assert '<option value="bigsum" selected>' in f
    assert "aria-invalid" not in d.upload_form("/h", ["a"], csrf_token="t", max_mib=1)


def test_receipt_box_round_trips_and_escapes():
    r = {"submission": "s1", "assignment": "bigsum", "file": "<script>.cpp", "size": 1834,
         "late": True, "signature": "abc"}
    box = d.receipt_box(r)
    parse(box)
    assert "<script>" not in box and "1,834 bytes" in box and "after your deadline" in box
    text = re.search(r"<pre[^>]*>(.*?)</pre>", box, re.S)
    assert text and json.loads(html.unescape(text[1])) == r
    link = re.search(r'href="data:application/json;charset=utf-8,([^"]+)"', box)
    assert link and json.loads(unquote(html.unescape(link[1]))) == r
    assert 'download="receipt-bigsum-s1.json"' in box


def _vars(block: str) -> dict[str, str]:
    return dict(re.findall(r"--([a-z0-9-]+):\s*(#[0-9a-f]{6})", block))


def _ratio(a: str, b: str) -> float:
    def lum(h: str) -> float:
        c = [int(h[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        c = [x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4 for x in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_colour_contrast_light_and_dark():
    """What axe cannot judge (text in SVG, lines on a match's colour) checked here."""
    light = _vars(d.CSS.split("@media")[0])
    dark = {**light, **_vars(d.CSS.split("prefers-color-scheme: dark")[1].split("}")[0])}
    for scheme in (light, dark):
        for kind in ("ok", "bad", "lim", "ce", "je"):
            assert _ratio(scheme[f"{kind}-fg"], scheme[f"{kind}-bg"]) >= 4.5, kind
        for fg in ("text", "muted", "accent", "bad-fg"):
            for bg in ("bg", "surface", "row"):
                assert _ratio(scheme[fg], scheme[bg]) >= 4.5, (fg, bg)
        for m in range(1, pages.MARKS + 1):
            assert _ratio(scheme["text"], scheme[f"m{m}"]) >= 4.5, m
        assert _ratio(scheme["accent-text"], scheme["accent"]) >= 4.5
        assert _ratio(scheme["focus"], scheme["bg"]) >= 3  # non-text contrast


@pytest.mark.parametrize("name", PAGES)
def test_every_page_is_whole_and_fetches_nothing(name: str) -> None:
    doc = PAGES[name]()
    b = parse(doc)
    assert doc.count("<h1>") == 1 and 'data-ready="1"' in doc
    assert "<script" not in doc and "<link" not in doc and "<iframe" not in doc
    assert not [a for a in b.attrs if a[1] == "style"], "style= is blocked by the CSP"
    urls = [v for _, k, v in b.attrs if k in ("href", "src", "action") and v]
    assert not [u for u in urls if "//" in u], urls
    assert "http-equiv" not in doc, "a page reloads itself only when asked"
    for m in re.finditer(r'aria-labelledby="([^"]+)"', doc):
        assert all(i in b.ids for i in m[1].split()), m[0]
    assert doc.count("<table") == doc.count("<caption") == doc.count('class="gl-scroll"')


def test_verdicts_are_badges_on_every_page() -> None:
    for name in ("live", "staff-assignment", "staff-student", "staff-submission",
                 "staff-preview", "student"):
        doc = PAGES[name]()
        assert 'class="v v-WA">WA<span class="visually-hidden"> (wrong answer)' in doc or \
            'class="v v-AC">AC' in doc, name
        assert "class='bad'" not in doc and "class='ok'" not in doc


def test_the_live_charts_are_named_and_reload_only_when_asked() -> None:
    doc = PAGES["live"]()
    for chart in ("chart-throughput", "chart-latency"):
        assert f'role="img" aria-labelledby="{chart}"><title id="{chart}">' in doc
    assert "per min now" in doc and "p95 now" in doc and "stored (last 10 min)" in doc
    assert 'href="?refresh=on">Reload every 5 s' in doc
    snap = Snapshot("c", 0.0, 600.0, 0, 0, 0, 0.0, None, None)
    auto = live_page.page(snap, 5, auto=True)
    assert 'http-equiv="refresh" content="5"' in auto and "no data yet" in auto


def test_a_pair_marks_matches_with_classes_and_numbers() -> None:
    doc = PAGES["staff-pair"]()
    assert '<span class="m1"><span class="ln">3</span><span class="mk">#1</span>' in doc
    assert "background:" not in doc.split("</style>")[1]
    assert 'class="m1"' in pages.pair_page("a", 0, PairView(
        "x", "y", 0.5, 7, (FileLines("f", (Line(1, "t", 7),)),), ()), "")


def test_similarity_lists_only_the_pairs_after_its_sentence() -> None:
    after = PAGES["staff-similarity"]().split("pairs at or above")[1]
    assert "ann" in after and "cat" not in after  # tests/slurm/test_similarity.py reads so


def test_a_students_page_shows_limits_deferral_and_failed_tests() -> None:
    doc = student.mine_page(VIEW)
    for text in ("berg02 in Programming 1", "Hand-ins used: 3, left: 7.",
                 "taken but deferred", "at most one hand-in every 5 min",
                 "2025-03-21T10:05", "its feedback comes after your deadline",
                 "refused: the archive holds a link out of it", "waiting to be graded",
                 "expected", "your output", "Test groups of 2025-03-14T21-05-12",
                 "5 of 8", "sha256 9f2c4e7b", "nothing handed in", "error: expected"):
        assert text in doc, text
    assert 'http-equiv="refresh" content="30"' in student.mine_page(VIEW, auto_refresh_s=30)


def test_the_handin_page_shows_the_receipt_and_the_error() -> None:
    doc = PAGES["handin-receipt"]()
    assert 'download="receipt-primes-2025-03-21T10-00-03-5b6c.json"' in doc
    assert '<option value="primes" selected>' in doc and "Past the assignment's" in doc
    assert RECEIPT.signature in doc and "Your deadlines and hand-in limits" in doc
    err = PAGES["handin-error"]()
    assert 'role="alert"' in err and 'aria-invalid="true"' in err
    assert "larger than 16 MiB" in err
