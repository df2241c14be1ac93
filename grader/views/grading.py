"""Grading by hand, on the read side: the grading pages' data (``course.gradingview``,
``course.gradingpage``) from the store, the spool's files and the rubric files as they
read now; a grader's save (optimistic locking: a conflict is shown, never an
overwrite); an instructor's reveal of names; the evaluation CSV; and the other staff
pages as a grader may see them in an anonymous assignment (``anonymity``).

Who the viewer is comes from the front end (the staff socket's peer, by the kernel);
what they may see is decided here and in ``course.gradingview``. Log lines name a
student of an anonymous assignment by their pseudonym only.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from grader.core.errors import RefusedError
from grader.course.gradingpage import GradingPage, Saved, grading_page
from grader.course.gradingview import (
    FormProblem,
    GradingIndex,
    Viewer,
    applied,
    counted,
    grading_index,
    is_instructor,
    labeller,
    read_form,
)
from grader.course.handgrades import QuestionGrade, by_student, evaluation_csv
from grader.course.load import Course
from grader.course.policy import Grade, grade_course
from grader.course.rubric import Rubric, pseudonym
from grader.course.staffview import Snapshot
from grader.views.anonymity import MaskedStaff, mask_snapshot
from grader.views.ports import CourseReads
from grader.views.staff_pages import StaffPages

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _State:
    course: Course
    rubric: Rubric
    names_shown: bool
    grades: list[Grade]
    hand: list[QuestionGrade]


def line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


class Grading:
    """The grading pages of one course (``adapters.web.grading_routes.GradingSource``)."""

    def __init__(self, staff: StaffPages, key: bytes) -> None:
        self.staff, self.course, self.store = staff, staff.course, staff.store
        self._key = hmac.new(key, b"gradeline grading by hand", hashlib.sha256).digest()

    def viewer(self, user: str, owner: bool) -> Viewer:
        """Who asks: ``owner``, the account running this server, is an instructor."""
        return Viewer(user, is_instructor(self.course, user, owner))

    def form_token(self, viewer: Viewer) -> str:
        """What the grading forms carry back: made for this viewer, so a page of another
        site cannot post one in their name."""
        return hmac.new(self._key, f"form\0{viewer.user}".encode(), hashlib.sha256).hexdigest()

    def key(self, assignment: str, student: str) -> str:
        """The student's pseudonym in ``assignment`` (what the grading pages' URLs use)."""
        return pseudonym(self._key, self.course.name, assignment, student)

    def rubric(self, assignment: str) -> Rubric | None:
        a = self.course.assignments.get(assignment)
        return self.staff.rubrics.rubric(a.rubric) if a else None

    def graded(self) -> list[str]:
        """The assignments graded by hand."""
        return [a.name for a in self.course.ordered() if a.rubric is not None]

    def _state(self, store: CourseReads, assignment: str) -> _State | None:
        rubric = self.rubric(assignment)
        if rubric is None:
            return None
        course = self.staff.rubrics.current(self.course)
        shown = not rubric.spec.anonymous or \
            store.names_revealed(course.name, assignment) is not None
        grades = grade_course(course, store.attempts(course.name), self.staff.max_points)
        return _State(course, rubric, shown, grades,
                      store.hand_grades(course.name, assignment).get(assignment, []))

    def _student(self, s: _State, assignment: str, key: str) -> str | None:
        for student in sorted(set(counted(s.grades, assignment)) | set(s.course.students)):
            if self.key(assignment, student) == key:
                return student
        return None

    def index(self, viewer: Viewer, assignment: str) -> GradingIndex | None:
        """An assignment's questions with the viewer's queue and everyone's progress."""
        with self.store() as store:
            s = self._state(store, assignment)
        if s is None:
            return None
        named = labeller(s.course, s.names_shown, partial(self.key, assignment))
        return grading_index(s.course, assignment, s.rubric, viewer, s.grades, s.hand, named,
                             s.names_shown)

    def page(self, viewer: Viewer, assignment: str, question: str, key: str
             ) -> GradingPage | None:
        """One student's question (None: no such question, or no such student)."""
        found = self._page(viewer, assignment, question, key)
        return found[0] if found else None

    def _page(self, viewer: Viewer, assignment: str, question: str, key: str
              ) -> tuple[GradingPage, str, _State] | None:
        with self.store() as store:
            s = self._state(store, assignment)
            student = self._student(s, assignment, key) if s else None
            q = s.rubric.question(question) if s else None
            if s is None or student is None or q is None:
                return None
            history = store.grade_history(s.course.name, assignment, student, question)
        spool_id = counted(s.grades, assignment).get(student)
        detail = self.staff.submission(spool_id) if spool_id else None
        named = labeller(s.course, s.names_shown, partial(self.key, assignment))
        return (grading_page(s.course, assignment, s.rubric, q, viewer, student, named,
                             s.grades, s.hand, detail, history), student, s)

    def save(self, viewer: Viewer, assignment: str, question: str, key: str,
             fields: Mapping[str, Sequence[str]]) -> Saved | None:
        """Save a grader's form for one student's question (None: no such page)."""
        found = self._page(viewer, assignment, question, key)
        if found is None:
            return None
        page, student, s = found
        q = s.rubric.question(question)
        assert q is not None
        try:
            form = read_form(fields, q, {f.name: line_count(f.text) for f in page.files})
        except FormProblem as e:
            return Saved("refused", page, problem=e)
        with self.store() as store:
            ok, _ = store.save_question(
                s.course.name, assignment, student, question, seen=form.version,
                items=applied(form, q), adjustment=form.adjustment, reason=form.reason,
                spool_id=page.submission, grader=viewer.user, comment=form.comment,
                delete=form.delete, rubric=(s.rubric.sha256, s.rubric.spec.model_dump(
                    mode="json")))
        who = student if s.names_shown else page.key  # a log line names no one anonymous
        log.info("grading %s/%s of %s by %s: %s", assignment, question, who, viewer.user,
                 "saved" if ok else f"conflict with version {form.version}")
        now = self.page(viewer, assignment, question, key)
        assert now is not None
        return Saved("saved" if ok else "conflict", now,
                     now.next_key if ok and form.then == "next" else None)

    def reveal(self, viewer: Viewer, assignment: str, *, hide: bool = False) -> None:
        """An instructor reveals (or hides again) an anonymous assignment's names.

        :raises RefusedError: for anyone else, or an assignment graded with names.
        """
        rubric = self.rubric(assignment)
        if not viewer.instructor:
            raise RefusedError(f"{viewer.user} is no instructor of {self.course.name}: only "
                               "an instructor reveals names (the course file's staff: "
                               "instructors:)")
        if rubric is None or not rubric.spec.anonymous:
            raise RefusedError(f"{assignment} is not graded anonymously")
        with self.store() as store:
            store.reveal_names(self.course.name, assignment, viewer.user, hide=hide)
        log.info("grading %s: names %s by %s", assignment, "hidden again" if hide else
                 "revealed", viewer.user)

    def evaluations(self, viewer: Viewer, assignment: str) -> str | None:
        """The evaluation CSV (``handgrades.evaluation_csv``): students by pseudonym
        while names are hidden."""
        with self.store() as store:
            s = self._state(store, assignment)
        if s is None:
            return None
        mine = by_student(s.hand)
        counting = counted(s.grades, assignment)
        name = (lambda st: st) if s.names_shown else partial(self.key, assignment)
        rows = sorted((name(st), spool, mine.get(st, {})) for st, spool in counting.items())
        return evaluation_csv(s.rubric, rows)

    def masked(self, viewer: Viewer) -> frozenset[str]:
        """The assignments whose students the viewer sees by pseudonym on every staff page:
        anonymous ones whose names no instructor revealed (for graders who are not
        instructors)."""
        if viewer.instructor:
            return frozenset()
        anonymous = [a for a in self.graded() if (r := self.rubric(a)) and r.spec.anonymous]
        if not anonymous:
            return frozenset()
        with self.store() as store:
            return frozenset(a for a in anonymous
                             if store.names_revealed(self.course.name, a) is None)

    def staff_for(self, viewer: Viewer) -> StaffPages | MaskedStaff:
        """The staff pages as the viewer may see them."""
        hidden = self.masked(viewer)
        return MaskedStaff(self.staff, hidden, self.key, self.staff.course.students) \
            if hidden else self.staff

    def snapshot_for(self, viewer: Viewer, snap: Snapshot) -> Snapshot:
        """The live snapshot as the viewer may see it."""
        hidden = self.masked(viewer)
        return mask_snapshot(snap, hidden, self.key) if hidden else snap
