import re
import tomllib

import pytest
import yaml

from grader.adapters.sandbox.image import ImageStore, parse_definition
from grader.core.errors import ImageError

from ..support import ROOT


def test_grader_def_is_a_debootstrap_apptainer_definition():
    d = parse_definition((ROOT / "containers" / "grader.def").read_text())
    assert d.header["Bootstrap"] == "debootstrap"
    assert d.header["OSVersion"] == "bookworm"
    assert {"gcc", "g++", "python3"} <= set(d.includes)
    # A read-only root cannot grow mount points: %post must create them.
    assert re.search(r"mkdir -p .*/work.*/judge", d.sections["post"])
    assert d.environment["LC_ALL"] == "C.UTF-8"
    assert "g++ --version" in d.sections["test"]


def test_content_hash_follows_the_text():
    a = parse_definition("Bootstrap: debootstrap\nOSVersion: bookworm\n%post\n  true\n")
    b = parse_definition("Bootstrap: debootstrap\nOSVersion: bookworm\n%post\n  false\n")
    assert a.content_hash != b.content_hash
    assert a.content_hash == parse_definition(a.text).content_hash


@pytest.mark.parametrize("text", ["OSVersion: bookworm\n", "Bootstrap debootstrap\n"])
def test_bad_definitions(text):
    with pytest.raises(ImageError):
        parse_definition(text)


def test_find_returns_none_until_built(tmp_path):
    store = ImageStore(tmp_path)
    assert store.find(ROOT / "containers" / "grader.def", "bwrap") is None


def test_environment_yml_pip_section_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    assert sorted(pip) == sorted(project["dependencies"])
    assert project["scripts"]["gradeline"] == "grader.cli.main:entrypoint"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("##", 1)[0]
    commands = [ln.split("#")[0].strip() for ln in quick.splitlines()
                if ln.startswith("make ")]
    assert commands == ["make demo", "make test"]
    assert "make test" in (ROOT / ".ci" / "run").read_text()
