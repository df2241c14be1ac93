"""The timing protocol of an assignment's performance tests (``core.perfspec``), run
after the correctness tests, in the same allocation:

for each core count N, the reference and the submission run **interleaved**
(reference, submission, reference, ...), each pinned to the first N of the shape's
cores with ``OMP_NUM_THREADS=N``; ``warmup`` rounds are discarded, then rounds repeat
until both series' 95 % confidence interval (t-distribution) is within ``ci`` of
their mean (at least ``min``, at most ``max`` rounds). The first output of each
program at each N is checked against the input's ``.ans`` where the package has one.
Each N records the facts that make its timing reproducible (``judge.hostfacts``).

Correctness gates it: a submission not accepted on the tests is not timed at all. A
failed timed run of the submission ends the timing and earns no performance points;
one of the reference is the package's fault (``SandboxError``: judge error). Only the
full phase times: a problem restricted to some groups has no performance tests. A
timed submission gets the test's cache reading after it (``judge.cachecount``).
"""

from __future__ import annotations

import shutil
import tempfile
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from grader.core.errors import SandboxError, SubmissionError
from grader.core.languages import Language, detect_language
from grader.core.limits import Limits
from grader.core.perfresult import Fact, Measurement, Performance, Series
from grader.core.perfscore import enough, score
from grader.core.result import CompileResult, SubmissionResult
from grader.core.runmeta import describe_termination
from grader.core.submission import load_submission
from grader.core.verdict import Verdict
from grader.formats.problem import Problem, TestCase, TestGroup
from grader.judge import hostfacts, parallel
from grader.judge.cachecount import Cache
from grader.judge.kattis import add_included, entry_class, link_or_copy
from grader.judge.kattis_validators import Validators
from grader.judge.ports import DEFAULT_ENV, CacheCounter, RunRequest, Sandbox

#: validators' indices for timed outputs, apart from the tests'
INDEX_BASE = 1_000_000
#: a timed run starts without address-space randomisation (the image's util-linux),
#: so its layout, and what it costs in caches and TLBs, is the same every run
NO_ASLR = ("setarch", "-R")
#: compiles a program: (problem, language, files, build, out, own) -> its result
Compile = Callable[[Problem, Language, Sequence[str], Path, Path, Sequence[str]],
                   CompileResult]
Facts = Callable[[Sequence[int]], tuple[Fact, ...]]


@dataclass(frozen=True, slots=True)
class Program:
    """A compiled program ready to time: what to run, where, within which limits."""

    name: str  # "reference" or "submission", for messages
    argv: tuple[str, ...]
    build: Path
    out: Path  # where its outputs go
    limits: Limits
    env: tuple[tuple[str, str], ...]
    writable: bool = False


def program(name: str, problem: Problem, lang: Language, files: Sequence[str],
            entry: str | None, own: Sequence[str], build: Path, out: Path) -> Program:
    """``name``'s runs as the tests run it (the language's limits and environment)."""
    limits = lang.limits(problem.limits.slower(lang.time_multiplier))
    argv = lang.run_argv(files, problem.compile_flags.get(lang.id),
                         memory_bytes=limits.memory_bytes, entry=entry, own=own)
    return Program(name, tuple(argv), build, out, limits,
                   tuple({**DEFAULT_ENV, **lang.env}.items()), problem.allow_file_writing)


