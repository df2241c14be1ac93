"""The documentation as a reader meets it: the site builds strictly with its generated
reference pages, its front page renders in headless Chromium, and every command line
the guides mark runnable runs as written."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from grader.adapters.browser import chromium_binary, render_check

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "docs" / "pages"
VENV_BIN = Path(sys.executable).parent
RUNNABLE = re.compile(r"<!-- runnable -->\n```[^\n]*\n(.*?)\n```", re.S)


def runnable_commands() -> list[tuple[str, str]]:
    """(page, command line) of every runnable block, in page order."""
    out = []
    for page in sorted(PAGES.rglob("*.md")):
        for block in RUNNABLE.findall(page.read_text()):
            for line in block.splitlines():
                line = line.split("  #", 1)[0].strip()
                if line:
                    out.append((page.relative_to(PAGES).as_posix(), line))
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    r = subprocess.run([str(VENV_BIN / "mkdocs"), "build", "--strict", "-f",
                        str(ROOT / "docs" / "mkdocs.yml"), "-d", str(out)],
                       capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    return out


def test_the_reference_pages_are_generated_from_the_code(site: Path) -> None:
    cli = (site / "reference" / "cli" / "index.html").read_text()
    assert "gradeline plan predict" in cli and "example:" in cli
    record = (site / "reference" / "results" / "index.html").read_text()
    assert "content_hash" in record and "CREATE TABLE" in record
    settings = (site / "admin" / "settings" / "index.html").read_text()
    assert "GRADELINE_DB_URL_FILE" in settings
    assert "&lt;state&gt;/images" in settings  # escaped, not eaten as a tag
    contract = (site / "reference" / "contract" / "index.html").read_text()
    assert "gl-runner" in contract


def test_the_front_page_renders_with_a_door_for_each_reader(site: Path, tmp_path: Path
                                                           ) -> None:
    if chromium_binary() is None:
        pytest.skip("no chromium")
    r = render_check(site / "index.html", tmp_path / "front.png", title="Where to go")
    assert r["title"], "the front page did not render its doors"
    dom = str(r["dom"])
    for door in ("staff/", "admin/", "research/"):
        assert f'href="{door}' in dom
    assert int(str(r["screenshot_bytes"])) > 10_000


def test_the_guides_mark_commands_runnable() -> None:
    cmds = [c for _, c in runnable_commands()]
    assert "gradeline check course/bigsum" in cmds and "gradeline check-env" in cmds


@pytest.mark.sandbox
def test_every_runnable_command_runs_as_written(tmp_path: Path, sandbox_factory: object
                                               ) -> None:
    """In one fresh directory, in page order (later lines use what earlier ones made)."""
    env = {**os.environ, "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}"}
    for page, line in runnable_commands():
        r = subprocess.run(shlex.split(line), cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=900, check=False)
        assert r.returncode == 0, f"{page}: {line}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
