"""An autograder as a course gives it to Gradescope: a zip with setup.sh and
run_autograder at its root, unpacked safely and checked before anything runs."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path

import pytest

from grader.formats.gradescope import autograder
from grader.formats.gradescope.autograder import AutograderError, load_autograder, unpack

SETUP = "#!/bin/bash\npip3 install numpy\n"
RUN = "#!/bin/bash\ncp /autograder/submission/*.py /autograder/source/\npython3 run.py\n"


def _zip(path: Path, members: dict[str, str], *, link: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o100755 if name.endswith("run_autograder") else 0o100644) << 16
            zf.writestr(info, text)
        if link:
            info = zipfile.ZipInfo(link)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "/etc/passwd")
    return path


def test_a_zip_with_its_files_at_the_root_unpacks_and_loads(tmp_path):
    z = _zip(tmp_path / "autograder.zip", {"setup.sh": SETUP, "run_autograder": RUN,
                                           "suite/test_a.py": "def test(): pass\n"})
    ag = load_autograder(unpack(z, tmp_path / "ag"))
    assert ag.files == ("run_autograder", "setup.sh", "suite/test_a.py")
    assert ag.run_autograder.stat().st_mode & 0o111 and ag.setup.stat().st_mode & 0o111
    again = load_autograder(unpack(z, tmp_path / "ag2"))
    assert again.digest == ag.digest  # the same autograder, the same image key
    (tmp_path / "ag2/suite/test_a.py").write_text("def test(): assert 0\n")
    assert load_autograder(tmp_path / "ag2").digest != ag.digest


def test_a_zipped_folder_is_refused_with_the_remedy(tmp_path):
    z = _zip(tmp_path / "a.zip", {"hw1/setup.sh": SETUP, "hw1/run_autograder": RUN})
    with pytest.raises(AutograderError, match=r"they are in hw1/: zip the files, not the folder"):
        unpack(z, tmp_path / "ag")
    assert not (tmp_path / "ag").exists()


@pytest.mark.parametrize(("members", "link", "reason"), [
    ({"setup.sh": SETUP}, None, "no run_autograder at its root"),
    ({"readme": "x"}, None, "no setup.sh and no run_autograder"),
    ({"setup.sh": SETUP, "run_autograder": RUN, "../../evil": "x"}, None, "outside"),
    ({"setup.sh": SETUP, "run_autograder": RUN, "/etc/cron.d/x": "x"}, None, "outside"),
    ({"setup.sh": SETUP, "run_autograder": RUN}, "source/passwd", "is a link"),
])
def test_a_zip_that_would_harm_or_cannot_run_is_refused(tmp_path, members, link, reason):
    z = _zip(tmp_path / "a.zip", members, link=link)
    with pytest.raises(AutograderError, match=reason):
        unpack(z, tmp_path / "ag")
    assert not (tmp_path / "ag").exists() and not (tmp_path.parent / "evil").exists()


def test_a_zip_bomb_and_a_non_zip_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(autograder, "MAX_UNPACKED", 1000)
    z = _zip(tmp_path / "a.zip", {"setup.sh": SETUP, "run_autograder": RUN, "big": "0" * 5000})
    with pytest.raises(AutograderError, match="unpacks to more than"):
        unpack(z, tmp_path / "ag")
    (tmp_path / "b.zip").write_text("not a zip")
    with pytest.raises(AutograderError, match="not a zip archive"):
        unpack(tmp_path / "b.zip", tmp_path / "ag")


def test_a_directory_with_a_link_is_refused(tmp_path):
    d = tmp_path / "ag"
    d.mkdir()
    (d / "setup.sh").write_text(SETUP)
    (d / "run_autograder").write_text(RUN)
    assert load_autograder(d).files == ("run_autograder", "setup.sh")
    (d / "data").symlink_to("/etc")
    with pytest.raises(AutograderError, match="data is a link"):
        load_autograder(d)
