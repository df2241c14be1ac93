"""The web pages as people meet them: every page, rendered from realistic data, loaded in
headless Chromium under the Content-Security-Policy the app sends, at a desktop's, an
LMS iframe's and a phone's width in light and dark; axe-core (WCAG 2.0/2.1 A and AA,
best practice) finds no serious or critical violation, nothing is fetched from
elsewhere, the page never scrolls sideways, and the keyboard reaches everything with a
visible focus. Screenshots and axe's report go to $GRADELINE_SCREENSHOTS when set (the
docs' design-*.png come from there), else to pytest's tmp.

axe-core and playwright-core come from npm (the ``browser_tools`` fixture: tests only;
playwright-core drives Debian's /usr/bin/chromium, it downloads no browser)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from grader.adapters.web.design import CSP

from ..page_samples import PAGES
from ..support import CHROMIUM

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("axe_check.js")

TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
VIEWPORTS = {"desktop": [1280, 800], "iframe": [800, 700], "phone": [360, 740]}
SCHEMES = ["light", "dark"]
FAILING = ("serious", "critical")


@pytest.fixture(scope="module")
def report(browser_tools: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """axe's findings for every page, view and colour scheme, and the keyboard's."""
    work = tmp_path_factory.mktemp("pages")
    shots = Path(os.environ.get("GRADELINE_SCREENSHOTS") or work / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    pages = []
    for name, render in PAGES.items():
        f = work / f"design-{name}.html"
        f.write_text(render(), encoding="utf-8")
        pages.append({"name": f"design-{name}", "file": str(f)})
    job = work / "job.json"
    job.write_text(json.dumps({"pages": pages, "csp": CSP, "shots": str(shots), "tags": TAGS,
                               "viewports": VIEWPORTS, "schemes": SCHEMES,
                               "chromium": str(CHROMIUM)}))
    r = subprocess.run([shutil.which("node") or "node", str(DRIVER), str(job)],
                       capture_output=True, text=True, timeout=1200, check=False,
                       env={**os.environ, "NODE_PATH": str(browser_tools)})
    assert r.returncode == 0, r.stderr[-3000:]
    out: dict[str, Any] = json.loads(r.stdout)
    (shots / "design-axe-report.json").write_text(json.dumps(out, indent=1))
    return out


@pytest.mark.parametrize("name", PAGES)
def test_no_serious_violation_at_any_width_light_or_dark(report: dict[str, Any],
                                                         name: str) -> None:
    views = [v for v in report["views"] if v["page"] == f"design-{name}"]
    assert len(views) == len(VIEWPORTS) * len(SCHEMES)
    for v in views:
        where = f"{name} {v['viewport']}/{v['scheme']}"
        bad = [x for x in v["violations"] if x["impact"] in FAILING]
        assert not bad, f"{where}: {json.dumps(bad, indent=1)}"
        assert not v["problems"], f"{where}: {v['problems']}"
        assert v["passes"] >= 20, f"{where}: axe ran only {v['passes']} rules"


@pytest.mark.parametrize("name", PAGES)
def test_the_keyboard_reaches_everything_with_a_visible_focus(report: dict[str, Any],
                                                              name: str) -> None:
    k = next(k for k in report["keyboard"] if k["page"] == f"design-{name}")
    assert not k["problems"], k["problems"]
    assert k["tabStops"] >= 1
