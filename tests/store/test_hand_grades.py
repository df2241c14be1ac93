"""Grades given by hand, in PostgreSQL: a save names the version it was made from, so of
two graders saving the same question from the same version the second is refused as a
conflict (what it held kept in its audit row, never an overwrite) while the first's
grade and comment stand; every change is an audit row; comments are deleted only as
part of a save; a reveal of names is recorded with who and when."""

from __future__ import annotations

import threading

from grader.adapters.store.postgres import Store
from grader.course.gradingview import NewComment


def _save(db: str, seen: int, grader: str, items: tuple[str, ...], **kw: object):
    with Store(db) as s:
        return s.save_question("cs101", "hw1", "alice", "style", seen=seen, items=items,
                               adjustment=0.0, reason="", spool_id="s1", grader=grader,
                               rubric=("abc", {"questions": []}), **kw)  # type: ignore[arg-type]


def test_two_graders_saving_one_version_conflict_and_nothing_is_lost(db: str) -> None:
    ok, first = _save(db, 0, "ta1", ("names",),
                      comment=NewComment("sum.py", 3, 4, "what is x?", "names"))
    assert ok and first is not None and first.version == 1
    assert [(c.file, c.first, c.last, c.item) for c in first.comments] == \
        [("sum.py", 3, 4, "names")]
    late, now = _save(db, 0, "ta2", ("dup",))  # ta2 opened it before ta1 saved
    assert not late and now == first  # refused, and ta1's grade is what is stored
    ok2, second = _save(db, 1, "ta2", ("dup",), delete=(first.comments[0].id,))
    assert ok2 and second is not None and second.version == 2 and second.comments == ()
    with Store(db) as s:
        history = s.grade_history("cs101", "hw1", "alice", "style")
        rubrics = s.count("SELECT count(*) FROM rubric_versions")
        kept = s.count("SELECT count(*) FROM hand_comments WHERE deleted_by = 'ta2'")
    assert [(h.grader, h.action, h.version, h.items) for h in history] == [
        ("ta1", "grade", 1, ("names",)), ("ta2", "conflict", 0, ("dup",)),
        ("ta2", "grade", 2, ("dup",))]
    assert history[0].comment == "sum.py:3: what is x?"
    assert rubrics == 1 and kept == 1  # a deleted comment stays, marked


def test_concurrent_saves_from_one_version_let_exactly_one_through(db: str) -> None:
    _save(db, 0, "ta1", ())
    results: list[bool] = []

    def go(who: str) -> None:
        results.append(_save(db, 1, who, (who,))[0])

    threads = [threading.Thread(target=go, args=(f"ta{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 7 + [True]
    with Store(db) as s:
        [g] = s.hand_grades("cs101", "hw1")["hw1"]
        conflicts = s.count("SELECT count(*) FROM grade_audit WHERE action = 'conflict'")
    assert g.version == 2 and g.items == (g.grader,) and conflicts == 7


def test_a_reveal_is_recorded_and_can_be_withdrawn(db: str) -> None:
    with Store(db) as s:
        assert s.names_revealed("cs101", "hw1") is None
        s.reveal_names("cs101", "hw1", "prof")
        when, who = s.names_revealed("cs101", "hw1") or (None, None)
        assert who == "prof" and when is not None
        s.reveal_names("cs101", "hw1", "prof", hide=True)
        assert s.names_revealed("cs101", "hw1") is None
        assert s.count("SELECT count(*) FROM name_reveals") == 2
