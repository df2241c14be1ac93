import csv
import hashlib
import os

import pytest

from grader.core.errors import SubmissionError
from grader.core.submission import load_submission
from grader.measure.corpus import generate_course


def digest(root):
    h = hashlib.sha256()
    for dirpath, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(dirpath, f)
            with open(p, "rb") as fh:
                h.update(p[len(str(root)):].encode() + fh.read())
    return h.hexdigest()


def test_course_is_deterministic_and_mixed(tmp_path):
    a = generate_course(tmp_path / "a", count=220, seed=3)
    generate_course(tmp_path / "b", count=220, seed=3)
    assert digest(tmp_path / "a") == digest(tmp_path / "b")
    assert len(a) == 220
    with (tmp_path / "a" / "manifest.csv").open() as f:
        rows = list(csv.DictReader(f))
    verdicts = {r["expected_verdict"] for r in rows}
    assert {"AC", "WA", "RE", "TLE"} <= verdicts
    assert {r["assignment"] for r in rows} == {"bigsum", "meanstd", "spread"}
    resubmitted = [r for r in rows if r["identical_to"]]
    assert resubmitted
    for r in resubmitted:
        orig = rows[int(r["identical_to"]) - 1]
        assert load_submission(tmp_path / "a" / r["path"]).content_hash == \
            load_submission(tmp_path / "a" / orig["path"]).content_hash
        assert orig["student"] == r["student"] and orig["submitted_at"] < r["submitted_at"]


def test_submission_hash_and_rejections(tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    (d / "a.cpp").write_text("int main(){}")
    (d / ".hidden").write_text("x")
    s = load_submission(d)
    assert s.files == ("a.cpp",)
    (d / "b.h").write_text("")
    assert load_submission(d).content_hash != s.content_hash
    (d / "link.cpp").symlink_to("/etc/passwd")
    with pytest.raises(SubmissionError, match="symlink"):
        load_submission(d)
    with pytest.raises(SubmissionError, match="no such"):
        load_submission(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SubmissionError, match="no files"):
        load_submission(tmp_path / "empty")
