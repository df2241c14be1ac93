"""Performance measured on demand, end to end (local workers, the real store): a
student's request is refused until the visible tests accepted their latest submission,
then takes their one token; asking again is refused with the reasons; the bulk pass
(``gradeline deadline``) measures the performance tests only, and their page shows the
curve marked as an on-demand measurement, "1 of 1 used", while their grade stays the
hand-in phase's."""

from __future__ import annotations

import functools
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from grader.adapters.spool import Spool
from grader.adapters.store.postgres import Store
from grader.adapters.web.student import mine_page
from grader.core.errors import RefusedError
from grader.core.upload import Upload
from grader.course.load import load_course
from grader.formats.load import load_problem
from grader.views.student_desk import Desk

from ..support import EXAMPLES, db_env, gl

pytestmark = pytest.mark.sandbox
DUE = datetime.now(UTC).replace(microsecond=0) + timedelta(days=3)


@pytest.fixture
def course(tmp_path: Path) -> Path:
    pkg = tmp_path / "primecount"
    shutil.copytree(EXAMPLES / "primecount", pkg)
    gl_yaml = yaml.safe_load((pkg / "gradeline.yaml").read_text())
    gl_yaml["performance"]["repetitions"] = {"min": 2, "max": 2, "warmup": 0}  # lean
    del gl_yaml["performance"]["cache"]  # the cache reading has its own test
    (pkg / "gradeline.yaml").write_text(yaml.safe_dump(gl_yaml))
    (tmp_path / "roster.csv").write_text("student,name,email\nann,Ann Arbor,a@example.org\n")
    p = tmp_path / "course.yaml"
    p.write_text(yaml.safe_dump({
        "course": "od", "timezone": "UTC", "roster": "roster.csv",
        "assignments": [{"name": "primecount", "package": "primecount",
                         "deadline": DUE.isoformat(), "performance": {"on_demand": 1}}]}))
    return p


def test_one_token_measures_once_and_the_page_shows_the_curve(tmp_path: Path, course: Path,
                                                              db: str) -> None:
    spool = Spool(tmp_path / "spool", create=True)
    c = load_course(course)
    desk = Desk(c, spool, functools.partial(Store, db),
                {"primecount": load_problem(c.assignments["primecount"].package)}, b"k" * 32)
    with Store(db) as s:
        s.migrate()
    src = EXAMPLES / "primecount/submissions/accepted/parallel.c"
    upload = tmp_path / "upload"
    shutil.copy(src, upload)
    receipt = desk.hand_in("ann", "primecount", "parallel.c", Upload(upload, src.stat().st_size))
    with pytest.raises(RefusedError, match=f"latest submission {receipt.submission} is not "
                                           "graded yet"):
        desk.measure("ann", "primecount")

    common = ["--course-file", str(course), "--spool", str(spool.root), "--executor",
              "local", "--cpus", "0-1"]
    gl("run", *common, env=db_env(db), ok=True)  # the hand-in phase: the sample only
    asked = desk.measure("ann", "primecount")
    assert (asked.submission, asked.used, asked.tokens) == (receipt.submission, 1, 1)
    with pytest.raises(RefusedError) as again:
        desk.measure("ann", "primecount")
    assert "primecount: your measurement of" in str(again.value)  # still waiting
    assert "primecount: you have used 1 of the 1 performance measurements on demand" in \
        str(again.value)

    out = gl("deadline", *common, env=db_env(db), ok=True).stdout
    assert "performance on demand: 1 measured, 0 not measured" in out
    assert "no assignment is past its deadline" in out
    view = desk.view("ann", "primecount").assignments[0]
    assert view.on_demand is not None and (view.on_demand.used, view.on_demand.tokens) == (1, 1)
    (m,) = view.on_demand.measurements
    assert (m.state, m.submission, m.token) == ("measured", receipt.submission, 1)
    assert m.performance is not None and [t.cores for t in m.performance.timings] == [1, 2]
    assert m.performance.items and m.performance.reading
    (handed,) = view.submissions  # the grade stays the hand-in phase's: sample only
    assert handed.performance is None and not handed.complete
    assert [g.name for g in handed.groups] == ["sample"]
    with Store(db) as s:
        assert s.count("SELECT count(*) FROM results WHERE version LIKE '%%/performance'") == 0
        assert s.count("SELECT count(*) FROM measurements WHERE state = 'measured'") == 1
    html = mine_page(desk.view("ann"))
    assert "Performance on demand: 1 of 1 used" in html
    assert '<span class="gl-tag">on demand</span> measurement 1 of 1' in html
    assert "<svg class=\"gl-chart gl-speedup\"" in html
    with pytest.raises(RefusedError, match="used 1 of the 1"):
        desk.measure("ann", "primecount")  # measured: the token stays spent
