"""A package of type gradescope loads as a problem with the autograder's groups and
limits; every mistake in its gradeline.yaml is an error naming the file and the fix."""
import shutil
import zipfile
from pathlib import Path

import pytest

from grader.core.errors import ProblemFormatError
from grader.formats.gradescope.package import GROUPS
from grader.formats.load import is_package, load_problem

from ..support import EXAMPLES


@pytest.fixture
def pkg(tmp_path):
    root = tmp_path / "wf"
    shutil.copytree(EXAMPLES / "wordfreq", root)
    return root


def _yaml(root, text):
    (root / "gradeline.yaml").write_text(text)


def test_the_bundled_autograder_package_loads(pkg):
    p = load_problem(pkg)
    assert p.autograder == pkg / "autograder" and p.autograder_max_score == 10
    assert p.max_score == 10 and [g.name for g in p.groups] == list(GROUPS)
    assert p.cases == [] and p.languages == ("python3",) and p.title == "Word frequencies"
    assert p.limits.wall_s == 10 and p.limits.cpu_hard_s == 10
    assert p.limits.memory_bytes == 512 << 20
    assert is_package(pkg)


def test_the_zip_is_found_without_being_named(pkg):
    ag = pkg / "autograder"
    with zipfile.ZipFile(pkg / "autograder.zip", "w") as z:  # opened and checked here
        for f in sorted(ag.rglob("*")):
            z.write(f, f.relative_to(ag).as_posix())
    shutil.rmtree(ag)
    _yaml(pkg, "type: gradescope\n")
    p = load_problem(pkg)
    assert p.autograder == pkg / "autograder.zip" and p.autograder_max_score is None
    assert p.limits.wall_s == 600  # Gradescope's default time-out
    assert p.version  # a content hash, as for every package


@pytest.mark.parametrize("text,why", [
    ("type: gradescope\nautograder: nothere.zip\n", "no such file or directory"),
    ("type: gradescope\nautograder: ../elsewhere\n", "a path inside the package"),
    ("type: gradescope\ntimeout_s: 0\n", "timeout_s must be a number >= 1 and <= 2400"),
    ("type: gradescope\ntimeout_s: 3000\n", "timeout_s must be a number >= 1 and <= 2400"),
    ("type: gradescope\nmemory_mib: lots\n", "memory_mib must be a number"),
    ("type: gradescope\ngroups: {a: 1}\n", "unknown keys ['groups'] for type gradescope"),
    ("type: gradescope\nlanguages: [cobol]\n", "unknown languages ['cobol']"),
])
def test_mistakes_are_named(pkg, text, why):
    _yaml(pkg, text)
    with pytest.raises(ProblemFormatError, match=r"gradeline\.yaml") as e:
        load_problem(pkg)
    assert why in str(e.value)


def test_no_autograder_at_all_says_what_to_add(pkg):
    shutil.rmtree(pkg / "autograder")
    _yaml(pkg, "type: gradescope\n")
    with pytest.raises(ProblemFormatError) as e:
        load_problem(pkg)
    assert "put autograder.zip (or an autograder/ directory) beside gradeline.yaml" in str(e.value)


def test_the_autograders_groups_are_shown_as_its_tests_asked_unless_the_course_says():
    from grader.course.visibility import group_visibility
    assert group_visibility(GROUPS, {}) == {
        "gradescope/visible": "visible", "gradescope/after_deadline": "after_deadline",
        "gradescope/after_release": "after_release", "gradescope/hidden": "hidden"}
    assert group_visibility(GROUPS, {"gradescope": "hidden"})["gradescope/visible"] == "hidden"


def test_a_job_carries_who_handed_it_in_and_when_across_the_wire():
    from pathlib import Path

    from grader.core.jobs import GradingJob
    job = GradingJob(Path("/p"), Path("/s"), None, student="alice",
                     submitted_at="2026-12-01T20:00:00+00:00")
    assert GradingJob.from_json(job.to_json()) == job
    bare = GradingJob(Path("/p"), Path("/s"))
    assert "student" not in bare.to_json() and GradingJob.from_json(bare.to_json()) == bare


@pytest.mark.parametrize("termination", ["wall", None])
def test_a_visible_phase_shows_only_its_groups_when_the_autograder_gives_no_score(
        pkg, tmp_path, termination):
    """A limit hit or no results.json in the visible phase: the result's groups are the
    phase's (visible) ones, as when the run gives scores, never the hidden ones."""
    from dataclasses import replace

    from grader.core.runmeta import RunMeta
    from grader.core.verdict import Verdict
    from grader.judge.gradescope import outcome
    p = load_problem(pkg)
    visible = replace(p, groups=tuple(g for g in p.groups if g.name == GROUPS[0]))
    meta = RunMeta(exit_code=None if termination else 1, signal=9 if termination else None,
                   cpu_time_s=0.1, wall_time_s=11.0, memory_bytes=1 << 20,
                   termination=termination)
    g = outcome(visible, meta, "", tmp_path / "results.json")
    assert [x.name for x in g.groups] == [GROUPS[0]]
    assert g.verdict is (Verdict.TLE if termination else Verdict.JE)
    full = outcome(p, meta, "", tmp_path / "results.json")
    assert [x.name for x in full.groups] == list(GROUPS)


def test_every_bundled_package_is_listed_and_its_own_image_known(tmp_path):
    """What `gradeline examples` lists is every package under grader/examples (the demo's
    self-check grades that list, so an unlisted example is never graded on a fresh
    machine), and the ones that grade on an image of their own are the ones the
    commands build before grading."""
    from grader.adapters.sandbox.assignment_image import image_autograder
    from grader.examples import all_example_dirs

    here = Path(all_example_dirs()[0]).parent
    packages = {d.name for d in here.iterdir()
                if (d / "problem.yaml").is_file() or (d / "gradeline.yaml").is_file()}
    assert {d.name for d in all_example_dirs()} == packages
    own = {d.name for d in all_example_dirs()
           if image_autograder(load_problem(d, require_time_limit=False), tmp_path)}
    assert own == {"gsutils", "bank", "notebook", "gpusum"}
