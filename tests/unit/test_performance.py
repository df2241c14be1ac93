"""Performance as a grade, around the pure part: ``performance:`` read with every bad
key refused by name, the package's version covering the reference, the reproducibility
facts read from a node's tree, and the timing protocol (interleaved, warm-up
discarded, stopped by the CI rule, gated) on a scripted sandbox."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grader.core.errors import ProblemFormatError, SandboxError
from grader.core.languages import get_language
from grader.core.perfcache import CacheEvents
from grader.core.perfresult import Fact
from grader.core.result import CompileResult
from grader.core.runmeta import RunMeta, TerminationReason
from grader.core.verdict import Verdict
from grader.formats.load import load_problem
from grader.formats.problem import Problem
from grader.judge.hostfacts import read_facts
from grader.judge.kattis_validators import Validators
from grader.judge.performance import Program, Timing
from grader.judge.ports import RunRequest

from ..support import EXAMPLES

ITEM = {"metric": "time_ratio", "cores": 2, "points": 50, "bands": [[1.2, 100]]}


def package(tmp_path: Path, **perf: object) -> Path:
    """primecount with its ``performance:`` keys replaced by ``perf`` (None: removed)."""
    pkg = tmp_path / "primecount"
    if not pkg.exists():
        shutil.copytree(EXAMPLES / "primecount", pkg)
    gl = yaml.safe_load((EXAMPLES / "primecount" / "gradeline.yaml").read_text())
    gl["performance"] = {k: v for k, v in {**gl["performance"], **perf}.items()
                         if v is not None}
    (pkg / "gradeline.yaml").write_text(yaml.safe_dump(gl))
    return pkg


@pytest.mark.parametrize(("perf", "why"), [
    ({"timed": 1}, "performance: unknown keys ['timed']"),
    ({"reference": None}, "performance: needs reference"),
    ({"reference": "nope.c"}, "performance.reference: nope.c is not a file"),
    ({"reference": "../x.c"}, "performance.reference: must be a path inside the package"),
    ({"reference": "problem.md"}, "performance.reference: cannot be graded as a submission"),
    ({"inputs": "performance/*.nope"}, "performance.inputs[0]: performance/*.nope matches no"),
    ({"inputs": 5}, "performance.inputs: must be a path or a list of paths"),
    ({"cores": [2, 1]}, "performance.cores: must increase"),
    ({"cores": [1, 4]}, "performance.cores[1]: must be a whole number from 1 to 2"),
    ({"scaling": "linear"}, "performance.scaling: must be one of ['strong', 'weak']"),
    ({"scaling": "weak"}, "performance.inputs: weak scaling needs inputs for each core"),
    ({"repetitions": {"min": 1}}, "performance.repetitions.min: must be a whole number "
                                  "from 2"),
    ({"repetitions": {"ci": 0.9}}, "performance.repetitions.ci must be a number >= 0.001 "
                                   "and <= 0.5"),
    ({"repetitions": {"runs": 3}}, "performance.repetitions: unknown keys ['runs']"),
    ({"items": []}, "performance.items: must be a list of scoring items"),
    ({"items": [{**ITEM, "metric": "latency"}]}, "performance.items[0].metric: must be one"),
    ({"items": [{**ITEM, "cores": 3}]}, "performance.items[0].cores: 3 is not measured"),
    ({"cores": [2], "items": [{**ITEM, "metric": "speedup"}]}, "add 1 to cores"),
    ({"items": [{**ITEM, "linear": [[1, 100]]}]}, "performance.items[0]: needs exactly one"),
    ({"items": [{**ITEM, "bands": [[1.2]]}]}, "performance.items[0].bands: must be a list "
                                              "of [figure, percent] pairs"),
    ({"items": [{**ITEM, "bands": [[1.2, 120]]}]}, "performance.items[0].bands[0][1] must "
                                                   "be a number >= 0 and <= 100"),
    ({"items": [{**ITEM, "bands": [[1.2, 50], [1.6, 100]]}]}, "cannot give more points"),
    ({"items": [{**ITEM, "points": -1}]}, "performance.items[0].points must be a number "
                                          ">= 0"),
    ({"items": [{**ITEM, "baseline": "serial"}]}, "performance.items[0].baseline: must be"),
    ({"cache": "performance/cache/small.in"}, "performance.cache: must be a mapping"),
    ({"cache": {}}, "performance.cache: needs input: a small input"),
    ({"cache": {"inputs": ["a"]}}, "performance.cache: unknown keys ['inputs']"),
    ({"cache": {"input": "nope.in"}}, "performance.cache.input: nope.in is not a file"),
])
def test_a_bad_performance_block_is_refused_naming_the_key(tmp_path: Path, perf: dict[
        str, Any], why: str) -> None:
    pkg = package(tmp_path, **perf)
    before = (pkg / "gradeline.yaml").read_text()
    with pytest.raises(ProblemFormatError, match=r"gradeline\.yaml") as e:
        load_problem(pkg)
    assert why in str(e.value)
    assert (pkg / "gradeline.yaml").read_text() == before


def test_mpi_and_gpu_shapes_have_no_performance_tests_yet(tmp_path: Path) -> None:
    pkg = package(tmp_path)
    gl = yaml.safe_load((pkg / "gradeline.yaml").read_text())
    gl["resources"] = {"cores": 2, "nodes": 2, "ranks": 2}
    (pkg / "gradeline.yaml").write_text(yaml.safe_dump(gl))
    with pytest.raises(ProblemFormatError, match=r"performance: .*\(MPI and GPU timing"):
        load_problem(pkg)


def test_weak_scaling_reads_inputs_per_core_count(tmp_path: Path) -> None:
    weak = {"scaling": "weak", "inputs": {1: "performance/timed.in",
                                          2: ["performance/*.in"]}}
    pkg = package(tmp_path, **weak, items=[{"metric": "efficiency", "cores": 2,
                                            "points": 10, "linear": [[0.5, 0], [1, 100]]}])
    spec = load_problem(pkg).performance
    assert spec is not None and spec.scaling == "weak"
    assert [p.name for p in spec.inputs_at(2)] == ["timed.in"]
    with pytest.raises(ProblemFormatError, match="speedup is a strong-scaling figure"):
        load_problem(package(tmp_path, **weak, items=[{**ITEM, "metric": "speedup"}]))


def test_the_performance_tests_count_in_the_full_phase_only(tmp_path: Path) -> None:
    p = load_problem(package(tmp_path))
    assert p.performance is not None and p.performance.points == 100
    assert p.max_score == 200 and p.performance.cores == (1, 2)
    part = p.restricted(["sample"])
    assert part.performance is None and part.max_score == 0 and part.phase == "part"
    ref = p.path / "submissions/accepted/parallel.c"
    ref.write_text(ref.read_text() + "/* faster now */\n")
    assert load_problem(p.path).version != p.version  # a new reference: new grades
    assert load_problem(EXAMPLES / "bigsum").performance is None


def node(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


QUIET = {"sys/devices/system/cpu/online": "0-3",
         "proc/self/cgroup": "0::/slurm/job_7\n",
         "sys/fs/cgroup/slurm/job_7/cpuset.cpus.effective": "2-3",
         "sys/devices/system/cpu/cpu2/topology/thread_siblings_list": "2",
         "sys/devices/system/cpu/cpu3/topology/thread_siblings_list": "3",
         "sys/devices/system/cpu/cpu2/cpufreq/scaling_governor": "performance",
         "sys/devices/system/cpu/cpu3/cpufreq/scaling_governor": "performance",
         "sys/devices/system/cpu/intel_pstate/no_turbo": "1",
         "sys/fs/resctrl/info/L3/cbm_mask": "fff",
         "sys/fs/resctrl/gradeline_job_7/cpus_list": "2-3",
         "sys/fs/resctrl/gradeline_job_7/schemata": "L3:0=00f",
         "proc/sys/kernel/randomize_va_space": "0",
         "sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never",
         "proc/swaps": "Filename Type Size Used Priority\n",
         "proc/loadavg": "1.50 1.2 1.0 3/200 999"}


def test_a_quiet_pinned_node_has_every_fact_in_force(tmp_path: Path) -> None:
    facts = read_facts([2, 3], node(tmp_path, QUIET))
    assert [f.name for f in facts] == ["cores", "smt", "l3_partition", "governor", "turbo",
                                       "aslr", "thp", "swap", "load"]
    assert all(f.in_force for f in facts), facts
    assert "gradeline_job_7 (L3:0=00f)" in facts[2].value


def test_a_busy_shared_node_says_what_is_not_in_force(tmp_path: Path) -> None:
    busy = {**QUIET, "sys/fs/cgroup/slurm/job_7/cpuset.cpus.effective": "0-3",
            "sys/devices/system/cpu/cpu2/topology/thread_siblings_list": "0,2",
            "sys/devices/system/cpu/cpu3/cpufreq/scaling_governor": "powersave",
            "sys/devices/system/cpu/intel_pstate/no_turbo": "0",
            "proc/sys/kernel/randomize_va_space": "2",
            "sys/kernel/mm/transparent_hugepage/enabled": "[always] madvise never",
            "proc/swaps": "Filename Type\n/swap file 1 0 -2\n", "proc/loadavg": "5.1 4 3 9/9 1"}
    del busy["sys/fs/resctrl/gradeline_job_7/cpus_list"]
    facts = {f.name: f for f in read_facts([2, 3], node(tmp_path, busy))}
    assert [n for n, f in facts.items() if f.in_force is False] == list(facts)
    assert "CPU 2 shares its core with 0" in facts["smt"].value
    assert facts["governor"].value == "performance, powersave"
    vm = {f.name: f.in_force for f in read_facts([0], node(tmp_path / "vm", {
        "sys/devices/system/cpu/online": "0-1", "proc/loadavg": "0.1 0 0 1/1 1"}))}
    assert vm["governor"] is None and vm["turbo"] is None and vm["smt"] is None
    assert vm["load"] is True and vm["l3_partition"] is False


class Scripted:
    """A sandbox whose runs take the times a script gives, per program and core count,
    and print ``answer``; it logs (program, cores, OMP_NUM_THREADS) of every run."""

    runtime = "scripted"

    def __init__(self, times: Callable[[str, int, int], float], answer: str = "33860",
                 fail: str = "", aslr: bool = True) -> None:
        self.times, self.answer, self.fail, self.aslr = times, answer, fail, aslr
        self.log: list[tuple[str, int, str]] = []

    def own(self, path: Path) -> None:
        pass

    def run(self, req: RunRequest) -> RunMeta:
        if list(req.argv) == ["setarch", "-R", "true"]:  # the probe: ASLR can be off
            return RunMeta(0 if self.aslr else 1, None, 0.0, 0.001)
        who = "reference" if req.workdir.parent.name.startswith("ref-") else "submission"
        cores = len(req.cpus or ())
        if req.argv[0] == "sim":  # the cache reading's simulator (``Simulated``)
            return self.simulate(req, who, cores)
        assert (req.argv[0] == "setarch") is self.aslr
        k = sum(1 for w, c, _ in self.log if (w, c) == (who, cores))
        self.log.append((who, cores, req.env["OMP_NUM_THREADS"]))
        req.stdout.write_text((self.answer if who == "submission" else "33860") + "\n")
        t = self.times(who, cores, k)
        if who == self.fail:
            return RunMeta(None, 9, t, t, termination=TerminationReason.WALL_TIME)
        return RunMeta(0, None, t, t)


    #: (program, cores) -> L3 misses of its cache run (None: the run fails); whether the
    #: image has the simulator; the cache runs: (program, cores, L3 bytes, env)
    misses: Callable[[str, int], float | None] = staticmethod(lambda who, n: 1000.0 * n)
    has_simulator = True
    cache_log: list[tuple[str, int, int, dict[str, str]]]

    def simulate(self, req: RunRequest, who: str, cores: int) -> RunMeta:
        if req.argv[1] == "--version":
            return RunMeta(0 if self.has_simulator else 127, None, 0.0, 0.001)
        self.cache_log = [*getattr(self, "cache_log", []),
                          (who, cores, int(req.argv[1]), dict(req.env))]
        (bind,) = req.binds
        assert bind.target == "/gl/counters" and bind.writable
        misses = self.misses(who, cores)
        if misses is None:
            return RunMeta(None, 9, 9.0, 9.0, termination=TerminationReason.WALL_TIME)
        (bind.source / "counts").write_text(str(misses))
        return RunMeta(0, None, 0.1, 0.1)


class Simulated:
    """A cache counter that runs ``sim L3 argv`` in the sandbox (``ports.CacheCounter``)."""

    source = "cachegrind"
    note = "a simulated L3"
    probe = ("sim", "--version")

    def wrap(self, argv: Sequence[str], l3_bytes: int) -> list[str]:
        return ["sim", str(l3_bytes), *argv]

    def counting(self, cpus: Sequence[int], out: Path) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()

    def read(self, out: Path) -> CacheEvents:
        return CacheEvents(float((out / "counts").read_text()))


def timing(tmp_path: Path, box: Scripted, counter: Simulated | None = None
           ) -> tuple[Timing, Problem, Program]:
    problem = load_problem(package(tmp_path))
    lang = get_language("c")
    work = tmp_path / "work"
    (work / "sub" / "out").mkdir(parents=True)
    sub = Program("submission", ("./a.out",), work / "sub", work / "sub" / "out",
                  lang.limits(problem.limits), (("PATH", "/bin"),))
    t = Timing(box, Validators(box, work, [0, 1]), work, [0, 1],  # type: ignore[arg-type]
               lambda *_: CompileResult(ok=True),
               lambda cpus: (Fact("aslr", "on (randomize_va_space 2)", False),),
               counter=counter, l3_per_core=lambda cpu: 4 << 20)
    return t, problem, sub


def test_the_programs_run_interleaved_until_the_ci_is_tight(tmp_path: Path) -> None:
    # the reference takes 1 s on one core, 0.5 s on two; the submission 1 s on both,
    # within 1 % but for a slow first (warm-up) run of each
    box = Scripted(lambda who, n, k: 3.0 if k == 0 else
                   (1.0 if who == "submission" or n == 1 else 0.5) * (1 + 0.01 * (k % 2)))
    t, problem, sub = timing(tmp_path, box)
    perf = t.measure(problem, sub, Verdict.AC, tmp_path / "work")
    assert perf is not None and perf.gate == ""
    assert [w for w, _, _ in box.log] == ["reference", "submission"] * 8
    assert all(omp == str(n) for _, n, omp in box.log)
    one, two = perf.measurements
    assert (one.cores, one.cpus, two.cpus) == (1, (0,), (0, 1))
    assert one.reference.runs == one.submission.runs == 3  # min, the warm-up discarded
    assert 3.0 not in one.reference.times_s + two.submission.times_s
    assert [i.figure for i in perf.items] == pytest.approx([2.0, 0.5])
    assert one.facts == (Fact("aslr", "off for each timed run (setarch -R)", True),)
    assert perf.points == 10  # twice the reference's time: 20 % of 50; efficiency 0.5: 0


def test_a_noisy_series_runs_to_the_maximum(tmp_path: Path) -> None:
    box = Scripted(lambda who, n, k: 1.0 + 0.5 * (k % 2), aslr=False)
    t, problem, sub = timing(tmp_path, box)
    perf = t.measure(problem, sub, Verdict.AC, tmp_path / "work")
    assert perf is not None and [m.submission.runs for m in perf.measurements] == [6, 6]
    assert perf.not_in_force == ("aslr",)  # an image without setarch: the node's
    assert perf.items[0].figure == pytest.approx(1.0) and perf.points == 50


def test_correctness_and_timed_runs_gate_the_points(tmp_path: Path) -> None:
    box = Scripted(lambda who, n, k: 1.0)
    t, problem, sub = timing(tmp_path, box)
    wa = t.measure(problem, sub, Verdict.WA, tmp_path / "work")
    assert wa is not None and wa.points == 0 and "not accepted on the tests (WA)" in wa.gate
    assert box.log == [] and wa.measurements == ()
    assert t.measure(problem.restricted(["secret"]), sub, Verdict.AC, tmp_path) is None
    wrong = Scripted(lambda who, n, k: 1.0, answer="33861")
    t, problem, sub = timing(tmp_path / "w", wrong)
    perf = t.measure(problem, sub, Verdict.AC, tmp_path / "work")
    assert perf is not None and perf.points == 0
    assert perf.gate.startswith("timed run on timed.in at 1 core: wrong answer")
    slow = Scripted(lambda who, n, k: 1.0, fail="submission")
    t, problem, sub = timing(tmp_path / "s", slow)
    perf = t.measure(problem, sub, Verdict.AC, tmp_path / "work")
    assert perf is not None and "wall time" in perf.gate and perf.points == 0


def test_a_timed_submission_gets_a_cache_reading_per_core_count(tmp_path: Path) -> None:
    box = Scripted(lambda who, n, k: 1.0)
    box.misses = lambda who, n: 1000.0 * n * n if who == "submission" else 1000.0
    t, problem, sub = timing(tmp_path, box, Simulated())
    perf = t.measure(problem, sub, Verdict.AC, tmp_path / "work")
    assert perf is not None and perf.cache is not None and perf.cache.failed == ""
    assert perf.points == 50  # the reading scores nothing
    assert [(w, n, l3) for w, n, l3, _ in box.cache_log] == [
        ("reference", 1, 4 << 20), ("submission", 1, 4 << 20),
        ("reference", 2, 8 << 20), ("submission", 2, 8 << 20)]  # the L3 per core times N
    assert all(env["OMP_NUM_THREADS"] == str(n) and env["OMP_WAIT_POLICY"] == "PASSIVE"
               for _, n, _, env in box.cache_log)
    assert perf.cache.input == "small.in" and "a simulated L3 of 4 MiB per core" in \
        perf.cache.note
    assert perf.cache.inflations("submission") == ((1, 1.0), (2, 4.0))
    assert [c.l3_bytes for c in perf.cache.counts] == [4 << 20, 8 << 20]

    wa = t.measure(problem, sub, Verdict.WA, tmp_path / "work")
    assert wa is not None and wa.cache is None and len(box.cache_log) == 4  # not timed


def test_a_cache_reading_that_cannot_be_taken_says_why_and_costs_no_points(
        tmp_path: Path) -> None:
    box = Scripted(lambda who, n, k: 1.0)
    box.misses = lambda who, n: None if (who, n) == ("submission", 2) else 10.0
    t, problem, sub = timing(tmp_path, box, Simulated())
    perf = t.measure(problem, sub, Verdict.AC, tmp_path / "work")
    assert perf is not None and perf.points == 50 and perf.cache is not None
    assert [c.cores for c in perf.cache.counts] == [1]
    assert perf.cache.failed.startswith("the submission's run on small.in at 2 cores: ")
    assert "wall" in perf.cache.failed
    bare = Scripted(lambda who, n, k: 1.0)
    bare.has_simulator = False
    t, problem, sub = timing(tmp_path / "b", bare, Simulated())
    perf = t.measure(problem, sub, Verdict.AC, tmp_path / "work")
    assert perf is not None and perf.cache is not None and perf.cache.counts == ()
    assert perf.cache.failed.startswith("the grading image has no sim")
    t, problem, sub = timing(tmp_path / "n", Scripted(lambda who, n, k: 1.0))
    perf = t.measure(problem, sub, Verdict.AC, tmp_path / "work")
    assert perf is not None and perf.cache is None  # a judge without counters


def test_a_failing_reference_is_the_packages_fault(tmp_path: Path) -> None:
    t, problem, sub = timing(tmp_path, Scripted(lambda who, n, k: 1.0, fail="reference"))
    with pytest.raises(SandboxError, match="performance reference's timed run"):
        t.measure(problem, sub, Verdict.AC, tmp_path / "work")


ANY = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 5) | st.floats() | st.text(max_size=6)
    | st.sampled_from(["performance/*.in", "performance/timed.in", "time_ratio",
                       "efficiency", "speedup", "weak", "self", 1e300, 2**64]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["metric", "cores", "points", "bands", "linear", "baseline", "min",
                         "max", "ci", "warmup", "1", "2"]), inner, max_size=3),
    max_leaves=8)


@settings(max_examples=120, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(["inputs", "cores", "scaling", "repetitions",
                                        "items", "colour"]), ANY, max_size=3))
def test_a_performance_block_of_any_data_loads_or_names_its_place(tmp_path: Path,
                                                                   perf: dict[str, Any]
                                                                   ) -> None:
    pkg = package(tmp_path, **perf)
    try:
        p = load_problem(pkg)
    except ProblemFormatError as e:
        assert "gradeline.yaml" in str(e) and "performance" in str(e), str(e)
    else:
        assert p.performance is not None and p.performance.items
        assert all(i.cores in p.performance.cores for i in p.performance.items)
