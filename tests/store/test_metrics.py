"""Prometheus metrics of ``gradeline serve`` (issue #28): scraped while it serves, the
values match what it graded, and the text passes ``promtool check metrics``."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request

import pytest

from ..support import BIN, EXAMPLES, free_port

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


def _scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as r:
        return str(r.read().decode())


def _value(text: str, name: str) -> float:
    m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    assert m, f"no {name} in\n{text}"
    return float(m.group(1))


def test_serve_answers_scrapes_with_what_it_graded(tmp_path, db, promtool):
    env = {**os.environ, "GRADELINE_DB_URL": db}
    env.pop("GRADELINE_FAULT", None)
    spool = tmp_path / "spool"
    ok = EXAMPLES / "bigsum/submissions/accepted/sum.py"
    wrong = tmp_path / "wrong.py"
    wrong.write_text("print(0)\n")
    for i, src in enumerate((ok, ok, wrong)):
        subprocess.run([str(BIN), "submit", "bigsum", f"s{i}", str(src), "--spool", str(spool),
                        "--course", "m"], check=True, env=env, capture_output=True)
    port = free_port()
    serve = subprocess.Popen([str(BIN), "serve", "--spool", str(spool), "--course", "m",
                              "--executor", "local", "--cpus", "0", "--submit-interval", "0.1",
                              "--metrics-port", str(port)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        text, deadline = "", time.monotonic() + 300
        while time.monotonic() < deadline:
            assert serve.poll() is None, serve.communicate()[0]
            try:
                text = _scrape(url)
                if _value(text, "gradeline_stored_total") == 3 and \
                        'stage_seconds_count{stage="feedback"} 3.0' in text:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        assert _value(text, "gradeline_stored_total") == 3, text
        assert _value(text, "gradeline_graded_total") == 2  # identical content graded once
        assert _value(text, "gradeline_reused_total") == 1
        assert _value(text, "gradeline_backlog_submissions") == 0
        assert _value(text, 'gradeline_verdicts_total{assignment="bigsum",verdict="WA"}') == 1
        assert _value(text, 'gradeline_verdicts_total{assignment="bigsum",verdict="AC"}') == 2
        assert _value(text, 'gradeline_stage_seconds_count{stage="feedback"}') == 3
        assert _value(text, 'gradeline_stage_seconds_bucket{le="+Inf",stage="feedback"}') == 3
        # aggregates only: no student, submission id or file name in any metric or label
        names = [f"s{i}" for i in range(3)] + [e.name for e in (spool / "done").iterdir()]
        assert not [n for n in names if f'"{n}"' in text or f"{n}_" in text], names
        assert "wrong.py" not in text and "sum.py" not in text
        check = subprocess.run([promtool, "check", "metrics"], input=text, text=True,
                               capture_output=True, timeout=60)
        assert check.returncode == 0, check.stdout + check.stderr
    finally:
        serve.send_signal(signal.SIGTERM)
        out = serve.communicate(timeout=120)[0]
    assert serve.returncode == 0, out
    assert "Prometheus metrics on" in out
    with pytest.raises(OSError):
        _scrape(url)  # gone with the server
    shutil.rmtree(spool, ignore_errors=True)
