"""The live view: `gradeline web` serves the course's state from PostgreSQL, checked
in headless Chromium; `gradeline status --once` says the same in a terminal."""
import json
import os
import shutil
import subprocess
import urllib.request
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from grader.adapters.browser import render_check
from grader.adapters.spool import Spool
from grader.adapters.store.postgres import Store

from ..support import BIN, fake_record, running_web


def _stamped(db, n=12):
    """n results stored now (stored_at is the database's clock), waited for 4-6 s;
    one submission refused."""
    now = datetime.now(UTC)
    recs = []
    for i in range(n):
        arrived = now - timedelta(seconds=4 + i % 3)
        r = replace(fake_record(i), arrived_at=arrived.isoformat(),
                    claimed_at=(arrived + timedelta(seconds=1)).isoformat(),
                    dispatched_at=(arrived + timedelta(seconds=1)).isoformat(),
                    started_at=(arrived + timedelta(seconds=2)).isoformat(),
                    finished_at=(arrived + timedelta(seconds=3)).isoformat())
        recs.append(r)
    recs.append(replace(fake_record(99), student="zed", arrived_at=now.isoformat())
                .quarantined("not-utf8", "bad name"))
    with Store(db) as s:
        s.ingest(recs)
    return n + 1


def test_live_page_in_headless_chromium(tmp_path, db):
    if shutil.which("chromium") is None:
        if os.environ.get("GRADELINE_REQUIRE_SANDBOX") == "1":
            pytest.fail("make test installs chromium; it is missing")
        pytest.skip("needs chromium")
    total = _stamped(db)
    env = {**os.environ, "GRADELINE_DB_URL": db, "GRADELINE_COURSE": "c"}
    with running_web(["--spool", str(tmp_path / "spool")], env) as base:  # as staff do
        with urllib.request.urlopen(f"{base}/api/snapshot", timeout=10) as r:
            snap = json.loads(r.read())
        assert snap["stored"] == total
        assert snap["verdicts"] == {"AC": total - 1, "quarantined": 1}
        assert snap["failures"][0]["student"] == "zed"
        assert 4 <= snap["p50_s"] <= 6 and snap["p95_s"] <= 8
        res = render_check(f"{base}/", tmp_path / "live.png", title="gradeline live")
        dom = str(res["dom"])
        assert res["title"] and 'data-ready="1"' in dom
        assert int(str(res["svgs"])) >= 2 and "polyline" in dom  # the two charts drew
        assert "zed" in dom and "quarantined" in dom
        assert int(str(res["screenshot_bytes"])) > 10_000


def test_status_once_in_the_terminal(tmp_path, db):
    _stamped(db, 5)
    Spool(tmp_path / "spool", create=True)  # status reads a spool; it makes none
    env = {**os.environ, "GRADELINE_DB_URL": db, "GRADELINE_COURSE": "c"}
    r = subprocess.run([str(BIN), "status", "--once", "--spool", str(tmp_path / "spool")],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "stored 6" in r.stdout and "AC 5, quarantined 1" in r.stdout
    assert "backlog: 0 waiting, 0 in progress" in r.stdout
