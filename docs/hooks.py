"""MkDocs hooks: the parts of the docs that the code already says are generated from it
at build time, so the two cannot drift. A page asks for one with a marker on a line of
its own:

    <!-- gradeline:cli -->               the command line, from the argparse parser
    <!-- gradeline:settings -->          every environment knob (grader/settings.py)
    <!-- gradeline:check-env -->         every check-env check and its remedy
    <!-- gradeline:result-record -->     the result record's keys (grader/core/result.py)
    <!-- gradeline:schema -->            the database migrations, in order
    <!-- gradeline:include PATH -->      a Markdown file of the repository (CONTRACT.md)
    <!-- gradeline:fields PATH:A,B -->   the fields of classes A, B of a module (the course
                                         file's schema), with their comments
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from grader.cli import help as help_text
from grader.cli.main import build_parser
from grader.settings import KNOBS

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^<!-- gradeline:([\w-]+)(?: (\S+))? -->$", re.M)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace every marker of the page with what the code says."""
    def fill(m: re.Match[str]) -> str:
        kind, arg = m.group(1), m.group(2)
        make = GENERATORS.get(kind)
        if make is None:
            raise ValueError(f"{page.file.src_path}: unknown marker gradeline:{kind}")
        return make(arg)

    return MARKER.sub(fill, markdown)


# -- the command line ---------------------------------------------------------------
def _cli(_: str | None) -> str:
    parser = build_parser()
    by_name = dict(help_text.commands(parser))
    out = ["`gradeline --help`:", "", "```", parser.format_help().rstrip(), "```", ""]
    for group, names in help_text.GROUPS.items():
        out += [f"## {group}", ""]
        for top in names:
            for name, sp in by_name.items():
                if name == top or name.startswith(top + " "):
                    out += [f"### gradeline {name}", "", "```",
                            sp.format_help().rstrip(), "```", ""]
    return "\n".join(out)


# -- settings and check-env ----------------------------------------------------------
def _cell(text: str) -> str:
    """Text for a Markdown table cell (no pipes, no line breaks, no tags)."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("|", "\\|").replace("\n", " "))


def _settings(_: str | None) -> str:
    rows = ["| variable | what it is for |", "|---|---|"]
    rows += [f"| `{k.env}` | {_cell(k.doc)} |" for k in KNOBS]
    return "\n".join(rows)


def _text(node: ast.expr | None) -> str | None:
    """A string argument as written: f-string parts shown as an ellipsis."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "…" for v in node.values)
    return None


def _check_env(_: str | None) -> str:
    tree = ast.parse((ROOT / "grader/cli/checkenv.py").read_text())
    rows = ["| check | required | remedy when it fails |", "|---|---|---|"]
    seen: set[tuple[str, str]] = set()
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)),
                   key=lambda n: (n.lineno, n.col_offset))
    for node in calls:  # in the order check-env runs them
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "Check" and node.args):
            continue
        kw = {k.arg: k.value for k in node.keywords}
        name = _text(node.args[0])
        remedy = _text(node.args[3] if len(node.args) > 3 else kw.get("remedy"))
        if not name or not remedy or (name, remedy) in seen:
            continue
        seen.add((name, remedy))
        required = kw.get("required")
        req = "no" if isinstance(required, ast.Constant) and required.value is False else \
            "yes" if required is None else "depends"
        rows.append(f"| {_cell(name)} | {req} | {_cell(remedy)} |")
    return "\n".join(rows)


# -- the result record and the schema ------------------------------------------------
UNITS = (("_s", "seconds"), ("_bytes", "bytes"), ("_kb", "KiB"))


def _comment(lines: list[str], lineno: int) -> str:
    """What the source says of a field: its trailing comment, or the ``#:`` lines above."""
    line = lines[lineno - 1]
    if "  # " in line:
        return line.split("  # ", 1)[1].strip()
    above: list[str] = []
    i = lineno - 2
    while i >= 0 and lines[i].strip().startswith("#:"):
        above.insert(0, lines[i].strip()[2:].strip())
        i -= 1
    return " ".join(above)


