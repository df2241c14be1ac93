"""The structure stays readable: no module over 400 lines, no function over 80 lines
unless its docstring says why ("Long because ..."), one class called Outcome."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80


def _sources() -> list[Path]:
    out = [*sorted((ROOT / "grader").rglob("*.py")), *sorted((ROOT / "analysis").rglob("*.py"))]
    return [p for p in out if "examples" not in p.relative_to(ROOT).parts]


def test_the_sources_are_found() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in _sources()}
    assert {"grader/formats/problem.py", "grader/cli/main.py", "analysis/report.py"} <= names


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_module_and_functions_are_short(path: Path) -> None:
    text = path.read_text()
    assert text.count("\n") <= MAX_MODULE_LINES, f"{path.name}: over {MAX_MODULE_LINES} lines"
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            why = ast.get_docstring(node) or ""
            assert length <= MAX_FUNCTION_LINES or "Long because" in why, \
                f"{path.name}:{node.lineno} {node.name} is {length} lines with no reason"


def test_one_class_is_called_outcome() -> None:
    found = [f"{p.relative_to(ROOT)}:{n.lineno}" for p in _sources()
             for n in ast.walk(ast.parse(p.read_text()))
             if isinstance(n, ast.ClassDef) and n.name == "Outcome"]
    assert len(found) == 1 and found[0].startswith("grader/core/jobs.py:"), found


def test_the_architecture_page_names_every_top_level_package() -> None:
    """A package added under grader/ appears on the architecture page (or the page lies
    by omission, as it did once)."""
    page = (ROOT / "docs/pages/reference/architecture.md").read_text()
    packages = sorted(p.parent.name for p in (ROOT / "grader").glob("*/__init__.py"))
    assert len(packages) > 10
    missing = [p for p in packages if f"  {p}/" not in page]
    assert not missing, f"not on docs/pages/reference/architecture.md: {missing}"


def test_test_helpers_have_one_home() -> None:
    """Helpers live in tests/support.py: no test module imports another test module or a
    conftest (which holds fixtures, found by pytest, never imported)."""
    bad = []
    for p in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.split(".")[-1].startswith(("test_", "conftest")):
                bad.append(f"{p.relative_to(ROOT)}:{node.lineno} from {node.module}")
    assert not bad, bad


#: a file or directory a line of the architecture page names: ``x.py``, ``lti/``, ...
_NAMED = re.compile(r"(?<![\w/.*-])([\w-]+(?:/[\w.-]+)*\.(?:py|c|def|sh|css)|[\w-]+/)"
                    r"(?![\w*])")


def _page_names() -> list[tuple[str, str]]:
    """(the folder a line of the page's tree is about, a name it gives) for every line."""
    text = (ROOT / "docs/pages/reference/architecture.md").read_text()
    tree = text.split("```")[1].splitlines()
    out, top = [], ""
    for line in tree[2:]:  # after "grader/"
        entry = re.match(r"^( *)([\w.-]+/|[\w.-]+\.py)", line)
        if entry and len(entry.group(1)) <= 2:  # a folder of grader/, or of the repository
            top = ("grader/" if entry.group(1) else "") + entry.group(2)
            line = line[entry.end():]
        out += [(top, n) for n in _NAMED.findall(line)]
    return out


def test_every_module_the_architecture_page_names_exists() -> None:
    """A module renamed or removed leaves the page naming what is not there: each name
    in a folder's entry is found under that folder."""
    names = _page_names()
    assert ("grader/adapters/", "desk_socket.py") in names and len(names) > 80
    missing = []
    for top, name in names:
        base = ROOT / top if top.endswith("/") else ROOT / "grader"
        if not any(base.glob(f"**/{name.rstrip('/')}")) and \
                not (ROOT / "grader" / name).is_dir():  # another layer, by name
            missing.append(f"{top}: {name}")
    assert not missing, f"named on docs/pages/reference/architecture.md, not there: {missing}"


#: the read side: what students and staff are shown, made and rendered
READ_SIDE = [*sorted((ROOT / "grader/views").glob("*.py")),
             *(ROOT / "grader/course" / f for f in ("shown.py", "studentview.py",
                                                    "staffview.py", "similarity_pairs.py",
                                                    "lms_grades.py", "lms_roster.py")),
             *(ROOT / "grader/adapters/web" / f for f in ("__init__.py", "pages.py",
                                                         "student.py", "live_page.py",
                                                         "design.py", "lti/pages.py")),
             ROOT / "grader/adapters/desk_socket.py", ROOT / "grader/adapters/desk_client.py",
             ROOT / "grader/compose/read_side.py"]


@pytest.mark.parametrize("path", READ_SIDE, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_read_side_says_what_it_passes(path: Path) -> None:
    """No ``Any`` in a public signature of the read side: what students and staff are
    shown crosses it as typed values, never as dicts read by key."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and \
                not node.name.startswith("_"):
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                    *filter(None, (node.args.vararg, node.args.kwarg))]
            notes = [a.annotation for a in args] + [node.returns]
            if any("Any" in ast.unparse(n) for n in notes if n is not None):
                found.append(f"{node.name} (line {node.lineno})")
    assert not found, found


def _imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out += [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names]
    return out


def test_only_the_adapters_and_the_composition_name_the_concrete_store() -> None:
    outside = [p for p in _sources() if p.is_relative_to(ROOT / "grader")
               and not p.is_relative_to(ROOT / "grader/adapters")
               and not p.is_relative_to(ROOT / "grader/compose")]
    assert ROOT / "grader/cli/serving.py" in outside
    named = [f"{p.relative_to(ROOT)}: {m}" for p in outside for m in _imports(p)
             if m.startswith(("grader.adapters.store", "psycopg"))]
    assert not named, named


def test_the_command_line_builds_no_pipeline() -> None:
    """Building a pipeline is the composition's (``compose.grading``)."""
    built = [f"{p.relative_to(ROOT)}:{n}" for p in sorted((ROOT / "grader/cli").glob("*.py"))
             for n, line in enumerate(p.read_text().splitlines(), 1) if "Pipeline(" in line]
    assert not built, built
