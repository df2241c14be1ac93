"""The rubrics as their files say now: a rubric file edited while a server runs is read
again at the next request (its modification time changed), so an item's points changed
recompute every grade that used it on the pages at once. A file that no longer reads
keeps the last good version and says why in the log."""

from __future__ import annotations

import logging
import threading
from dataclasses import replace

from grader.core.errors import ConfigError
from grader.course.load import Course, load_rubric
from grader.course.rubric import Rubric

log = logging.getLogger(__name__)


class RubricFiles:
    """The current rubrics of one course (``current``)."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[int, Rubric]] = {}
        self._lock = threading.Lock()

    def rubric(self, r: Rubric | None) -> Rubric | None:
        """``r`` as its file reads now (``r`` itself where it has no file or it fails)."""
        if r is None or r.source is None:
            return r
        try:
            stamp = r.source.stat().st_mtime_ns
        except OSError as e:
            log.warning("rubric %s: %s; grading under its last version", r.source, e.strerror)
            return self._seen.get(str(r.source), (0, r))[1]
        with self._lock:
            seen = self._seen.get(str(r.source))
            if seen is not None and seen[0] == stamp:
                return seen[1]
            try:
                now = load_rubric(r.source)
            except ConfigError as e:
                log.warning("%s; grading under its last version", e)
                now = seen[1] if seen else r
            self._seen[str(r.source)] = (stamp, now)
            return now

    def current(self, course: Course) -> Course:
        """The course with every rubric as its file reads now."""
        changed = {n: replace(a, rubric=self.rubric(a.rubric))
                   for n, a in course.assignments.items() if a.rubric is not None}
        if all(changed[n].rubric is course.assignments[n].rubric for n in changed):
            return course
        return replace(course, assignments={**course.assignments, **changed})
