"""A performance test's cache reading (``core.perfcache``), taken after its timing:
the reference and the submission run once per core count on the test's small input
(``cache: {input: ...}``), pinned to the same first N of the shape's cores, under the
node's counters (``ports.CacheCounter``): hardware counters of those cores where the
node has them, otherwise cachegrind in the sandbox with a simulated L3 of the L3 per
core (the node's L3 over the CPUs sharing it, ``hostfacts.l3_per_core``) times N, the
share N cores of a shared L3 get.

Kept cheap: one run per program and core count, on an input the package keeps tiny
(cachegrind runs a program about 50 times slower), each within its own bounded time.
A reading never gates points: a run that fails ends it with the reason
(``CacheReading.failed``), and the test's points stand.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from grader.core.limits import MIB, Limits
from grader.core.perfcache import CacheCount, CacheEvents, CacheReading
from grader.core.runmeta import describe_termination
from grader.formats.problem import Problem
from grader.judge.kattis import link_or_copy
from grader.judge.ports import COUNTERS, Bind, CacheCounter, RunRequest, Sandbox

#: how much slower a program runs under a simulator, for its time limit; and the most
#: seconds one cache run may take whatever the test's limit (the input is small)
SLOWDOWN, MOST_S = 50.0, 120.0
#: the simulated L3 per core where the node does not say its L3's size (an Intel
#: server's slice)
ASSUMED_L3_PER_CORE = int(2.5 * MIB)


class Cache:
    """Takes cache readings with one judge's sandbox and the node's counter.

    :param counter: the node's counters (None: this judge takes no readings).
    :param l3_per_core: the share of one CPU of its L3 (``hostfacts.l3_per_core``).
    """

    def __init__(self, sandbox: Sandbox, counter: CacheCounter | None,
                 l3_per_core: Callable[[int], int | None]) -> None:
        self.sandbox, self.counter, self.l3_per_core = sandbox, counter, l3_per_core
        self._in_image: bool | None = None  # the simulator's probe, run once

    def read(self, problem: Problem, programs: Sequence[_Program], cpus: Sequence[int]
             ) -> CacheReading | None:
        """The reading of ``programs`` (the reference's, then the submission's) on
        ``problem``'s cache input at each of its core counts; None without one."""
        spec, counter = problem.performance, self.counter
        if spec is None or spec.cache_input is None or counter is None:
            return None
        per_core = self.l3_per_core(cpus[0]) if cpus else None
        note = counter.note
        if counter.probe:
            if per_core is None:
                per_core = ASSUMED_L3_PER_CORE
                note += f" (the node does not say its L3's size: {_mib(per_core)} per " \
                        "core assumed)"
            else:
                note += f" of {_mib(per_core)} per core times the cores"
        reading = CacheReading(counter.source, note, spec.cache_input.name)
        if not self._has_simulator(counter, programs[0]):
            return replace(reading, failed=f"the grading image has no {counter.probe[0]} "
                                           "(gradeline image build makes one that has)")
        counts: list[CacheCount] = []
        for n in spec.cores:
            l3 = (per_core or 0) * n
            got: list[CacheEvents] = []
            for p in programs:
                events, why = self._run(counter, p, spec.cache_input, tuple(cpus[:n]), l3)
                if events is None:
                    return replace(reading, counts=tuple(counts),
                                   failed=f"the {p.name}'s run on {spec.cache_input.name} "
                                          f"at {n} core{'s' * (n != 1)}: {why}")
                got.append(events)
            ref, sub = got
            counts.append(CacheCount(n, sub, ref, l3 if counter.probe else None))
        return replace(reading, counts=tuple(counts))

    def _has_simulator(self, counter: CacheCounter, p: _Program) -> bool:
        if not counter.probe:
            return True
        if self._in_image is None:
            meta = self.sandbox.run(RunRequest(list(counter.probe), p.build, p.limits,
                                               stdout=p.out / "probe.out",
                                               stderr=p.out / "probe.err"))
            self._in_image = meta.ok
        return self._in_image

    def _run(self, counter: CacheCounter, p: _Program, given: Path, cpus: tuple[int, ...],
             l3_bytes: int) -> tuple[CacheEvents | None, str]:
        """One counted run of ``p``: its counts, or None and why not."""
        out = p.out / f"counters-{len(cpus)}"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(mode=0o700)
        self.sandbox.own(out)
        stdin = p.out / "cache.in"
        link_or_copy(given, stdin)
        env = {**dict(p.env), "OMP_NUM_THREADS": str(len(cpus))}
        if counter.probe:  # a simulator runs one thread at a time: waiting threads
            env["OMP_WAIT_POLICY"] = "PASSIVE"  # must sleep, not spin
        with counter.counting(cpus, out):
            meta = self.sandbox.run(RunRequest(
                counter.wrap(p.argv, l3_bytes), p.build, _limits(p.limits, counter),
                stdout=p.out / "cache.out", stderr=p.out / "cache.err", stdin=stdin,
                cpus=list(cpus), workdir_writable=p.writable, env=env,
                binds=[Bind(out, COUNTERS, writable=True)]))
        if not meta.ok:
            return None, describe_termination(meta, p.limits) or "it failed"
        try:
            return counter.read(out), ""
        except ValueError as e:
            return None, f"nothing counted ({e})"


class _Program(Protocol):
    """What the cache reading needs of a program (``judge.performance.Program``)."""

    @property
    def name(self) -> str: ...
    @property
    def argv(self) -> tuple[str, ...]: ...
    @property
    def build(self) -> Path: ...
    @property
    def out(self) -> Path: ...
    @property
    def limits(self) -> Limits: ...
    @property
    def env(self) -> tuple[tuple[str, str], ...]: ...
    @property
    def writable(self) -> bool: ...


def _limits(limits: Limits, counter: CacheCounter) -> Limits:
    """A cache run's: the test's own under hardware counters; under a simulator its
    time times ``SLOWDOWN`` (at most ``MOST_S``) and room for the simulator itself."""
    if not counter.probe:
        return limits
    t = min(limits.cpu_time_s * SLOWDOWN, MOST_S)
    return replace(limits, cpu_time_s=t, cpu_time_hard_s=None, wall_time_s=None,
                   memory_bytes=None if limits.memory_bytes is None else
                   2 * limits.memory_bytes + 256 * MIB,
                   runtime_bytes=limits.runtime_bytes + 256 * MIB,
                   reserve_bytes=limits.reserve_bytes + 1024 * MIB)


def _mib(n: int) -> str:
    return f"{n / MIB:g} MiB"
