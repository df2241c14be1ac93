"""What the tool keeps between launches, in files of the grading account's state
directory (``<state>/lti/``), each replaced whole and atomically (written, fsync'd,
renamed): the LMS courses it was launched from with their service endpoints (where to
post grades and read the roster), the line item of each assignment there (or the link
it was launched from, where the LMS named none), and the journal of grades posted --
what makes a grade go to the LMS exactly once per change, across restarts: a grade is
recorded as posted only after the LMS took it, and one that failed waits for its next
try, later each time the LMS stays down (``course.lms_grades``)."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from grader.course.lms_grades import retry_at


def _write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    Path(tmp).replace(path)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    return data if isinstance(data, dict) else {}


class LtiState:
    """The contexts file and the grade journal (one lock: a server's threads share it)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.contexts_file = root / "contexts.json"
        self.journal_file = root / "grades.json"
        self._lock = threading.Lock()

    @contextmanager
    def _edit(self, path: Path) -> Iterator[dict[str, Any]]:
        with self._lock:
            data = _read(path)
            yield data
            _write(path, data)

    # -- contexts: where a course lives in an LMS --------------------------------------
    def remember_context(self, key: str, fields: Mapping[str, Any]) -> None:
        """Merge a launch's facts about its LMS course (services, course file) into what
        is known of it; ``key`` is issuer, client id, deployment id and context id."""
        with self._edit(self.contexts_file) as data:
            data[key] = {**data.get(key, {}), **fields}

    def remember_lineitem(self, key: str, assignment: str, lineitem: str) -> None:
        with self._edit(self.contexts_file) as data:
            ctx = data.setdefault(key, {})
            ctx.setdefault("lineitems", {})[assignment] = lineitem

    def remember_link(self, key: str, assignment: str, resource_link: str) -> None:
        """An assignment was launched from a link that named no line item (a link added
        by hand, Open edX's programmatic grading): the grades sync finds or makes its
        line item (``services.post_grades``)."""
        with self._edit(self.contexts_file) as data:
            data.setdefault(key, {}).setdefault("links", {})[assignment] = resource_link

    def remember_user(self, key: str, student: str, lms_user: str) -> None:
        """Which LMS user a roster student is, for the scores sent back (AGS)."""
        with self._edit(self.contexts_file) as data:
            data.setdefault(key, {}).setdefault("users", {})[student] = lms_user

    def contexts(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            return _read(self.contexts_file)

    # -- the grade journal ----------------------------------------------------------------
    def journal(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            return _read(self.journal_file)

    def posted(self, key: str, value: Mapping[str, Any], at: float) -> None:
        """The LMS took ``value`` for ``key`` (context, assignment, LMS user)."""
        with self._edit(self.journal_file) as data:
            data[key] = {"posted": dict(value), "at": at, "failures": 0, "retry_at": 0.0}

    def failed(self, key: str, error: str, at: float) -> float:
        """A post of ``key`` failed: when to try it again (later with each failure)."""
        with self._edit(self.journal_file) as data:
            entry = data.setdefault(key, {"failures": 0})
            n = int(entry.get("failures", 0)) + 1
            entry.update(failures=n, error=error[:500], retry_at=retry_at(n, at))
            return float(entry["retry_at"])
