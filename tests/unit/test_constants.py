"""problem.yaml's constants (2025-09): parsed with reasons, substituted where the spec
says (included files, validators, example submissions, test_group.yaml), never in test
data; a sequence naming no constant stays as it is."""

from pathlib import Path

import pytest

from grader.core.errors import ProblemFormatError
from grader.formats.kattis.constants import parse_constants, substitute, substitute_tree
from grader.formats.load import load_problem

from ..support import add_cases, write_files

CONSTS = {"k": {"value": 5000000, "tex": "5,000,000"}, "name": "Ada", "eps": 1e-6}


def test_sequences_are_replaced_and_unknown_ones_kept() -> None:
    c, why = parse_constants(CONSTS)
    assert why is None
    assert substitute("n <= {{k}} ({{k.tex}}), {{name}} {{eps}} {{nope}} {{k.nope}} {k}",
                      c) == "n <= 5000000 (5,000,000), Ada 1e-06 {{nope}} {{k.nope}} {k}"
    for bad, msg in [([1], "mapping"), ({"1x": 1}, "not a name"), ({"k": {"tex": "1"}},
                     "needs a value"), ({"k": [1]}, "must be an integer, a float or a string")]:
        assert msg in str(parse_constants(bad)[1])


def test_the_package_substitutes_where_the_spec_says(tmp_path: Path) -> None:
    root = tmp_path / "c"
    write_files(root, {"problem.yaml": "problem_format_version: 2025-09\nname: C\nuuid: 1\n"
                                 "limits: {time_limit: 1}\nconstants: {k: 7, word: hi}\n",
                 "data/secret/test_group.yaml": "args: ['{{k}}', '{{word}}', '{{other}}']\n",
                 "include/python3/consts.py": "K = {{k}}\n"})
    add_cases(root, "secret", 1)
    (root / "data/secret/01.in").write_text("{{k}}\n")  # test data: never substituted
    p = load_problem(root)
    assert p.cases[0].args == ("7", "hi", "{{other}}")
    assert p.constants["k"]["value"] == "7"
    build = tmp_path / "build"
    build.mkdir()
    (build / "consts.py").write_text((root / "include/python3/consts.py").read_text())
    (build / "blob.bin").write_bytes(b"\xff\xfe{{k}}")
    substitute_tree(build, p.constants)
    assert (build / "consts.py").read_text() == "K = 7\n"
    assert (build / "blob.bin").read_bytes() == b"\xff\xfe{{k}}"  # not text: left alone
    assert (root / "data/secret/01.in").read_text() == "{{k}}\n"
    (root / "problem.yaml").write_text("problem_format_version: 2025-09\nname: C\nuuid: 1\n"
                                       "limits: {time_limit: 1}\nconstants: {2k: 7}\n")
    with pytest.raises(ProblemFormatError, match="is not a name"):
        load_problem(root)
