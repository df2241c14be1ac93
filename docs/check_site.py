"""Look at the built site as a reader would (``make docs``): its front page and the
generated CLI page in headless Chromium, with a screenshot of the front page."""

from __future__ import annotations

import sys
from pathlib import Path

from grader.adapters.browser import render_check

PAGES = (("index.html", "Where to go"), ("reference/cli/index.html", "gradeline plan predict"))


def main(site: Path) -> int:
    ok = True
    for rel, title in PAGES:
        shot = site / "screenshot.png" if rel == "index.html" else None
        r = render_check(site / rel, shot, title=title)
        seen = "found" if r["title"] else "MISSING"
        print(f"{rel}: {r['dom_chars']} characters of DOM, title {seen}"
              + (f", screenshot {shot} ({r['screenshot_bytes']} bytes)" if shot else ""))
        ok = ok and bool(r["title"]) and int(str(r["dom_chars"])) > 2000
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "build/docs")))
