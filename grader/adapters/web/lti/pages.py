"""The LTI tool's own pages -- the assignment picker of deep linking, a student's page
with the hand-in form, a refusal -- in the shared design (``adapters.web.design``);
the staff pages are the web's own, their links under the launch's path (``rebase``)."""

from __future__ import annotations

from grader.adapters.web.design import esc, layout, message_page
from grader.adapters.web.student import Actions, handin_page
from grader.core.upload import MAX_UPLOAD_BYTES
from grader.course.load import Course
from grader.course.shown import Receipt, StudentView


def refusal(why: str) -> str:
    return message_page("Not here", why, site_href=None)


def picker(course: Course, action: str) -> str:
    """Deep linking: the course's assignments to add to the LMS (each a resource link
    and a gradebook column)."""
    options = "".join(f"<option value='{esc(a.name)}'>{esc(a.name)} (due "
                      f"{esc(a.deadline.isoformat()[:16])})</option>" for a in course.ordered())
    form = (f"<div class='gl-card'><form class='gl-form' method='post' action='{esc(action)}'>"
            "<div class='gl-field'><label for='assignment'>Assignment</label>"
            f"<select id='assignment' name='assignment'>{options}</select></div>"
            "<button class='gl-button' type='submit'>Add to the course</button></form></div>")
    return layout(f"Add a gradeline assignment of {course.name}", form, site_href=None)


def student(view: StudentView, course: Course, base: str, assignment: str, *,
            token: str, receipt: Receipt | None = None, error: str | None = None,
            done: str = "", refused: str = "") -> str:
    """A student's page inside the LMS: the hand-in form (and its outcome) above what
    the course shows them of their own submissions (``course.studentview``), with the
    team and regrade forms where the course has them. The forms post back under the
    page's ``base`` (its signed ``token``: what stands for a session here)."""
    return handin_page(view, [a.name for a in course.ordered()], action=f"{base}/hand-in",
                       csrf_token=token, max_mib=MAX_UPLOAD_BYTES >> 20, receipt=receipt,
                       error=error, selected=assignment, results=True,
                       actions=Actions(f"{base}/team", f"{base}/ask", token,
                                       f"{base}/measure"), done=done,
                       refused=refused)
