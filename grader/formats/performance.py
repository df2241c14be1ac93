"""``gradeline.yaml``'s ``performance:``: the performance tests of a parallel
assignment (``core.perfspec``), every key checked with its place named::

    performance:
      reference: submissions/accepted/parallel.c   # compiled and run like a submission
      inputs: [performance/large.in]               # timed, never shown to students
      cores: [1, 2]                                # measured at (default: 1 and the shape's)
      scaling: strong                              # or weak: inputs per core count
      repetitions: {min: 3, max: 10, ci: 0.05, warmup: 1}
      items:
        - {metric: time_ratio, cores: 2, points: 40, bands: [[1.2, 100], [1.5, 50]]}
        - {metric: efficiency, cores: 2, points: 40, linear: [[0, 0], [0.5, 75], [0.8, 100]]}
      cache: {input: performance/small.in}         # the cache reading's small input

The package's version covers the reference and the inputs (a new reference changes
the grades, so results graded by the old one are not reused).
"""

from __future__ import annotations

import hashlib
import itertools
from pathlib import Path
from typing import Any

from grader.core.errors import SubmissionError
from grader.core.languages import detect_language
from grader.core.perfspec import (
    BASELINES,
    LOWER_IS_BETTER,
    METRICS,
    SCALING_METRICS,
    SCALINGS,
    Item,
    PerformanceSpec,
    PointsMap,
    Repetitions,
)
from grader.core.shape import Shape
from grader.core.submission import load_submission
from grader.formats.pkgfs import PackageFS

PERFORMANCE_KEYS = ("reference", "inputs", "cores", "scaling", "repetitions", "items",
                    "cache")
CACHE_KEYS = ("input",)
REPETITION_KEYS = ("min", "max", "ci", "warmup")
ITEM_KEYS = ("metric", "cores", "points", "baseline", "bands", "linear")
MAX_REPETITIONS = 100


