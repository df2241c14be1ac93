"""Programming languages as data (languages.yaml): detection and argv expansion."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import PurePosixPath
from typing import Any

import yaml

from grader.core.entrypoint import kotlin_file_class
from grader.core.errors import ConfigError, SubmissionError
from grader.core.limits import MIB, Limits


@dataclass(frozen=True, slots=True)
class Language:
    """One language: how to recognise, compile and run it."""

    id: str
    name: str
    extensions: tuple[str, ...]
    compile: tuple[str, ...]
    run: tuple[str, ...]
    default_flags: tuple[str, ...]
    #: flags that only make the compile faster (precompiled headers, a faster linker);
    #: added unless acceleration is off (measurements of the bare loop's work)
    accelerate: tuple[str, ...] = ()
    #: the problem's time limit is multiplied by this for the language's runs
    time_multiplier: float = 1.0
    #: the Kattis language code (the package format's languages table)
    kattis: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    #: memory the runtime commits for itself (Limits.runtime_bytes), in MiB
    runtime_mib: int = 0
    #: address space the runtime reserves without committing it (Limits.reserve_bytes)
    reserve_mib: int = 0

    def limits(self, limits: Limits) -> Limits:
        """``limits`` for a run of this language's runtime (its allowances in MiB)."""
        return limits.for_runtime(self.runtime_mib * MIB, self.reserve_mib * MIB)

    def sources(self, files: Sequence[str]) -> list[str]:
        """The files (relative names) that are sources of this language, sorted."""
        return sorted(f for f in files if PurePosixPath(f).suffix[1:] in self.extensions)

    def main_file(self, files: Sequence[str], own: Sequence[str] | None = None) -> str:
        """The entry file: ``main.*``, else the only source, else the first in order.
        ``own``: the submission's own files, when ``files`` has the package's included
        files too -- those are never the entry unless named ``main`` (the spec: a driver
        among the included files carries the language's main name)."""
        srcs = self.sources(files)
        if not srcs:
            raise SubmissionError(f"no {self.name} source file among {list(files)}")
        for s in srcs:
            if PurePosixPath(s).stem == "main":
                return s
        mine = self.sources(own) if own is not None else []
        return (mine or srcs)[0]

    def _expand(self, template: Sequence[str], files: Sequence[str],
                flags: Sequence[str] | None, extra: Sequence[str] = (),
                memory_bytes: int | None = None, entry: str | None = None,
                own: Sequence[str] | None = None) -> list[str]:
        srcs = self.sources(files)
        chosen = [*extra, *(self.default_flags if flags is None else flags)]
        out: list[str] = []
        for part in template:
            if part == "{flags}":
                out.extend(chosen)
            elif part == "{files}":
                out.extend(srcs)
            elif part == "{main}":
                out.append(self.main_file(files, own))
            elif "{" in part:
                main = PurePosixPath(self.main_file(files, own)).stem
                heap = max(32, (memory_bytes or 512 * 2**20) // 2**20 - 64)
                out.append(part.replace("{mainclass}", entry or main)
                           .replace("{ktclass}", entry or kotlin_file_class(main))
                           .replace("{heap_mib}", str(heap)))
            else:
                out.append(part)
        return out

    def compile_argv(self, files: Sequence[str], flags: Sequence[str] | None = None, *,
                     accelerate: bool = False, own: Sequence[str] | None = None) -> list[str]:
        """argv that compiles ``files``; empty when the language needs no compile step.
        ``accelerate``: with the ``accelerate`` flags before the others (the assignment's
        own flags still win: a precompiled header made for other flags is ignored)."""
        if not self.compile:
            return []
        return self._expand(self.compile, files, flags, self.accelerate if accelerate else (),
                            own=own)

    def run_argv(self, files: Sequence[str], flags: Sequence[str] | None = None, *,
                 memory_bytes: int | None = None, entry: str | None = None,
                 own: Sequence[str] | None = None) -> list[str]:
        """argv of one test run (``memory_bytes``: the run's limit, for a managed
        runtime's heap; ``entry``: the class to start, read from the sources by
        ``entrypoint.main_class``, else the entry file's)."""
        # Run flags are only meaningful for interpreters; compiled languages ignore them.
        run_flags = flags if "{flags}" in self.run else None
        return self._expand(self.run, files, run_flags if run_flags is not None else [],
                            memory_bytes=memory_bytes, entry=entry, own=own)


def _parse(data: Any) -> dict[str, Language]:
    if not isinstance(data, Mapping):
        raise ConfigError("languages.yaml: top level must be a mapping of language ids")
    langs: dict[str, Language] = {}
    for lid, spec in data.items():
        if not isinstance(spec, Mapping):
            raise ConfigError(f"languages.yaml: {lid}: must be a mapping")
        try:
            langs[str(lid)] = Language(
                id=str(lid),
                name=str(spec["name"]),
                extensions=tuple(str(e) for e in spec["extensions"]),
                compile=tuple(str(a) for a in spec.get("compile") or ()),
                run=tuple(str(a) for a in spec["run"]),
                default_flags=tuple(str(a) for a in spec.get("default_flags") or ()),
                accelerate=tuple(str(a) for a in spec.get("accelerate") or ()),
                time_multiplier=float(spec.get("time_multiplier", 1.0)),
                kattis=str(spec.get("kattis", lid)),
                env={str(k): str(v) for k, v in (spec.get("env") or {}).items()},
                runtime_mib=int(spec.get("runtime_mib", 0)),
                reserve_mib=int(spec.get("reserve_mib", 0)),
            )
        except KeyError as e:
            raise ConfigError(f"languages.yaml: {lid}: missing key {e.args[0]!r}") from e
    return langs


@functools.cache
def load_languages() -> dict[str, Language]:
    """The language table shipped with gradeline."""
    text = resources.files("grader.core").joinpath("languages.yaml").read_text(encoding="utf-8")
    return _parse(yaml.safe_load(text))


def detect_language(files: Sequence[str], allowed: Sequence[str] | None = None,
                    languages: Mapping[str, Language] | None = None) -> Language:
    """The language of a submission, from its file suffixes.

    :param allowed: language ids the assignment accepts (None: all).
    :raises SubmissionError: when no or more than one language matches.
    """
    table = languages if languages is not None else load_languages()
    candidates = [
        lang for lid, lang in table.items()
        if (allowed is None or lid in allowed) and lang.sources(files)
    ]
    if not candidates:
        accepted = ", ".join(allowed) if allowed is not None else ", ".join(table)
        raise SubmissionError(
            f"cannot detect the language of {sorted(files)}: no file has a suffix of "
            f"an accepted language ({accepted}); pass --language to say which"
        )
    if len(candidates) > 1:
        # C and C++ together: a C++ program with C helpers is C++.
        ids = {c.id for c in candidates}
        if ids == {"c", "cpp"}:
            return table["cpp"]
        raise SubmissionError(
            f"files {sorted(files)} match several languages ({', '.join(sorted(ids))}); "
            "pass --language to say which"
        )
    return candidates[0]


def get_language(lang_id: str) -> Language:
    """A language by id, with a helpful error."""
    table = load_languages()
    if lang_id not in table:
        raise SubmissionError(f"unknown language {lang_id!r}; known: {', '.join(sorted(table))}")
    return table[lang_id]
