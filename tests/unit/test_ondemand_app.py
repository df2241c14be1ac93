"""The Open OnDemand app's own logic, without a portal (the portal, Passenger and real
accounts: tests/site/test_ondemand.py): where it is mounted, its configuration, the
form key every process of a user shares, and refusals that need no desk."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from grader.adapters.web.ondemand.app import (
    App,
    CourseDoors,
    app_paths,
    form_key,
    load_site,
    read_form,
)
from grader.core.errors import ConfigError, RefusedError


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


def _form(body: bytes, ctype: str = "multipart/form-data; boundary=B",
          length: str | None = None) -> dict[str, Any]:
    return {"CONTENT_TYPE": ctype, "CONTENT_LENGTH": str(len(body)) if length is None
            else length, "wsgi.input": io.BytesIO(body)}


def test_a_hand_in_form_is_read_or_refused_with_a_reason(tmp_path: Path) -> None:
    """Bad forms are refusals, never a traceback; the browser's file name is passed on
    for the desk to judge but never used as a path here."""
    body = (b"--B\r\nContent-Disposition: form-data; name=\"assignment\"\r\n\r\nbigsum\r\n"
            b"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"..\"\r\n"
            b"Content-Type: text/plain\r\n\r\nint main(){}\r\n--B--\r\n")
    fields, file = read_form(_form(body), tmp_path)
    assert fields == {"assignment": "bigsum"} and file is not None
    assert file[1] == ".." and file[0].parent == tmp_path
    assert file[0].read_bytes() == b"int main(){}"
    for bad, why in [(_form(body, length=""), "says its size"),
                     (_form(body, length="1e9"), "says its size"),
                     (_form(body, length=str(64 << 20)), "at most 16 MiB"),
                     (_form(b"x", "text/plain"), "not a hand-in form"),
                     (_form(b"garbage", "multipart/form-data"), "not a hand-in form"),
                     (_form(b"garbage\r\n--C--", "multipart/form-data; boundary=C"),
                      "not a hand-in form")]:
        with pytest.raises(RefusedError, match=why):
            read_form(bad, tmp_path)


def test_staff_paths_are_passed_on_quoted(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def fake_get(sock: Path, path: str, timeout: float = 30.0) -> tuple[int, str, str]:
        seen.append(path)
        return 403, "text/plain", "alice is not staff of this course"

    monkeypatch.setattr("grader.adapters.web.ondemand.app.staff_get", fake_get)
    app = App("Grading", {"cs101": CourseDoors("cs101", tmp_path / "d.sock",
                                               tmp_path / "s.sock")}, key=b"k" * 32)
    status, _, body = _call(app, "GET", "/pun/sys/gradeline/c/cs101/staff/s/J\u00fcrgen X",
                            QUERY_STRING="refresh=on")
    assert seen == ["/s/J%C3%BCrgen%20X?refresh=on"]
    assert status.startswith("403") and "alice is not staff" in body and 'role="alert"' in body


def test_a_grading_form_is_passed_on_to_the_staff_socket_as_the_user(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, str, bytes | None, str]] = []

    def fake(sock: Path, method: str, path: str, body: bytes | None = None, ctype: str = "",
             timeout: float = 30.0) -> tuple[int, str, str, str]:
        seen.append((method, path, body, ctype))
        if b"version=0" in (body or b""):
            return 409, "text/html", '<form action="/a/hw1/grade/style/anon-x">', ""
        return 303, "text/plain", "", "anon-y?saved=1"

    monkeypatch.setattr("grader.adapters.web.ondemand.app.staff_request", fake)
    app = App("Grading", {"cs101": CourseDoors("cs101", tmp_path / "d.sock",
                                               tmp_path / "s.sock")}, key=b"k" * 32)
    form = b"csrf=t&version=3&item=names"
    path = "/pun/sys/gradeline/c/cs101/staff/a/hw1/grade/style/anon-x"
    ctype = "application/x-www-form-urlencoded"
    status, headers, _ = _call(app, "POST", path, **_form(form, ctype))
    assert status.startswith("303") and headers["Location"] == "anon-y?saved=1"
    assert seen == [("POST", "/a/hw1/grade/style/anon-x", form, ctype)]
    status, _, body = _call(app, "POST", path, **_form(b"csrf=t&version=0", ctype))
    assert status.startswith("409")  # a conflict's page, its form under the app's path
    assert 'action="/pun/sys/gradeline/c/cs101/staff/a/hw1/grade/style/anon-x"' in body
    status, _, body = _call(app, "POST", path, HTTP_ORIGIN="https://evil.example",
                            HTTP_HOST="ood.example", **_form(form, ctype))
    assert status.startswith("403") and "another site" in body and len(seen) == 2
    status, _, _ = _call(app, "POST", path, **_form(form, ctype, length=str(1 << 20)))
    assert status.startswith("413") and len(seen) == 2


def test_a_measurement_on_demand_is_asked_through_the_desk_as_the_user(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page's button posts to /measure; the app asks the desk (as this user, over
    its socket) and says what it took, or the desk's reasons."""
    from grader.adapters.desk_client import DeskRefusal
    from grader.course.shown import Measuring

    from ..page_samples import PERF_VIEW

    asked: list[tuple[Path, str]] = []

    def measure(sock: Path, assignment: str) -> Measuring:
        asked.append((sock, assignment))
        if len(asked) > 1:
            raise DeskRefusal("heat: you have used 3 of the 3 performance measurements")
        return Measuring("prog1-2025", assignment, "berg02", "2025-03-21T09-40-11-c4d2",
                         "2025-03-21T10:00:00+02:00", 3, 3)

    monkeypatch.setattr("grader.adapters.web.ondemand.app.desk_client.mine",
                        lambda s: PERF_VIEW)
    monkeypatch.setattr("grader.adapters.web.ondemand.app.desk_client.measure", measure)
    app = App("Grading", {"cs101": CourseDoors("cs101", tmp_path / "d.sock")}, key=b"k" * 32)
    status, _, page = _call(app, "GET", "/pun/sys/gradeline/c/cs101/")
    assert status.startswith("200") and "Measure my latest submission" in page  # 2 of 3
    assert 'action="/pun/sys/gradeline/c/cs101/measure"' in page
    csrf = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    form = f"csrf={csrf}&assignment=heat".encode()
    ctype = "application/x-www-form-urlencoded"
    path = "/pun/sys/gradeline/c/cs101/measure"
    status, _, body = _call(app, "POST", path, **_form(form, ctype))
    assert status.startswith("200") and asked == [(tmp_path / "d.sock", "heat")]
    assert "Your submission 2025-03-21T09-40-11 of heat waits to be measured (3 of 3" in body
    status, _, body = _call(app, "POST", path, **_form(form, ctype))
    assert status.startswith("400") and "you have used 3 of the 3" in body
    status, _, _ = _call(app, "POST", path, **_form(b"csrf=forged&assignment=heat", ctype))
    assert status.startswith("403") and len(asked) == 2