class _Reader:
    """One ``performance:`` block, read with every refusal naming its key."""

    def __init__(self, fs: PackageFS, gl_path: Path, shape: Shape,
                 languages: tuple[str, ...] | None) -> None:
        self.fs, self.path, self.shape, self.languages = fs, gl_path, shape, languages

    def fail(self, key: str, what: str) -> Exception:
        return self.fs.error(self.path, f"performance{'.' * bool(key)}{key}: {what}")

    def mapping(self, key: str, value: object, known: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(key, f"must be a mapping, not {value!r}")
        unknown = sorted(set(map(str, value)) - set(known))
        if unknown:
            raise self.fail(key, f"unknown keys {unknown} (known: {', '.join(known)})")
        return {str(k): v for k, v in value.items()}

    def whole(self, key: str, value: object, low: int, high: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.fail(key, f"must be a whole number from {low} to {high}, not {value!r}")
        return value

    def number(self, key: str, value: object, low: float, high: float | None = None) -> float:
        return self.fs.number(self.path, f"performance.{key}", value, low=low, high=high)

    def file(self, key: str, value: object, *, directory: bool = False) -> Path:
        """A file (or, with ``directory``, a directory) of the package, by its path."""
        if not isinstance(value, str) or not value.strip() or Path(value).is_absolute() \
                or ".." in Path(value).parts:
            raise self.fail(key, f"must be a path inside the package, not {value!r}")
        p = self.fs.root / value
        if self.fs.is_file(p) or (directory and self.fs.is_dir(p)):
            return p
        raise self.fail(key, f"{value} is not a file of the package")

    def reference(self, value: object) -> Path:
        p = self.file("reference", value, directory=True)
        try:
            sub = load_submission(p)
            detect_language(sub.files, self.languages)
        except SubmissionError as e:
            raise self.fail("reference", f"cannot be graded as a submission: {e}") from None
        return p

    def inputs(self, key: str, value: object) -> tuple[Path, ...]:
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not names:
            raise self.fail(key, f"must be a path or a list of paths (globs allowed, e.g. "
                                 f"performance/*.in), not {value!r}")
        out: list[Path] = []
        for i, name in enumerate(names):
            if isinstance(name, str) and any(c in name for c in "*?["):
                found = sorted(p for p in self.fs.root.glob(name) if self.fs.is_file(p))
                if not found:
                    raise self.fail(f"{key}[{i}]", f"{name} matches no file of the package")
                out.extend(found)
            else:
                out.append(self.file(f"{key}[{i}]", name))
        return tuple(dict.fromkeys(out))

    def cache(self, value: object) -> Path | None:
        """The cache reading's small input (None: no cache reading)."""
        if value is None:
            return None
        spec = self.mapping("cache", value, CACHE_KEYS)
        if "input" not in spec:
            raise self.fail("cache", "needs input: a small input both programs run once "
                                     "per core count under the counters (under "
                                     "cachegrind about 50 times slower: keep it tiny)")
        return self.file("cache.input", spec["input"])

    def cores(self, value: object) -> tuple[int, ...]:
        if value is None:
            return tuple(sorted({1, self.shape.cores}))
        if not isinstance(value, list) or not value:
            raise self.fail("cores", f"must be a list of core counts, e.g. [1, 2, 4], not "
                                     f"{value!r}")
        counts = [self.whole(f"cores[{i}]", c, 1, self.shape.cores)
                  for i, c in enumerate(value)]
        if any(b <= a for a, b in itertools.pairwise(counts)):
            raise self.fail("cores", f"must increase, not {counts}")
        return tuple(counts)

    def repetitions(self, value: object) -> Repetitions:
        if value is None:
            return Repetitions()
        spec = self.mapping("repetitions", value, REPETITION_KEYS)
        d = Repetitions()
        low = self.whole("repetitions.min", spec.get("min", d.min), 2, MAX_REPETITIONS)
        high = self.whole("repetitions.max", spec.get("max", max(d.max, low)), low,
                          MAX_REPETITIONS)
        ci = self.number("repetitions.ci", spec.get("ci", d.ci), 0.001, 0.5)
        warmup = self.whole("repetitions.warmup", spec.get("warmup", d.warmup), 0, 10)
        return Repetitions(low, high, ci, warmup)

    def points_map(self, key: str, value: object, kind: str, lower: bool) -> PointsMap:
        if not isinstance(value, list) or not value or not all(
                isinstance(s, list) and len(s) == 2 for s in value):
            raise self.fail(key, f"must be a list of [figure, percent] pairs, e.g. [[1.2, "
                                 f"100], [1.5, 50]], not {value!r}")
        steps = [(self.number(f"{key}[{i}][0]", x, 0.0),
                  self.number(f"{key}[{i}][1]", p, 0.0, 100.0))
                 for i, (x, p) in enumerate(value)]
        if kind == "bands":  # best first, whichever order they were written in
            steps.sort(key=lambda s: s[0], reverse=not lower)
        try:
            return PointsMap("bands" if kind == "bands" else "linear", tuple(steps), lower)
        except ValueError as e:
            raise self.fail(key, str(e)) from None

    def item(self, i: int, value: object, cores: tuple[int, ...], scaling: str) -> Item:
        key = f"items[{i}]"
        spec = self.mapping(key, value, ITEM_KEYS)
        metric = spec.get("metric")
        if metric not in METRICS:
            raise self.fail(f"{key}.metric", f"must be one of {list(METRICS)}, not {metric!r}")
        at = self.whole(f"{key}.cores", spec.get("cores", cores[-1]), 1, 4096)
        if at not in cores:
            raise self.fail(f"{key}.cores", f"{at} is not measured (cores: {list(cores)})")
        if metric in SCALING_METRICS and 1 not in cores:
            raise self.fail(f"{key}.metric", f"{metric} divides a time on one core: add 1 "
                                             "to cores")
        if metric == "speedup" and scaling == "weak":
            raise self.fail(f"{key}.metric", "speedup is a strong-scaling figure; for weak "
                                             "scaling score efficiency")
        baseline = spec.get("baseline", "self")
        if baseline not in BASELINES:
            raise self.fail(f"{key}.baseline", f"must be one of {list(BASELINES)}, not "
                                               f"{baseline!r}")
        kinds = [k for k in ("bands", "linear") if k in spec]
        if len(kinds) != 1:
            raise self.fail(key, "needs exactly one of bands (thresholds) or linear (a "
                                 "piecewise-linear map)")
        scale = self.points_map(f"{key}.{kinds[0]}", spec[kinds[0]], kinds[0],
                                metric in LOWER_IS_BETTER)
        points = self.number(f"{key}.points", spec.get("points"), 0.0)
        return Item(metric, at, points, scale, baseline)


def read_performance(fs: PackageFS, gl: dict[str, Any], gl_path: Path, shape: Shape,
                     languages: tuple[str, ...] | None, *, interactive: bool = False
                     ) -> PerformanceSpec | None:
    """The package's performance tests (None without ``performance:``).

    :raises ProblemFormatError: naming the key and what it may be.
    """
    raw = gl.get("performance")
    if raw is None:
        return None
    r = _Reader(fs, gl_path, shape, languages)
    if interactive:
        raise r.fail("reference", "performance tests time a program reading its input; "
                                  "an interactive or multi-pass problem has none to time")
    if shape.mpi or shape.nodes > 1 or shape.gpus:
        raise r.fail("", f"performance tests time threads on one node's cores so far; "
                         f"this shape is {shape.describe()} (MPI and GPU timing are not "
                         "there yet)")
    spec = r.mapping("", raw, PERFORMANCE_KEYS)
    missing = [k for k in ("reference", "inputs", "items") if k not in spec]
    if missing:
        raise r.fail("", f"needs {', '.join(missing)} (reference, inputs and items: see "
                         "the staff guide's Performance as a grade)")
    scaling = spec.get("scaling", "strong")
    if scaling not in SCALINGS:
        raise r.fail("scaling", f"must be one of {list(SCALINGS)}, not {scaling!r}")
    cores = r.cores(spec.get("cores"))
    raw_inputs = spec["inputs"]
    if scaling == "weak":
        per = r.mapping("inputs", raw_inputs, tuple(map(str, cores))) \
            if isinstance(raw_inputs, dict) else None
        if per is None or sorted(per) != sorted(map(str, cores)):
            raise r.fail("inputs", f"weak scaling needs inputs for each core count "
                                   f"{list(cores)}, e.g. {{1: [performance/n1.in], ...}}")
        inputs = tuple((n, r.inputs(f"inputs.{n}", per[str(n)])) for n in cores)
    else:
        same = r.inputs("inputs", raw_inputs)
        inputs = tuple((n, same) for n in cores)
    raw_items = spec["items"]
    if not isinstance(raw_items, list) or not raw_items:
        raise r.fail("items", "must be a list of scoring items (metric, cores, points, "
                              "bands or linear)")
    items = tuple(r.item(i, v, cores, scaling) for i, v in enumerate(raw_items))
    return PerformanceSpec(r.reference(spec["reference"]), inputs, cores, items,
                           r.repetitions(spec.get("repetitions")), scaling,
                           r.cache(spec.get("cache")))


def versioned(version: str, spec: PerformanceSpec | None) -> str:
    """The package's version with the reference's files in it (``package_version``
    leaves out submissions/, where the reference usually lives)."""
    if spec is None:
        return version
    h = hashlib.sha256(version.encode())
    ref = spec.reference
    for p in sorted(ref.rglob("*")) if ref.is_dir() else [ref]:
        if p.is_file():
            h.update(str(p.relative_to(ref.parent)).encode() + b"\0")
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()