class Timing:
    """Times submissions against their problem's reference on one judge's sandbox.

    :param compile: the judge's compile (cached), for the reference.
    :param facts: reads the reproducibility facts for a set of CPUs.
    :param counter: the node's counters for cache readings (None: none are taken).
    """

    def __init__(self, sandbox: Sandbox, validators: Validators, workroot: Path,
                 cpus: Sequence[int], compile: Compile,
                 facts: Facts = hostfacts.read_facts, counter: CacheCounter | None = None,
                 l3_per_core: Callable[[int], int | None] = hostfacts.l3_per_core) -> None:
        self.sandbox, self.validators, self.workroot = sandbox, validators, workroot
        self.cpus, self.compile, self.facts = list(cpus), compile, facts
        self.cache = Cache(sandbox, counter, l3_per_core)
        self._references: dict[str, Program] = {}
        self.no_aslr: bool | None = None  # whether the image turns it off (probed once)
        self._dirs: list[Path] = []

    def close(self) -> None:
        """Remove the references compiled here."""
        for d in self._dirs:
            shutil.rmtree(d, ignore_errors=True)
        self._dirs.clear()
        self._references.clear()

    def measured(self, problem: Problem, result: SubmissionResult, lang: Language,
                 files: Sequence[str], entry: str | None, own: Sequence[str], work: Path
                 ) -> SubmissionResult:
        """``result`` with its performance section and points (as it is when the problem
        has none or this is a part phase); the submission was built in the judge's
        ``work/build``, its outputs go to ``work/out``."""
        t0 = time.monotonic()
        sub = program("submission", problem, lang, files, entry, own, work / "build",
                      work / "out")
        perf = self.measure(problem, sub, result.verdict, work)
        if perf is None:
            return result
        took = time.monotonic() - t0
        timing = {**result.timing, "performance_s": round(took, 6),
                  "total_s": round(result.timing.get("total_s", 0.0) + took, 6)}
        return replace(result, score=result.score + perf.points, performance=perf,
                       timing=timing)

    def measure(self, problem: Problem, sub: Program, verdict: Verdict, work: Path
                ) -> Performance | None:
        """The performance section of ``sub``'s result (None: the problem has no
        performance tests, or this is a part phase)."""
        spec = problem.performance
        if spec is None or problem.phase == "part":
            return None
        if verdict is not Verdict.AC:
            return score(spec, [], f"not accepted on the tests ({verdict.value}): "
                                   "performance is scored for correct programs only")
        ref = self.reference(problem)
        cpus = parallel.run_cpus(problem.shape, self.cpus)
        done: list[Measurement] = []
        for n in spec.cores:
            m, gate = self._at(problem, n, tuple(cpus[:n]), ref, sub, work)
            done.append(m)
            if gate:
                return score(spec, done, gate)
        return replace(score(spec, done), cache=self.cache.read(problem, (ref, sub), cpus))

    def _at(self, problem: Problem, n: int, cpus: tuple[int, ...], ref: Program,
            sub: Program, work: Path) -> tuple[Measurement, str]:
        """Both programs at ``n`` cores, interleaved; (measurement, why the submission
        earns nothing, or "")."""
        spec = problem.performance
        assert spec is not None
        inputs = spec.inputs_at(n)
        facts = tuple(Fact("aslr", f"off for each timed run ({' '.join(NO_ASLR)})", True)
                      if f.name == "aslr" and self.no_aslr else f for f in self.facts(cpus))
        times: dict[str, list[float]] = {"reference": [], "submission": []}
        reps = spec.repetitions
        first = True
        for _ in range(reps.warmup):
            for p in (ref, sub):
                _, why = self._run(problem, p, inputs, n, cpus, work, check=first)
                if why:
                    return Measurement(n, cpus, Series(()), Series(()), facts), why
            first = False
        while not enough(Series(tuple(times["reference"])), Series(tuple(times["submission"])),
                         reps):
            for p in (ref, sub):
                t, why = self._run(problem, p, inputs, n, cpus, work, check=first)
                if why:
                    return Measurement(n, cpus, Series(tuple(times["reference"])),
                                       Series(tuple(times["submission"])), facts), why
                times[p.name].append(t)
            first = False
        return Measurement(n, cpus, Series(tuple(times["reference"])),
                           Series(tuple(times["submission"])), facts), ""

    def _run(self, problem: Problem, p: Program, inputs: Sequence[Path], n: int,
             cpus: tuple[int, ...], work: Path, *, check: bool) -> tuple[float, str]:
        """One timed run of ``p``: its wall time summed over the inputs, or why it
        failed (the reference's failure raises: the package's fault)."""
        total = 0.0
        env = {**dict(p.env), "OMP_NUM_THREADS": str(n)}
        for k, path in enumerate(inputs):
            stdin, stdout = p.out / "perf.in", p.out / "perf.out"
            link_or_copy(path, stdin)
            argv = [*NO_ASLR, *p.argv] if self.no_aslr else list(p.argv)
            meta = self.sandbox.run(RunRequest(
                argv, p.build, p.limits, stdout=stdout, stderr=p.out / "perf.err",
                stdin=stdin, cpus=list(cpus), workdir_writable=p.writable, env=env))
            why = "" if meta.ok else describe_termination(meta, p.limits)
            if not why and check:
                why = self._check(problem, path, stdout, work, k)
            if why:
                why = f"timed run on {path.name} at {n} core{'s' * (n != 1)}: {why}"
                if p.name == "reference":
                    raise SandboxError(f"{problem.short_name}: the performance reference's "
                                       f"{why} (fix the package: gradeline check)")
                return 0.0, why
            total += meta.wall_time_s
        return total, ""

    def _check(self, problem: Problem, path: Path, stdout: Path, work: Path, k: int) -> str:
        """Why the output on a timed input is wrong ("" when right or unchecked)."""
        answer = path.with_suffix(".ans")
        if not answer.is_file():
            return ""
        case = TestCase(f"performance/{path.stem}", "performance", path, answer)
        group = TestGroup("performance", 0.0, "proportional", (), (case,))
        v = self.validators.validate(problem, group, case, stdout, work, INDEX_BASE + k)
        if v.accepted is None:
            raise SandboxError(f"validating a timed output: {v.judge_error}")
        return "" if v.accepted else f"wrong answer ({v.feedback[:200]})"

    def reference(self, problem: Problem) -> Program:
        """The reference, compiled once per problem version and kept for the next
        submissions graded here."""
        got = self._references.get(problem.version)
        if got is not None:
            return got
        spec = problem.performance
        assert spec is not None
        try:
            ref = load_submission(spec.reference)
            lang = detect_language(ref.files, problem.languages)
        except SubmissionError as e:
            raise SandboxError(f"{problem.short_name}: the performance reference: {e}") from e
        # this judge's own directory: others on the node share the work root
        root = Path(tempfile.mkdtemp(prefix=f"ref-{problem.short_name}-", dir=self.workroot))
        self._dirs.append(root)
        weakref.finalize(self, shutil.rmtree, root, True)  # when the judge goes
        build, out = root / "build", root / "out"
        build.mkdir(mode=0o755)
        out.mkdir(mode=0o700)
        root.chmod(0o711)
        ref.copy_to(build)
        files = add_included(problem, lang.id, build, ref.files)
        self.sandbox.own(root)
        comp = self.compile(problem, lang, files, build, out, ref.files)
        if not comp.ok:
            raise SandboxError(f"{problem.short_name}: the performance reference does not "
                               f"compile: {comp.judge_error or comp.output[:500]}")
        entry = entry_class(lang, files, build, ref.files)
        got = program("reference", problem, lang, files, entry, ref.files, build, out)
        self._references[problem.version] = got
        if self.no_aslr is None:
            probe = self.sandbox.run(RunRequest([*NO_ASLR, "true"], build, got.limits,
                                                stdout=out / "probe.out",
                                                stderr=out / "probe.err", cpus=self.cpus[:1]))
            self.no_aslr = probe.ok
        return got
