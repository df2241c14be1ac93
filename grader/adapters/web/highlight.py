"""Program text as HTML lines with syntax highlighting, by Pygments (the lexer chosen by
the file's name; plain text where none fits). Each token is a ``<span>`` of a short
class (``k`` keyword, ``s`` string, ``c`` comment, ``m`` number, ``nf`` a function's or
class's name, ``nb`` a builtin) that ``gradeline.css`` colours for light and dark at
WCAG AA contrast: classes, never inline styles, which the pages' Content-Security-Policy
forbids. Lines are returned one by one, so a page can number them and put comments
between them."""

from __future__ import annotations

from pygments.lexer import Lexer
from pygments.lexers import TextLexer
from pygments.token import Comment, Keyword, Name, Number, String, _TokenType

from grader.adapters.web.design import esc
from grader.course.masking import lexer_for

#: token types (and their subtypes) -> the class the stylesheet colours
CLASSES: tuple[tuple[_TokenType, str], ...] = (
    (Comment, "c"), (String, "s"), (Number, "m"), (Keyword, "k"),
    (Name.Function, "nf"), (Name.Class, "nf"), (Name.Builtin, "nb"))


def _lexer(name: str) -> Lexer:
    return lexer_for(name) or TextLexer(stripnl=False, ensurenl=False, tabsize=0)


def _class(t: _TokenType) -> str:
    kinds = t.split()  # the type and its ancestors
    return next((cls for kind, cls in CLASSES if kind in kinds), "")


def highlighted(name: str, text: str) -> list[str]:
    """The lines of ``text`` (a file called ``name``) as HTML, as many as the text has
    (a last line without its newline counts)."""
    lines: list[list[tuple[str, str]]] = [[]]  # per line, (class, text) runs
    for t, value in _lexer(name).get_tokens(text):
        cls = _class(t)
        for i, part in enumerate(value.split("\n")):
            if i:
                lines.append([])
            if part and lines[-1] and lines[-1][-1][0] == cls:
                lines[-1][-1] = (cls, lines[-1][-1][1] + part)
            elif part:
                lines[-1].append((cls, part))
    want = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    out = ["".join(f'<span class="{c}">{esc(x)}</span>' if c else esc(x) for c, x in line)
           for line in lines[:want]]
    return out + [""] * (want - len(out))
