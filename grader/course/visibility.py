"""When each test group of an assignment is graded and shown.

``visible`` groups run at hand-in and are shown at once; ``after_deadline`` and
``after_release`` groups run once the deadline has passed (the counting submission
only) and are shown after the deadline or when staff release; ``hidden`` groups run
then too and count, but are never shown. A course names groups or prefixes of them
(``secret`` covers ``secret/group1``; the longest match wins); a Kattis package's
default is sample visible and everything else after_release; a Gradescope
autograder's groups (``gradescope/<visibility>``) default to what its tests asked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from grader.course.spec import VISIBILITIES, Visibility

PHASES = ("visible", "full")


def group_visibility(groups: Iterable[str], rules: Mapping[str, Visibility]
                     ) -> dict[str, Visibility]:
    """Each group's visibility under the course's rules (see the module docstring)."""
    out: dict[str, Visibility] = {}
    for g in groups:
        matches = [k for k in rules if g == k or g.startswith(k.rstrip("/") + "/")]
        own = [v for v in VISIBILITIES if g == f"gradescope/{v}"]
        if matches:
            out[g] = rules[max(matches, key=len)]
        elif own:
            out[g] = own[0]
        else:
            out[g] = "visible" if g == "sample" or g.startswith("sample/") else \
                "after_release"
    return out


def unknown_rules(groups: Iterable[str], rules: Mapping[str, Visibility]) -> list[str]:
    """Rule keys that name no group of the package (a typo must not go unnoticed)."""
    names = list(groups)
    return sorted(k for k in rules
                  if not any(g == k or g.startswith(k.rstrip("/") + "/") for g in names))


def visible_groups(groups: Iterable[str], rules: Mapping[str, Visibility]) -> frozenset[str]:
    """The groups graded at hand-in."""
    return frozenset(g for g, v in group_visibility(groups, rules).items() if v == "visible")
