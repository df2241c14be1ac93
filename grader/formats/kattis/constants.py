"""The 2025-09 ``constants`` of ``problem.yaml``: ``{{name}}`` and ``{{name.variant}}``
are replaced in the files the spec names -- included files, validators, example
submissions and ``test_group.yaml`` -- and never in test data or ``problem.yaml``.
A sequence naming no constant is left as it is (the spec allows a warning, not an
error)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
SEQUENCE = re.compile(r"\{\{([a-zA-Z_][a-zA-Z0-9_]*)(?:\.([a-zA-Z_][a-zA-Z0-9_]*))?\}\}")

#: {name: {variant: text}}; every constant has the variant "value"
Constants = Mapping[str, Mapping[str, str]]


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    return str(value)


def parse_constants(raw: Any) -> tuple[dict[str, dict[str, str]], str | None]:
    """``constants`` as {name: {variant: text}}, or the reason it is malformed."""
    if raw is None:
        return {}, None
    if not isinstance(raw, dict):
        return {}, "constants must be a mapping of names to values"
    out: dict[str, dict[str, str]] = {}
    for name, value in raw.items():
        if not isinstance(name, str) or not NAME.fullmatch(name):
            return {}, f"constants: {name!r} is not a name ([a-zA-Z_][a-zA-Z0-9_]*)"
        variants = value if isinstance(value, dict) else {"value": value}
        if "value" not in variants:
            return {}, f"constants.{name}: a map needs a value key"
        texts: dict[str, str] = {}
        for k, v in variants.items():
            text = _scalar(v)
            if not isinstance(k, str) or not NAME.fullmatch(k) or text is None:
                return {}, (f"constants.{name}.{k}: must be an integer, a float or a "
                            f"string, not {v!r}")
            texts[k] = text
        out[name] = texts
    return out, None


def substitute(text: str, constants: Constants) -> str:
    """``text`` with every sequence of a defined constant (and variant) replaced."""
    def one(m: re.Match[str]) -> str:
        variants = constants.get(m.group(1))
        if variants is None:
            return m.group(0)
        return variants.get(m.group(2) or "value", m.group(0))

    return SEQUENCE.sub(one, text) if constants else text


def substitute_file(path: Path, constants: Constants) -> None:
    """Replace the sequences in one file in place; a file that is not UTF-8 text (a
    binary, an image) is left alone."""
    if not constants:
        return
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return
    new = substitute(text, constants)
    if new != text:
        path.write_text(new, encoding="utf-8")


def substitute_tree(root: Path, constants: Constants) -> None:
    """Every file under ``root`` (or ``root`` itself when it is a file)."""
    if not constants:
        return
    for p in [root] if root.is_file() else sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink():
            substitute_file(p, constants)
