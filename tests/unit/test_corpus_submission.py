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


def _jobs_in(workdir, count):
    from grader.measure.campaign import corpus_jobs
    return [(j.problem, j.source) for j in corpus_jobs(workdir, count, 5)]


def test_jobs_of_concurrent_experiment_points_share_one_corpus(tmp_path):
    """Snakemake runs an experiment's points as concurrent Slurm jobs over one work
    directory: each asks for the same corpus, and none may see another's half-written
    one (a point failed with FileExistsError when two wrote it at once)."""
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(6) as pool:
        results = list(pool.map(_jobs_in, [tmp_path] * 12, [30] * 12))
    assert all(r == results[0] for r in results) and len(results[0]) == 30
    assert all(os.path.isfile(sub) for _, sub in results[0])
    assert [p.name for p in tmp_path.iterdir()] == ["course"]  # no leftovers


def test_corpus_of_another_size_replaces_the_old_one(tmp_path):
    small, big = _jobs_in(tmp_path, 4), _jobs_in(tmp_path, 9)
    assert len(small) == 4 and len(big) == 9 and big[:4] == small
    with (tmp_path / "course" / "manifest.csv").open() as f:
        assert len(list(csv.DictReader(f))) == 9
    assert digest(tmp_path / "course") == digest(generate_course(tmp_path / "x", count=9,
                                                                 seed=5) and tmp_path / "x")
