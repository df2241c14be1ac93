"""Names inside a student's own files, masked for graders who grade anonymously.

A pseudonym on the page hides little when the first line of the file says ``// Alice
Learner (alice, alice@uni.example)``. Where names are hidden, the files a grader reads
are shown with the student's roster identifiers -- their id, email (and its local part),
SIS id and each part of their name -- replaced by their pseudonym, and every other
roster student's id and email by ``[student]`` (a teammate's login would name the
team). Words are compared whole and in any case, so ``Alice`` in ``AliceSolver`` stays;
a two-letter name part (``Ng``, ``Li``) only as the roster writes it, a single letter
never. In a file Pygments can lex, only its comments, strings and prose are masked,
never its code: Max Power's ``max(xs)`` stays ``max(xs)``, his ``# by Max Power`` not.

Pure: the roster and the text in, the masked text out; the store's files are never
changed, and an instructor who reveals names sees them as handed in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_for_filename
from pygments.token import Keyword, Name, Number, Operator, Punctuation
from pygments.util import ClassNotFound

from grader.course.load import Student
from grader.course.staffview import FileText

OTHER = "[student]"  # another roster student's id or email, where this one's is masked
_TOKEN = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\w+(?:[.-]\w+)*")
_WORD = re.compile(r"\w+")


def _own(s: Student) -> tuple[set[str], set[str]]:
    """(the student's words compared in any case, their two-letter name parts)."""
    out = {s.id, s.email, s.email.partition("@")[0], s.sis_id}
    out |= {w for w in _WORD.findall(s.name) if len(w) >= 3}
    return {x.casefold() for x in out if x}, {w for w in _WORD.findall(s.name) if len(w) == 2}


def masker(roster: Mapping[str, Student], student: str, pseudonym: str
           ) -> Callable[[str], str]:
    """The function that masks a text of ``student``'s files (see the module)."""
    table: dict[str, str] = {}
    for s in roster.values():
        if s.id != student:
            for x in (s.id, s.email, s.email.partition("@")[0] if s.email else ""):
                if len(x) >= 3:
                    table[x.casefold()] = OTHER
    me = roster.get(student)
    words, exact = _own(me) if me else ({student.casefold()}, set())
    for x in words:
        table[x] = pseudonym  # the student's own words win over a classmate's

    def word(m: re.Match[str]) -> str:
        w = m.group(0)
        return pseudonym if w in exact else table.get(w.casefold(), w)

    def token(m: re.Match[str]) -> str:
        tok = m.group(0)
        if (hit := table.get(tok.casefold())) is not None:
            return hit
        return tok if "@" in tok else _WORD.sub(word, tok)  # alice.l's parts, Learner.java

    return lambda text: _TOKEN.sub(token, text)


#: token types that are code, not words a student wrote about themselves
_CODE = (Name, Keyword, Operator, Number, Punctuation)


def lexer_for(name: str) -> Lexer | None:
    """Pygments' lexer for a file called ``name``, keeping its text as it is (None:
    Pygments knows no such file); the grading page's highlighting uses it too."""
    try:
        found: Lexer = get_lexer_for_filename(name, None, stripnl=False, ensurenl=False,
                                              tabsize=0)
    except ClassNotFound:
        return None
    return found


def mask_text(name: str, text: str, mask: Callable[[str], str]) -> str:
    """``text`` of a file called ``name`` with ``mask`` applied to all but its code."""
    lexer = lexer_for(name)
    if lexer is None:
        return mask(text)
    tokens = list(lexer.get_tokens(text))
    if "".join(v for _, v in tokens) != text:  # a lexer that changed the text: all of it
        return mask(text)
    return "".join(v if any(kind in t.split() for kind in _CODE) else mask(v)
                   for t, v in tokens)


def masked_files(files: Iterable[FileText], roster: Mapping[str, Student], student: str,
                 pseudonym: str) -> tuple[FileText, ...]:
    """``files`` with ``student``'s names masked in their text (see the module). Not
    in their file names: a grader's comment is kept by the name it was made on, and the
    lines stay where they were (a name never spans one)."""
    mask = masker(roster, student, pseudonym)
    return tuple(FileText(f.name, mask_text(f.name, f.text, mask)) for f in files)
