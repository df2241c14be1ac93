"""Headless Chromium: load a page gradeline wrote and check that it rendered.

Reports and the live page are things people look at, so tests look at them the way
a browser does: the DOM after load, how many images decoded, a screenshot.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from grader.core.errors import CapabilityError

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-quic"]


def chromium_binary() -> str | None:
    """Debian's chromium (or another Chromium on PATH), None when there is none."""
    return next((b for b in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(b)), None)


def render_check(page: Path | str, screenshot: Path | None = None, *,
                 title: str = "gradeline", size: tuple[int, int] = (1280, 2400)
                 ) -> dict[str, object]:
    """Load the page in headless Chromium: the DOM after load (with the count of images
    that decoded, which the page's onload script writes into ``data-images-loaded``)
    and, optionally, a screenshot.

    :param page: a file, or a URL (the live page of ``gradeline web``).
    :param title: text the loaded DOM must contain (``result["title"]`` says whether).
    :param size: the window (and screenshot) in pixels, width and height.
    """
    uri = page if isinstance(page, str) else page.resolve().as_uri()
    binary = chromium_binary()
    if binary is None:
        raise CapabilityError("no chromium: apt-get install chromium (Debian/Ubuntu)")
    flags = [binary, *CHROMIUM_FLAGS, "--virtual-time-budget=5000",
             "--allow-file-access-from-files"]
    dom = subprocess.run([*flags, "--dump-dom", uri], capture_output=True,
                         text=True, timeout=120, check=False).stdout
    m = re.search(r'data-images-loaded="(\d+)"', dom)
    result: dict[str, object] = {"dom_chars": len(dom), "images_loaded": int(m.group(1)) if m
                                 else 0, "images": dom.count("<img"),
                                 "title": title in dom, "svgs": dom.count("<svg"),
                                 "dom": dom}
    if screenshot is not None:
        subprocess.run([*flags, f"--screenshot={screenshot}",
                        f"--window-size={size[0]},{size[1]}",
                        uri], capture_output=True, timeout=120,
                       check=False)
        result["screenshot_bytes"] = screenshot.stat().st_size if screenshot.exists() else 0
    return result

