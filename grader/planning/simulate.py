"""A discrete-event model of gradeline on a cluster, driven by what gradeline measured.

Why SimPy: the model is a handful of cooperating processes (the serve loop that
claims micro-batches, pilots that pull tickets, students that think and resubmit),
which SimPy's generator processes express directly; Ciw is built around queueing
networks with routing matrices, and the claim/ticket/flush mechanics do not fit its
nodes without custom classes; salabim's licence and animation stack are more than
this needs. SimPy is small, pure Python and maintained.

What is modelled, following ``pipeline/serve.py`` and ``pipeline/slurm/submit/pool.py``:

* **claim**: the serve loop polls the spool every ``poll_s`` and claims everything
  waiting (at most ``batch_max``) when ``submit_interval_s`` has passed since its last
  claim and fewer than ``in_flight`` batches are open;
* **intake**: a claimed batch costs an intake delay (measured: claimed -> dispatched),
  then is cut into guided tickets (``pool.ticket_sizes``);
* **pilots**: one per core, each pulls a ticket and grades its submissions in order;
  an idle pilot polls every ``pilot_poll_s`` and leaves after ``pilot_idle_s``; a new
  one costs ``pilot_start_s`` (Slurm dispatch plus container start);
* **service**: a submission's grading time is drawn from the measured times of its
  assignment, multiplied by the node's inflation ``k / S(k)`` with k cores of the node
  busy (S(N) from a campaign; S(k) = k when unknown), plus the measured gap between
  two submissions of a ticket;
* **store**: a result is stored after the measured storing delay; the batch closes
  when its last result is stored.

Open traces replay their arrival times; closed traces make each student wait for the
result plus the row's think time before the next attempt (as ``trace replay --mode
closed``).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import simpy

from grader.core.errors import SubmissionError
from grader.core.submission import load_submission
from grader.pipeline.serve import ServePolicy
from grader.pipeline.slurm.submit.pool import ticket_sizes
from grader.pipeline.slurm.tickets import PilotSpec
from grader.planning.demands import Demands
from grader.planning.trace import TraceRow

_SERVE, _PILOT = ServePolicy(), PilotSpec()

#: a SimPy process body
Proc = Generator[simpy.Event, Any, None]


@dataclass(frozen=True, slots=True)
class Layout:
    """The cluster and the serve policy (defaults: ``ServePolicy``'s and ``PilotSpec``'s,
    the ones ``gradeline serve`` runs with)."""

    nodes: int = 1
    cores: int = 1
    inflation: Mapping[int, float] = field(default_factory=dict)
    poll_s: float = _SERVE.poll_s
    submit_interval_s: float = _SERVE.submit_interval_s
    batch_max: int = _SERVE.batch_max
    in_flight: int = _SERVE.in_flight
    pilot_poll_s: float = _PILOT.poll_s
    pilot_idle_s: float = _PILOT.idle_s
    # CPU seconds the serving side spends per submission (intake, store) on the same
    # cores as the pilots -- as on a one-machine setup; 0 where serve has its own host
    host_cpu_s: float = 0.0
    # Cores the control plane's CPU work (``host_cpu_s`` per submission: half at intake,
    # half at store) queues for, FIFO: its ceiling is host_cores / host_cpu_s
    # submissions/s (``bench/control_plane.py``); 0: not a resource (the work only
    # slows grading, as above)
    host_cores: int = 0

    def multiplier(self, busy: int) -> float:
        if not self.inflation or busy <= 1:
            return 1.0
        return self.inflation[min(busy, max(self.inflation))]


@dataclass(slots=True)
class SimulatedRun:
    """One simulated run: per submission arrival and stored time."""

    arrived: list[float]
    stored: list[float]
    busy_s: float
    cores: int

    @property
    def responses(self) -> np.ndarray:
        out: np.ndarray = np.asarray(self.stored) - np.asarray(self.arrived)
        return out

    @property
    def makespan_s(self) -> float:
        return max(self.stored) - min(self.arrived)

    def summary(self) -> dict[str, float]:
        r = self.responses
        return {"mean": float(r.mean()), "p50": float(np.percentile(r, 50)),
                "p95": float(np.percentile(r, 95)), "p99": float(np.percentile(r, 99)),
                "max": float(r.max()), "makespan": self.makespan_s,
                "throughput": len(r) / self.makespan_s if self.makespan_s > 0 else math.inf,
                "utilization": self.busy_s / (self.cores * self.makespan_s)
                if self.makespan_s > 0 else 0.0}


class _Model:
    """The processes of one replication."""

    def __init__(self, demands: Demands, layout: Layout, rows: Sequence[TraceRow],
                 closed: bool, seed: int, keys: Sequence[str | None]) -> None:
        self.env = simpy.Environment()
        self.d, self.lay, self.rows, self.closed = demands, layout, rows, closed
        self.keys = keys
        self.rng = random.Random(seed)  # noqa: S311 -- a simulation, not secrets
        self.pooled = demands.pooled()
        self.spool: list[int] = []  # submissions arrived, not yet claimed
        self.tickets: simpy.Store = simpy.Store(self.env)
        self.open_batches = 0
        self.busy = [0] * layout.nodes
        self.busy_s = 0.0
        self.arrived = [math.nan] * len(rows)
        self.stored = [math.nan] * len(rows)
        self.done_events: dict[int, simpy.Event] = {}
        self.live_pilots = [False] * (layout.nodes * layout.cores)
        self.host_work: list[tuple[float, float]] = []  # (time, cpu seconds)
        self.host = simpy.Resource(self.env, layout.host_cores) if layout.host_cores else None
        self.kick = self.env.event()
        self.busy_pickup = float(np.median(demands.pickup)) if demands.pickup else 0.0

    # -- submissions ----------------------------------------------------------------
    def arrive(self, i: int) -> None:
        self.arrived[i] = self.env.now
        self.spool.append(i)
        self.done_events[i] = self.env.event()
        self.wake()

    def open_loop(self) -> Proc:
        for i, row in sorted(enumerate(self.rows), key=lambda t: t[1].time):
            if row.time > self.env.now:
                yield self.env.timeout(row.time - self.env.now)
            self.arrive(i)

    def student(self, idx: list[int]) -> Proc:
        first = self.rows[idx[0]].time
        if first > 0:
            yield self.env.timeout(first)
        for n, i in enumerate(idx):
            if n:
                yield self.env.timeout(self.rows[i].think_s)
            self.arrive(i)
            yield self.done_events[i]

    # -- serve ----------------------------------------------------------------------
    def wake(self) -> None:
        """Something serve waits for happened (an arrival, a batch closed)."""
        if not self.kick.triggered:
            self.kick.succeed()

    def serve(self) -> Proc:
        """Serve's loop, event-driven rather than ticking: it sleeps until there is work
        and room for a batch, then claims at its next poll tick no earlier than
        ``submit_interval_s`` after its last claim -- the same instants as polling
        every ``poll_s``, at a fraction of the events."""
        last = -math.inf
        poll = self.lay.poll_s
        while True:
            while not (self.spool and self.open_batches < self.lay.in_flight):
                self.kick = self.env.event()
                yield self.kick
            now = self.env.now
            at = max(now, last + self.lay.submit_interval_s)
            if poll > 0:
                at = math.ceil(at / poll - 1e-9) * poll
            if at > now:
                yield self.env.timeout(at - now)
            if not (self.spool and self.open_batches < self.lay.in_flight):
                continue
            batch = self.spool[:self.lay.batch_max]
            del self.spool[:len(batch)]
            self.host_work.append((self.env.now, self.lay.host_cpu_s * len(batch) / 2))
            last = self.env.now
            self.open_batches += 1
            self.env.process(self.dispatch(batch))

    def dispatch(self, batch: list[int]) -> Proc:
        yield self.env.timeout(self.rng.choice(self.d.intake))
        yield from self.host_cpu(self.lay.host_cpu_s * len(batch) / 2)
        pilots = self.lay.nodes * self.lay.cores
        at = 0
        for k in ticket_sizes(len(batch), pilots):
            self.tickets.put(batch[at:at + k])
            at += k
        for p in range(pilots):
            if not self.live_pilots[p]:
                self.live_pilots[p] = True
                self.env.process(self.pilot(p, cold=True))
        yield simpy.AllOf(self.env, [self.done_events[i] for i in batch])
        self.open_batches -= 1
        self.wake()

    def pilot(self, p: int, cold: bool) -> Proc:
        node = p // self.lay.cores
        if cold:
            yield self.env.timeout(self.d.pilot_start_s)
        while True:
            get = self.tickets.get()
            idle = self.env.timeout(self.lay.pilot_idle_s)
            asked = self.env.now
            got = yield get | idle
            if got is None or get not in got:
                get.cancel()
                self.live_pilots[p] = False
                return
            ticket: list[int] = list(get.value or ())
            cold = self.env.now > asked
            yield self.env.timeout(self.pickup(idle=cold))
            for n, i in enumerate(ticket):
                if n:
                    yield self.env.timeout(self.d.gap)
                self.busy[node] += 1
                factor = self.d.cold_factor if cold and n == 0 else 1.0
                s = (self.service(i) * factor * self.lay.multiplier(self.busy[node])
                     / (1 - self.host_share()))
                yield self.env.timeout(s)
                self.busy[node] -= 1
                self.busy_s += s
                self.env.process(self.store(i))

    def pickup(self, *, idle: bool) -> float:
        """From a ticket in the queue to its first submission's start: an idle pilot
        notices it at its next poll and reads it (the measured pickups); a busy one
        takes the next ticket at once (the measured pickup less the mean poll wait)."""
        poll = self.lay.pilot_poll_s
        if not self.d.pickup:
            return self.rng.uniform(0, poll) if idle else 0.0
        if idle:
            return self.rng.choice(self.d.pickup)
        return max(0.0, self.busy_pickup - poll / 2)

    def host_share(self, window_s: float = 10.0) -> float:
        """The share of the cores the serving side used in the last ``window_s``
        (processor sharing: a pilot's grading slows by 1 / (1 - share))."""
        if not self.lay.host_cpu_s:
            return 0.0
        t0 = self.env.now - window_s
        while self.host_work and self.host_work[0][0] < t0:
            self.host_work.pop(0)
        used = sum(c for _, c in self.host_work)
        return min(used / (window_s * self.lay.nodes * self.lay.cores), 0.5)

    def service(self, i: int) -> float:
        """The submission's own measured time when it was measured (trace-driven),
        else a draw from its assignment's measured times."""
        key = self.keys[i] if i < len(self.keys) else None
        if key is not None and key in self.d.by_content:
            return self.d.by_content[key]
        mine = self.d.service.get(self.rows[i].assignment)
        return self.rng.choice(mine) if mine else self.rng.choice(self.pooled)

    def host_cpu(self, seconds: float) -> Proc:
        """``seconds`` of the control plane's CPU on its ``host_cores`` (queued)."""
        if self.host is None or seconds <= 0:
            return
        with self.host.request() as req:
            yield req
            yield self.env.timeout(seconds)

    def store(self, i: int) -> Proc:
        yield self.env.timeout(self.rng.choice(self.d.storing))
        yield from self.host_cpu(self.lay.host_cpu_s / 2)
        if self.lay.host_cpu_s:
            self.host_work.append((self.env.now, self.lay.host_cpu_s / 2))
        self.stored[i] = self.env.now
        self.done_events[i].succeed()

    def run(self) -> SimulatedRun:
        if self.closed:
            per: dict[str, list[int]] = defaultdict(list)
            for i, row in enumerate(self.rows):
                per[row.student].append(i)
            for idx in per.values():
                self.env.process(self.student(idx))
        else:
            self.env.process(self.open_loop())
        self.env.process(self.serve())
        pending = [self.env.process(self._all_done())]
        self.env.run(until=pending[0])
        return SimulatedRun(self.arrived, self.stored, self.busy_s,
                       self.lay.nodes * self.lay.cores)

    def _all_done(self) -> Proc:
        while len(self.done_events) < len(self.rows):
            yield self.env.timeout(1.0)
        yield simpy.AllOf(self.env, list(self.done_events.values()))


def simulate(demands: Demands, layout: Layout, rows: Sequence[TraceRow], *,
             closed: bool = False, seed: int = 1,
             keys: Sequence[str | None] = ()) -> SimulatedRun:
    """One replication of the trace on the layout; ``keys`` are the rows' content
    hashes where known (their measured times are used as they are)."""
    if not rows:
        raise ValueError("the trace is empty")
    if layout.nodes < 1 or layout.cores < 1:
        raise ValueError("nodes and cores must be >= 1")
    return _Model(demands, layout, rows, closed, seed, keys).run()


@dataclass(frozen=True, slots=True)
class Prediction:
    """Replications' means and the spread of the p95 across them."""

    nodes: int
    cores: int
    replications: int
    mean: float
    p50: float
    p95: float
    p99: float
    makespan: float
    throughput: float
    utilization: float
    p95_ci: float  # half-width of the 95% confidence interval of the p95

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}