def _record(_: str | None) -> str:
    source = (ROOT / "grader/core/result.py").read_text()
    lines = source.splitlines()
    tree = ast.parse(source)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    out = []
    for name, title in (("SubmissionResult", "The record (top level)"),
                        ("CompileResult", "`compile`"), ("TestResult", "`tests[]`"),
                        ("GroupResult", "`groups[]`")):
        cls = classes[name]
        out += [f"### {title}", "", ast.get_docstring(cls) or "", "",
                "| key | type | unit | may be null | meaning |", "|---|---|---|---|---|"]
        if name == "SubmissionResult":
            out += ["| `schema` | str | | no | always `gradeline/result` |",
                    "| `schema_version` | int | | no | changes when a key changes meaning "
                    "or disappears; new keys may appear without it |"]
        for stmt in cls.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            key, kind = stmt.target.id, ast.unparse(stmt.annotation)
            unit = next((u for suffix, u in UNITS if key.endswith(suffix)), "")
            doc = _comment(lines, stmt.lineno)
            nullable = "yes" if "None" in kind else "no"
            out.append(f"| `{key}` | {_cell(kind)} | {unit} | {nullable} | {_cell(doc)} |")
        out.append("")
    return "\n".join(out)


def _default(value: ast.expr | None) -> str:
    """A field's default as written: Field(x, ...) -> x, default_factory=F -> F()."""
    if value is None:
        return "required"
    if isinstance(value, ast.Call) and ast.unparse(value.func) == "Field":
        if value.args:
            first = ast.unparse(value.args[0])
            return "required" if first == "..." else first
        for k in value.keywords:
            if k.arg == "default_factory":
                return f"{ast.unparse(k.value)}()"
        return "required"
    return ast.unparse(value)


def _fields(arg: str | None) -> str:
    """Tables of the fields of some classes of a module, with their comments."""
    if not arg or ":" not in arg:
        raise ValueError("gradeline:fields needs PATH:Class,Class")
    path, names = arg.split(":", 1)
    source = (ROOT / path).read_text()
    lines = source.splitlines()
    classes = {n.name: n for n in ast.parse(source).body if isinstance(n, ast.ClassDef)}
    out = []
    for name in names.split(","):
        cls = classes[name]
        out += [f"### `{name}`", "", ast.get_docstring(cls) or "", "",
                "| key | type | default | meaning |", "|---|---|---|---|"]
        for stmt in cls.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            doc = _comment(lines, stmt.lineno)
            out.append(f"| `{stmt.target.id}` | {_cell(ast.unparse(stmt.annotation))} | "
                       f"{_cell(_default(stmt.value))} | {_cell(doc)} |")
        out.append("")
    return "\n".join(out)


def _schema(_: str | None) -> str:
    out = []
    for sql in sorted((ROOT / "grader/adapters/store/migrations").glob("*.sql")):
        out += [f"### `{sql.name}`", "", "```sql", sql.read_text().rstrip(), "```", ""]
    return "\n".join(out)


# -- included files ------------------------------------------------------------------
LINK = re.compile(r"\[([^\]]+)\]\((?!https?://|#)([^)]+)\)")


def _include(path: str | None) -> str:
    """A repository file, its relative links shown as paths (they point into the code)."""
    if not path:
        raise ValueError("gradeline:include needs a path")
    src = ROOT / path
    text = src.read_text()
    base = src.parent.relative_to(ROOT)

    def as_path(m: re.Match[str]) -> str:
        target = (base / m.group(2)).as_posix()
        return f"{m.group(1)} (`{target}`)"

    return LINK.sub(as_path, text)


GENERATORS = {"cli": _cli, "settings": _settings, "check-env": _check_env,
              "result-record": _record, "schema": _schema, "include": _include,
              "fields": _fields}
