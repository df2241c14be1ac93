"""Files staff write or save from a spreadsheet (the course file, the roster, an LMS's
CSVs) read as text and as CSV, so that a wrong encoding or a shifted row is refused
naming the file and line, never decoded as a guess or read with its columns moved."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from grader.core.errors import ConfigError

_BOM = b"\xef\xbb\xbf"
_UTF16 = (b"\xff\xfe", b"\xfe\xff")


def decode(data: bytes, source: str) -> str:
    """UTF-8 text (a leading byte-order mark dropped, as Excel's "CSV UTF-8" writes it).

    :raises ConfigError: naming the file, the first byte that is not UTF-8 and its line.
    """
    if data.startswith(_UTF16):
        raise ConfigError(f"{source} is UTF-16 (a spreadsheet's \"Unicode text\"): save "
                          "it as UTF-8 (in Excel: CSV UTF-8)")
    data = data.removeprefix(_BOM)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        guess = data[e.start:e.start + 1].decode("cp1252", "replace")
        raise ConfigError(f"{source} is not UTF-8 (byte 0x{data[e.start]:02x} at line "
                          f"{line}, {guess!r} in Latin-1): save it as UTF-8 (in Excel: "
                          "CSV UTF-8)") from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise ConfigError(f"{source}:{line}: a NUL byte: this is not a text file")
    return text


def read_text(path: Path, what: str) -> str:
    """A staff file's text (``what`` says which, for the message).

    :raises ConfigError: naming the file when it cannot be read or is not UTF-8.
    """
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ConfigError(f"{what} {path}: cannot be read: {e.strerror}") from None
    return decode(data, str(path))


@dataclass(frozen=True, slots=True)
class Row:
    """One data row of a CSV: its line in the file and its values by column."""

    line: int
    values: dict[str, str]


def _fields(reader: Iterator[list[str]], source: str, line: int) -> list[str] | None:
    try:
        return next(reader)
    except StopIteration:
        return None
    except csv.Error as e:
        raise ConfigError(f"{source}:{line}: not CSV: {e}") from None


def _header(fields: list[str], source: str) -> list[str]:
    cols = [c.strip() for c in fields]
    if len(cols) == 1 and (";" in cols[0] or "\t" in cols[0]):
        sep = "';'" if ";" in cols[0] else "tabs"
        raise ConfigError(f"{source}:1: the columns are separated by {sep}: save it as "
                          "CSV with commas (in Excel: CSV UTF-8)")
    blank = [str(i) for i, c in enumerate(cols, start=1) if not c]
    if blank:
        raise ConfigError(f"{source}:1: column {', '.join(blank)} of the header has no "
                          "name (a comma too many?)")
    twice = sorted({c for c in cols if cols.count(c) > 1})
    if twice:
        raise ConfigError(f"{source}:1: the header names {', '.join(twice)} twice")
    return cols


def read_csv(text: str, source: str) -> tuple[list[str], list[Row]]:
    """A CSV's header (names stripped) and its data rows, each with exactly the
    header's number of values; blank rows (a spreadsheet's ``,,,``) are skipped.

    :raises ConfigError: naming the line of a row with more or fewer values (an
        unquoted comma shifts every column after it), or of a line that is not CSV.
    """
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""), strict=True)
    first = _fields(reader, source, 1)
    if first is None:
        return [], []
    cols = _header(first, source)
    rows: list[Row] = []
    while True:
        line = reader.line_num + 1
        fields = _fields(reader, source, line)
        if fields is None:
            return cols, rows
        if not any(f.strip() for f in fields):
            continue
        if len(fields) != len(cols):
            fix = ('a value with a comma must be in double quotes ("Adams, Alice")'
                   if len(fields) > len(cols) else "give every column, an empty one as ,,")
            raise ConfigError(f"{source}:{line}: {len(fields)} values where the header "
                              f"names {len(cols)} columns ({', '.join(cols)}): {fix}")
        rows.append(Row(line, {c: f.strip() for c, f in zip(cols, fields, strict=True)}))
