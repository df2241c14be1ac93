"""The LTI tool's own pages -- the assignment picker of deep linking, a student's page
with the hand-in form, a refusal -- in the web pages' design (``adapters.web.pages``);
the staff pages are the web's own, their links under the launch's path (``rebase``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from grader.adapters.web import pages
from grader.adapters.web.pages import esc

#: a link or form target that is absolute on the site (the staff pages' own paths)
_ROOTED = re.compile(r"""((?:href|action)=)(["'])/(?!/)""")


def rebase(html: str, base: str) -> str:
    """Links of a page rendered for the site's root, moved under ``base`` (a launch's
    path: what the pages are served under inside the LMS)."""
    return _ROOTED.sub(lambda m: f"{m.group(1)}{m.group(2)}{base}/", html)


def refusal(why: str) -> str:
    return pages.layout("Not here", f"<p role='alert'>{esc(why)}</p>")


def picker(course: Any, action: str) -> str:
    """Deep linking: the course's assignments to add to the LMS (each a resource link
    and a gradebook column)."""
    options = "".join(f"<option value='{esc(a.name)}'>{esc(a.name)} (due "
                      f"{esc(a.deadline.isoformat()[:16])})</option>" for a in course.ordered())
    form = (f"<form method='post' action='{esc(action)}'><p><label for='assignment'>"
            "Assignment</label> <select id='assignment' name='assignment'>"
            f"{options}</select></p><p><button type='submit'>Add to the course</button></p>"
            "</form>")
    return pages.layout(f"Add a gradeline assignment of {course.name}", form)


def _form(course: Any, action: str, assignment: str) -> str:
    names = [a.name for a in course.ordered()]
    chosen = assignment if assignment in names else (names[0] if names else "")
    options = "".join(f"<option value='{esc(n)}'{' selected' if n == chosen else ''}>"
                      f"{esc(n)}</option>" for n in names)
    return (f"<form method='post' action='{esc(action)}' enctype='multipart/form-data'>"
            "<h2>Hand in</h2><p><label for='assignment'>Assignment</label> "
            f"<select id='assignment' name='assignment'>{options}</select></p>"
            "<p><label for='file'>File (at most 16 MiB)</label> "
            "<input id='file' name='file' type='file' required></p>"
            "<p><button type='submit'>Hand in</button></p></form>")


def _receipt(receipt: Mapping[str, Any]) -> str:
    rows = "".join(f"<tr><th scope='row'>{esc(k)}</th><td>{esc(str(v))}</td></tr>"
                   for k, v in receipt.items() if k != "signature")
    late = " after your deadline" if receipt.get("late") else ""
    deferred = "<p>Past the assignment's hand-in limit: graded after everyone else's, " \
               "its feedback after your deadline.</p>" if receipt.get("deferred") else ""
    return (f"<section id='receipt'><h2>Received{late}</h2>{deferred}<table>"
            f"<caption>Your receipt (signed: keep it)</caption>{rows}"
            f"<tr><th scope='row'>signature</th><td><code>{esc(str(receipt['signature']))}"
            "</code></td></tr></table></section>")


def student(view: Mapping[str, Any], course: Any, action: str, assignment: str, *,
            receipt: Mapping[str, Any] | None = None, error: str | None = None) -> str:
    """A student's page inside the LMS: the hand-in form (and its outcome) above what
    the course shows them of their own submissions (``course.studentview``)."""
    top = _receipt(receipt) if receipt else ""
    if error:
        top = f"<p role='alert' class='bad'>Not handed in: {esc(error)}</p>"
    mine = pages.mine_page(view)
    body = mine[mine.index("</h1>") + 5:mine.rindex("</body>")]
    return pages.layout(f"{view['student']} in {view['course']}",
                        top + _form(course, action, assignment) + body)