def predict(demands: Demands, layout: Layout, rows: Sequence[TraceRow], *,
            closed: bool = False, replications: int = 10, seed: int = 1,
            keys: Sequence[str | None] = ()) -> Prediction:
    """Mean of ``replications`` runs with seeds seed, seed+1, ... (common random
    numbers across layouts, so comparisons between core counts are not noise)."""
    sums = [simulate(demands, layout, rows, closed=closed, seed=seed + k, keys=keys).summary()
            for k in range(replications)]

    def m(key: str) -> float:
        return float(np.mean([s[key] for s in sums]))

    p95s = [s["p95"] for s in sums]
    ci = 1.96 * float(np.std(p95s, ddof=1)) / math.sqrt(len(p95s)) if len(p95s) > 1 else 0.0
    return Prediction(layout.nodes, layout.cores, replications, m("mean"), m("p50"), m("p95"),
                      m("p99"), m("makespan"), m("throughput"), m("utilization"), ci)


def smallest_layout(demands: Demands, rows: Sequence[TraceRow], target_p95_s: float, *,
                    cores_per_node: int, base: Layout, closed: bool = False,
                    replications: int = 10, max_cores: int = 4096,
                    keys: Sequence[str | None] = ()
                    ) -> tuple[int, Prediction] | None:
    """The fewest cores (nodes of ``cores_per_node``, the last one possibly smaller is
    not modelled: whole nodes) whose predicted p95 meets the target; None if even
    ``max_cores`` do not. Binary search over whole nodes."""

    def at(nodes: int) -> Prediction:
        lay = replace(base, nodes=nodes, cores=cores_per_node)
        return predict(demands, lay, rows, closed=closed, replications=replications, keys=keys)

    hi = max(1, max_cores // cores_per_node)
    top = at(hi)
    if top.p95 > target_p95_s:
        return None
    lo, best = 0, (hi, top)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        p = at(mid)
        if p.p95 <= target_p95_s:
            hi, best = mid, (mid, p)
        else:
            lo = mid
    return best[0] * cores_per_node, best[1]


def trace_keys(rows: Sequence[TraceRow], base: Path) -> list[str | None]:
    """Content hashes of the trace's submissions that exist here (trace-driven); None
    where a row names nothing readable (its assignment's times are drawn instead)."""
    out: list[str | None] = []
    for r in rows:
        p = Path(r.submission)
        p = p if p.is_absolute() else base / p
        try:
            out.append(load_submission(p).content_hash)
        except (OSError, SubmissionError):
            out.append(None)
    return out
