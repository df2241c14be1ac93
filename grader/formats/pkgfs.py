"""Reading a problem package as the spec allows and no further: YAML files with their
known keys, directory listings without the names the spec says to ignore, and
symbolic links that must stay inside the package.

Real packages share test cases between groups by symlink (legacy scoring packages do
this for subtasks); a link that dangles or leaves the package is a load error naming
the link, never a traceback (``FileNotFoundError``) and never a read of a host file.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from grader.core.errors import ProblemFormatError


class PackageFS:
    """Files of one package rooted at ``root`` (already resolved)."""

    def __init__(self, name: str, root: Path) -> None:
        self.name = name
        self.root = root

    def rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)

    def error(self, path: Path, what: str) -> ProblemFormatError:
        return ProblemFormatError(self.name, str(path), what)

    def number(self, path: Path, key: str, value: Any, *, low: float | None = None,
               above: float | None = None, high: float | None = None) -> float:
        """``value`` as a finite number within the bounds (``low`` <= it, ``above`` < it,
        it <= ``high``): the one check every package number passes, so that each
        file's error says the same thing the same way."""
        if isinstance(value, bool) or not isinstance(value, int | float) or \
                not abs(value) <= sys.float_info.max or (low is not None and value < low) \
                or (above is not None and value <= above) or \
                (high is not None and value > high):
            bounds = [f">= {low:g}" if low is not None else "",
                      f"> {above:g}" if above is not None else "",
                      f"<= {high:g}" if high is not None else ""]
            said = " and ".join(b for b in bounds if b)
            raise self.error(path, f"{key} must be a number{' ' + said if said else ''}, "
                                   f"not {value!r}")
        return float(value)

    def check_link(self, path: Path) -> Path:
        """``path`` itself when it is no symlink, else its target -- which must exist and
        lie inside the package."""
        if not path.is_symlink():
            return path
        try:
            target = path.resolve(strict=True)
        except (OSError, RuntimeError) as e:
            raise self.error(path, f"is a symbolic link to {str(path.readlink())!r}, which "
                                   f"does not exist ({type(e).__name__})") from None
        if target != self.root and self.root not in target.parents:
            raise self.error(path, f"is a symbolic link to {target}, outside the package "
                                   "(links must stay inside it)")
        return target

    def is_file(self, path: Path) -> bool:
        """A regular file (after checking any link on the way)."""
        if not path.exists() and not path.is_symlink():
            return False
        return self.check_link(path).is_file()

    def is_dir(self, path: Path) -> bool:
        if not path.exists() and not path.is_symlink():
            return False
        return self.check_link(path).is_dir()

    def entries(self, directory: Path) -> Iterator[Path]:
        """A directory's entries in lexicographic order, without the names the spec says
        a judge ignores (starting with ``.`` or ``-``); every link checked."""
        try:
            names = sorted(p.name for p in directory.iterdir())
        except OSError as e:
            raise self.error(directory, f"cannot be listed: {e.strerror}") from None
        for n in names:
            if n.startswith((".", "-")):
                continue
            p = directory / n
            if p.is_symlink():
                self.check_link(p)
            yield p

    def read_text(self, path: Path) -> str:
        target = self.check_link(path)
        try:
            return target.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            raise self.error(path, f"is not UTF-8 text: {e.reason}") from None
        except OSError as e:
            raise self.error(path, f"cannot be read: {e.strerror}") from None

    def read_yaml(self, path: Path, known: Iterable[str] | None = None,
                  *, what: str = "", moved: Mapping[str, str] | None = None,
                  transform: Callable[[str], str] | None = None) -> dict[str, Any]:
        """A YAML mapping ({} when the file is absent or empty). ``known``: the keys
        the spec defines for this file; any other key is an error naming it, with the
        remedy when ``moved`` knows where that key went (an older version's key)."""
        if not path.exists() and not path.is_symlink():
            return {}
        try:
            text = self.read_text(path)
            data = yaml.safe_load(transform(text) if transform else text)
        except yaml.YAMLError as e:
            raise self.error(path, f"is not valid YAML: {e}") from None
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise self.error(path, f"must be a YAML mapping, not {type(data).__name__}")
        if known is not None:
            allowed = set(known)
            unknown = sorted(str(k) for k in data if str(k) not in allowed)
            fixes = [f"{k}: {(moved or {})[k]}" for k in unknown if k in (moved or {})]
            if fixes:
                raise self.error(path, f"unknown keys {unknown}{what}; " + "; ".join(fixes))
            if unknown:
                raise self.error(path, f"unknown keys {unknown}{what}; known: "
                                       f"{sorted(allowed)}")
        return {str(k): v for k, v in data.items()}
