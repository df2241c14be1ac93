"""The Open OnDemand app's own logic, without a portal (the portal, Passenger and real
accounts: tests/site/test_ondemand.py): where it is mounted, its configuration, the
form key every process of a user shares, and refusals that need no desk."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from grader.adapters.web.ondemand.app import App, CourseDoors, app_paths, form_key, load_site
from grader.core.errors import ConfigError


@pytest.mark.parametrize(("script", "path", "want"), [
    ("/pun/sys/gradeline", "/c/cs101/", ("/pun/sys/gradeline", "/c/cs101/")),
    ("", "/pun/sys/gradeline/c/cs101/", ("/pun/sys/gradeline", "/c/cs101/")),
    ("", "/pun/dev/gradeline", ("/pun/dev/gradeline", "/")),
    ("", "/pun/usr/ta1/gradeline/c/x", ("/pun/usr/ta1/gradeline", "/c/x")),
    ("", "/c/cs101/", ("", "/c/cs101/")),
])
def test_the_app_finds_its_base_uri(script: str, path: str, want: tuple[str, str]) -> None:
    assert app_paths({"SCRIPT_NAME": script, "PATH_INFO": path}) == want


def test_the_site_file_names_what_is_missing(tmp_path: Path) -> None:
    f = tmp_path / "ood.yaml"
    f.write_text("courses:\n  - name: cs101\n")
    with pytest.raises(ConfigError, match=r"courses\[0\] needs a name and a desk"):
        load_site(f)
    f.write_text("title: T\n")
    with pytest.raises(ConfigError, match="lists no course"):
        load_site(f)
    with pytest.raises(ConfigError, match="cannot read"):
        load_site(tmp_path / "absent.yaml")
    f.write_text("courses:\n  - {name: cs101, desk: /d.sock, staff: /s.sock}\n")
    assert load_site(f) == ("Grading", {"cs101": CourseDoors("cs101", Path("/d.sock"),
                                                             Path("/s.sock"))})


def test_every_process_of_a_user_shares_one_form_key(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    first = form_key()
    key = tmp_path / ".config/gradeline/ondemand-form.key"
    assert key.stat().st_mode & 0o777 == 0o600 and key.read_bytes() == first
    assert form_key() == first and len(first) == 32
    assert not list(key.parent.glob(".key-*"))  # the temporary file is gone


def _call(app: App, method: str, path: str, **extra: Any) -> tuple[str, dict[str, str], str]:
    out: dict[str, Any] = {}

    def start(status: str, headers: list[tuple[str, str]]) -> None:
        out["status"], out["headers"] = status, dict(headers)

    body = b"".join(app({"REQUEST_METHOD": method, "SCRIPT_NAME": "", "PATH_INFO": path,
                         "wsgi.input": io.BytesIO(b""), **extra}, start))
    return out["status"], out["headers"], body.decode()


def test_refusals_that_need_no_desk(tmp_path: Path) -> None:
    app = App("Grading", {"cs101": CourseDoors("cs101", tmp_path / "no.sock")}, key=b"k" * 32)
    status, headers, _ = _call(app, "GET", "/pun/sys/gradeline/c/cs999/")
    assert status.startswith("404") and "default-src 'none'" in headers["Content-Security-Policy"]
    status, _, body = _call(app, "GET", "/pun/sys/gradeline/c/cs101/staff/a/x")
    assert status.startswith("404") and "no staff pages here" in body
    status, _, body = _call(app, "POST", "/pun/sys/gradeline/c/cs101/hand-in",
                            HTTP_ORIGIN="https://evil.example", HTTP_HOST="ood.example")
    assert status.startswith("403") and "another site" in body
    status, _, body = _call(app, "POST", "/pun/sys/gradeline/c/cs101/hand-in",
                            HTTP_ORIGIN="null", HTTP_HOST="ood.example")
    assert status.startswith("403")
    status, _, body = _call(app, "GET", "/pun/sys/gradeline/c/cs101/")
    assert status.startswith("502") and "Traceback" not in body  # no desk: said, not raised
