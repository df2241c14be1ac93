"""Which class a JVM submission starts from, read from its sources as judges do.

The file name is not the entry point: ``Solution.java`` may hold ``class Main`` (only a
*public* class must match its file), a class may sit in a ``package``, and kotlinc
names a file's class after the file with every character that is not a letter or a
digit made ``_`` (``test-hello.kt`` -> ``Test_helloKt``). Pure text in, a name out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePosixPath

_COMMENTS_AND_STRINGS = re.compile(
    r'//[^\n]*|/\*.*?\*/|"""(?:.|\n)*?"""|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
    re.S)
_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)", re.M)
_JAVA_TYPE = re.compile(r"\b(?:class|interface|enum|record)\s+([A-Za-z_$][\w$]*)")
_JAVA_MAIN = re.compile(r"\bstatic\b[^;{}()]*\bvoid\s+main\s*\(")
_KOTLIN_MAIN = re.compile(r"^fun\s+main\s*\(", re.M)
#: the languages whose entry point is a class named in their sources
JVM_LANGUAGES = ("java", "kotlin")


def _code(text: str) -> str:
    """The text without comments and literals (a "main(" in a string is not one)."""
    return _COMMENTS_AND_STRINGS.sub(lambda m: " " * len(m.group()), text)


def _qualified(code: str, name: str) -> str:
    m = _PACKAGE.search(code)
    return f"{m.group(1)}.{name}" if m else name


def kotlin_file_class(filename: str) -> str:
    """The class kotlinc makes of a file's top-level functions."""
    stem = PurePosixPath(filename).stem
    safe = re.sub(r"[^\w]", "_", stem) or "_"
    head = safe[0].upper() if safe[0].isalpha() or safe[0] == "_" else f"_{safe[0]}"
    return f"{head}{safe[1:]}Kt"


def java_main_class(sources: Mapping[str, str]) -> str | None:
    """The class whose ``static void main`` comes first (the entry file's first), or
    None when no source has one."""
    for _name, text in sources.items():
        code = _code(text)
        m = _JAVA_MAIN.search(code)
        if m is None:
            continue
        types = [t for t in _JAVA_TYPE.finditer(code) if t.start() < m.start()]
        if types:
            return _qualified(code, types[-1].group(1))
    return None


def kotlin_main_class(sources: Mapping[str, str]) -> str | None:
    """The file class of the first source with a top-level ``fun main``, or None."""
    for name, text in sources.items():
        code = _code(text)
        if _KOTLIN_MAIN.search(code):
            return _qualified(code, kotlin_file_class(name))
    return None


def main_class(lang_id: str, sources: Mapping[str, str]) -> str | None:
    """The entry class of a Java or Kotlin submission; None for other languages or
    when the sources do not say (the file name's class is then tried)."""
    if lang_id == "java":
        return java_main_class(sources)
    if lang_id == "kotlin":
        return kotlin_main_class(sources)
    return None
