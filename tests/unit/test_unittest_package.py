"""A package of type unittest loads with its command, tests and visibilities; every
mistake in its gradeline.yaml is an error naming the file and what to write."""
import shutil

import pytest
import yaml

from grader.core.errors import ProblemFormatError
from grader.formats.load import load_problem

from ..support import EXAMPLES


@pytest.fixture
def pkg(tmp_path):
    root = tmp_path / "stats"
    shutil.copytree(EXAMPLES / "stats", root)
    return root


def _edit(root, **changes):
    gl = yaml.safe_load((root / "gradeline.yaml").read_text())
    gl.update(changes)
    (root / "gradeline.yaml").write_text(yaml.safe_dump({k: v for k, v in gl.items()
                                                         if v is not None}))


def test_the_bundled_unit_test_package_loads(pkg):
    p = load_problem(pkg)
    ut = p.unit_tests
    assert ut is not None and p.autograder is None and p.graded_by_autograder
    assert p.max_score == 10 and p.autograder_image == "base" and p.cases == []
    files = ut.files_of()
    assert files["visible"] == ("test_stats.py",) and files["hidden"] == ("test_hidden_stats.py",)
    assert files[""] == ("__init__.py",)  # in every run
    assert ut.runs() == ["visible", "hidden"] and ut.tests_at == "tests"
    (ut.tests / "test_later.py").write_text("")  # walked when loaded, not per run
    assert ut.files_of() == files
    assert p.limits.wall_s == 5 and p.languages == ("python3",)


def test_gradescope_names_for_visibilities_are_taken_and_setup_gives_an_image(pkg):
    (pkg / "setup").mkdir()
    (pkg / "setup" / "setup.sh").write_text("pip3 install numpy\n")
    _edit(pkg, visibility={"test_hidden_*.py": "after_due_date"})
    p = load_problem(pkg)
    assert p.autograder_image == "assignment" and p.unit_tests.setup == pkg / "setup"
    assert p.unit_tests.runs() == ["visible", "after_deadline"]


@pytest.mark.parametrize("changes,why", [
    ({"command": None}, "type unittest needs command"),
    ({"max_score": None}, "type unittest needs max_score"),
    ({"tests": "nothere"}, "no test directory nothere"),
    ({"tests": "../x"}, "tests must be a relative path inside the tree"),
    ({"tests_at": "/abs"}, "tests_at must be a relative path inside the tree"),
    ({"visibility": {"*.py": "secret"}}, "visibility {'*.py': 'secret'}: each must be one of"),
    ({"visibility": ["a"]}, "visibility must map globs to values"),
    ({"points": {"*": -1}}, "points['*'] must be a number >= 0"),
    ({"setup": "nosetup"}, "setup nosetup has no setup.sh"),
    ({"autograder": "x"}, "unknown keys ['autograder'] for type unittest"),
    ({"timeout_s": 0}, "timeout_s must be a number >= 1"),
])
def test_mistakes_are_named(pkg, changes, why):
    _edit(pkg, **changes)
    with pytest.raises(ProblemFormatError, match=r"gradeline\.yaml") as e:
        load_problem(pkg)
    assert why in str(e.value)


def test_a_link_out_of_the_tests_is_refused(pkg):
    (pkg / "tests" / "leak.py").symlink_to("/etc/passwd")
    with pytest.raises(ProblemFormatError, match=r"leak\.py"):
        load_problem(pkg)


def test_the_maven_examples_setup_warms_the_pom_it_grades_with():
    """bank's setup.sh can only read its own directory, so it carries a copy of the
    grading pom: the two must not drift (a drifted copy warms the wrong versions and
    the offline build fails)."""
    bank = EXAMPLES / "bank"
    assert (bank / "setup" / "pom.xml").read_bytes() == \
        (bank / "grading" / "pom.xml").read_bytes()
    assert load_problem(bank).unit_tests.setup == bank / "setup"
