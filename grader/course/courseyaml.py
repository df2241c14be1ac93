"""The course file's YAML read as staff wrote it, with the line of every key.

YAML 1.1 guesses: a plain ``23:59`` or ``1:30`` is a number in base 60 (1439, 90) and
``2026-12-01 23:59`` a timestamp. Here both stay the text they were, so the schema
(``course.spec``) sees what was written and can say what is wrong with it; a key given
twice is refused (YAML keeps the last one silently); and every place the schema names
(``assignments[0].deadline``) is found again as a line of the file.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from grader.core.errors import ConfigError

_TIMESTAMP = "tag:yaml.org,2002:timestamp"
Place = tuple[int | str, ...]


class _Twice(yaml.YAMLError):
    """A key given twice in one mapping (valid YAML, but one of the two is lost)."""

    def __init__(self, line: int, text: str) -> None:
        super().__init__(text)
        self.line = line


class _Loader(yaml.SafeLoader):
    """SafeLoader without YAML 1.1's timestamp and base-60 readings."""

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError):
            # PyYAML's own constructors fail so on an explicit tag: !!bool maybe, !!int x
            raise ConstructorError(None, None, f"{node.value!r} cannot be read as "
                                   f"!!{str(node.tag).rsplit(':', 1)[-1]}",
                                   node.start_mark) from None

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            if isinstance(key_node, ScalarNode):
                line = key_node.start_mark.line + 1
                first = seen.setdefault(key_node.value, line)
                if first != line:
                    raise _Twice(line, f"{key_node.value!r} is given twice (lines {first} "
                                       f"and {line}): YAML would keep the last one")
        return super().construct_mapping(node, deep=deep)


def _int(loader: _Loader, node: ScalarNode) -> int | str:
    text = str(loader.construct_scalar(node))
    return text if ":" in text else loader.construct_yaml_int(node)


def _float(loader: _Loader, node: ScalarNode) -> float | str:
    text = str(loader.construct_scalar(node))
    return text if ":" in text else loader.construct_yaml_float(node)


def _text(loader: _Loader, node: ScalarNode) -> str:
    return str(loader.construct_scalar(node))


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != _TIMESTAMP]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Loader.add_constructor("tag:yaml.org,2002:int", _int)
_Loader.add_constructor("tag:yaml.org,2002:float", _float)
_Loader.add_constructor(_TIMESTAMP, _text)  # an explicit !!timestamp too


def _lines(node: Node, place: Place, out: dict[Place, int], seen: set[int]) -> None:
    out.setdefault(place, node.start_mark.line + 1)
    if id(node) in seen:  # an alias (*x) of a node already walked, maybe of itself
        return
    seen.add(id(node))
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode):
                out[(*place, key.value)] = key.start_mark.line + 1
                _lines(value, (*place, key.value), out, seen)
    elif isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            _lines(item, (*place, i), out, seen)


class CourseYaml:
    """The file's data and where each key of it is."""

    def __init__(self, text: str, source: str) -> None:
        """:raises ConfigError: naming the line where the text stops being YAML."""
        loader = None
        try:
            loader = _Loader(text)
            loader.name = source  # what its messages call the file
            node = loader.get_single_node()
            self.data: object = None if node is None else loader.construct_document(node)
        except _Twice as e:
            raise ConfigError(f"{source}:{e.line}: {e}") from None
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f"{source}:{mark.line + 1}" if mark is not None else source
            raise ConfigError(f"{where}: not YAML: {e}") from None
        except RecursionError:
            raise ConfigError(f"{source}: nested too deep to read") from None
        finally:
            if loader is not None:
                loader.dispose()
        self.source = source
        self._lines: dict[Place, int] = {}
        if node is not None:
            _lines(node, (), self._lines, set())

    def line(self, place: Place) -> int | None:
        """The line of ``place`` (a key path), or of the nearest key above it."""
        for n in range(len(place), -1, -1):
            line = self._lines.get(tuple(place[:n]))
            if line is not None:
                return line
        return None

    def where(self, place: Place) -> str:
        """``course.yaml:7`` for a place in the file."""
        line = self.line(place)
        return f"{self.source}:{line}" if line is not None else self.source
