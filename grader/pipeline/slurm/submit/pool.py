"""Pilots, the submitting side: long-lived Slurm array tasks that pull grading work, so a batch of
``serve`` costs no Slurm dispatch of its own.

Why (measured; the serve issue's note has the commands): every array task pays
Slurm's dispatch (0.4-0.7 s from sbatch to allocation on the local Slurm, whose
batch_sched_delay is 0; up to 3 s more with Slurm's default) and its own start
(Python, the container) against 0.7-0.9 s of service per submission; a pilot pays
both once for its life. (The serve issue measured one array per micro-batch at 0.48
of batch-mode throughput under saturation, on a local cluster whose configuration
deferred every job to the next 3 s scheduling pass by mistake: see
``slurm/slurm.conf.in``.)

The ticket protocol and the pool's directory: ``slurm.tickets``. A pilot
(``slurm.node.pilot.run_pilot``) starts its container once, takes the oldest ticket,
grades what the shard still lacks (``slurm.node.task.run_shard``: outcomes appended
with fsync where the batch's collector streams them), removes the ticket, and
takes the next; after ``idle_s`` without work, or near its time limit, it exits
and frees its core. A requeued pilot (its node was lost) first finishes the
tickets it holds.

The submitting side (``PilotPool.tend``, called by every batch waiting for
outcomes) keeps up to ``pilots`` pilot tasks pending or running while tickets
wait, and gives back tickets held by a pilot that is no longer running (after
``max_attempts`` pilots died on one, it is dropped: a poison shard must not
kill every pilot in turn).
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from grader.adapters.scheduler.base import Scheduler, SchedulerError
from grader.adapters.scheduler.script import ArrayRequest, array_script
from grader.core.jobs import GradingJob, JudgeFault, Outcome
from grader.core.samples import ShardSample
from grader.core.shape import SERIAL, Shape
from grader.pipeline.shapes import by_shape
from grader.pipeline.slurm.shards import ArrayDir, Shard, batch_outcomes, batch_samples
from grader.pipeline.slurm.tickets import PilotSpec, SickReports, Tickets, pilot_command, write_spec

log = logging.getLogger(__name__)

#: A pilot that took a ticket is alive in these states; in any other its tickets
#: are given back (pending = requeued after its node was lost).
ALIVE = frozenset({"RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "STOPPED",
                   "RESIZING", "SIGNALING", "STAGE_OUT"})
#: States of a pilot that still holds (or will hold) a core.
LIVE = ALIVE | {"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED"}


class PilotPool:
    """Keeps pilots alive while tickets wait and recovers dead pilots' tickets
    (one per spool; every batch of a ``serve`` shares it)."""

    def __init__(self, scheduler: Scheduler, root: Path, spec: PilotSpec | None = None,
                 shape: Shape = SERIAL) -> None:
        self.scheduler, self.root, self.spec = scheduler, root, spec or PilotSpec()
        self.shape = shape
        self._shaped: dict[Shape, PilotPool] = {}
        self.tickets = Tickets(root)
        self.tickets.ensure()
        write_spec(root, self.spec)
        self._lock = threading.Lock()
        self._last_tend = 0.0
        self._last_submit = -1e9
        self._ended: set[str] = set()  # pilot arrays seen final
        self.submitted = 0

    def for_shape(self, shape: Shape) -> PilotPool:
        """The pool of ``shape``'s pilots (``core.shape``): each an allocation of that
        shape, so a parallel assignment never grades on a one-core pilot nor a serial
        one on a wide pilot; ``shape-<key>/`` beside this pool's tickets, with at most
        as many pilots as this pool's cores hold."""
        if shape == self.shape:
            return self
        with self._lock:
            pool = self._shaped.get(shape)
            if pool is None:
                spec = replace(self.spec, pilots=max(1, self.spec.pilots // shape.cpus))
                pool = self._shaped[shape] = PilotPool(
                    self.scheduler, self.root / f"shape-{shape.key}", spec, shape)
            return pool

    def pools(self) -> list[PilotPool]:
        """This pool and those of the shapes it has started."""
        with self._lock:
            return [self, *self._shaped.values()]

    def tend(self, force: bool = False) -> None:
        """At most once per poll interval: give back dead pilots' tickets, then start
        pilots for the tickets that wait."""
        with self._lock:
            now = time.monotonic()
            if not force and now - self._last_tend < 1.0:
                return
            self._last_tend = now
            try:
                states = self._states()
            except SchedulerError as e:
                log.warning("pilots: cannot query Slurm (%s); trying again", e)
                return
            for name, pilot in self.tickets.held():
                if states.get(pilot) not in ALIVE:
                    try:
                        self.tickets.give_back(name, pilot, self.spec.max_attempts)
                    except OSError as e:  # the spool is full: it stays taken until next time
                        log.warning("pilots: cannot give back %s yet: %s", name, e)
            self._drain_sick()
            if now - self._last_submit >= self.spec.submit_interval_s:
                self._top_up(states, len(self.tickets.waiting()))

    def _drain_sick(self) -> None:
        """Drain a node once a pilot left it because its tickets kept ending in judge
        faults, or ``sick_after`` pilots could not start grading there (the tickets go
        to pilots elsewhere); where this account may not drain, say so: staff see it
        in ``gradeline status``."""
        sick = SickReports(self.root)
        for node, reports in sick.open_reports().items():
            if not any(r.get("kind") == "faults" for r in reports) and \
                    len({r["pilot"] for r in reports}) < self.spec.sick_after:
                continue
            reason = f"gradeline: {len(reports)} pilot(s) failed here: {reports[-1]['reason']}"
            outcome: dict[str, object] = {"node": node, "reason": reason, "at": time.time(),
                                          "pilots": sorted(str(r["pilot"]) for r in reports)}
            try:
                self.scheduler.drain(node, reason)
                outcome["drained"] = True
                log.error("pilots: node %s drained (%s)", node, reason)
            except SchedulerError as e:
                outcome.update(drained=False, error=str(e))
                log.error("pilots: node %s cannot grade (%s) and could not be drained: %s; "
                          "ask an admin to drain it", node, reason, e)
            sick.handle(node, outcome)

    def expect(self, jobs: int) -> None:
        """Work for ``jobs`` submissions is about to be posted: start its pilots now,
        so that Slurm's scheduling, the pilots' start and their container's start
        overlap the batch's intake instead of following it (measured: intake of 240
        submissions takes ~0.7 s, and a pilot ~0.6 s from sbatch to its first grading).
        Pilots that then find nothing leave after ``idle_s`` (or ``close`` cancels them)."""
        if jobs <= 0:
            return
        with self._lock:
            try:
                states = self._states()
            except SchedulerError as e:
                log.warning("pilots: cannot query Slurm (%s); they start with the tickets", e)
                return
            self._top_up(states, jobs)

    def _top_up(self, states: dict[str, str], work: int) -> None:
        """Start pilots up to ``min(pilots, work)``, counting the live ones."""
        live = sum(1 for s in states.values() if s in LIVE)
        want = min(self.spec.pilots, work) - live
        if want > 0:
            self._submit(want)
            self._last_submit = time.monotonic()

    def live(self) -> int:
        """Pilot tasks queued or running, of every shape (what the metrics report; asks
        Slurm)."""
        with self._lock:
            try:
                own = sum(1 for st in self._states().values() if st in LIVE)
            except SchedulerError:
                own = 0
            shaped = list(self._shaped.values())
        return own + sum(p.live() for p in shaped)

    def pending(self) -> set[str]:
        """Tickets queued or taken (under the lock: a ticket given back moves from
        taken/ to queue/ and must not look finished in between)."""
        with self._lock:
            return set(self.tickets.waiting()) | {n for n, _ in self.tickets.held()}

    def _states(self) -> dict[str, str]:
        """``<job>_<task>`` -> state of every pilot task not known to have ended."""
        out: dict[str, str] = {}
        for a in ArrayDir.all(self.root):
            job = a.job()
            if job is None:
                continue
            jid = str(job["job_id"])
            if jid in self._ended:
                continue
            tasks = self.scheduler.tasks(jid)
            if not tasks or all(t.final for t in tasks.values()):
                self._ended.add(jid)
            for t in tasks.values():
                out[f"{jid}_{t.task_id}"] = t.state
        return out

    def _submit(self, n: int) -> None:
        a = ArrayDir.create(self.root)
        request = ArrayRequest(
            name="gradeline-pilot", tasks=n, cpus_per_task=1, minutes=self.spec.minutes,
            output=a.log_pattern, partition=self.spec.partition, account=self.spec.account,
            qos=self.spec.qos)
        if not self.shape.serial:
            request = request.for_shape(self.shape)
        a.script.write_text(array_script(request, pilot_command(self.root)))
        try:
            job = self.scheduler.submit(a.script)
        except SchedulerError as e:
            log.warning("pilots: sbatch failed (%s); trying again", e)
            return
        a.save_job(job, n, 0)
        self.submitted += n
        log.info("pilots: started %d (job %s)", n, job)

    def close(self) -> None:
        """Cancel pilots when no work is left for them (another server's tickets keep
        them); idle pilots would leave by themselves after ``idle_s`` anyway."""
        for pool in list(self._shaped.values()):
            pool.close()
        if self.tickets.waiting() or self.tickets.held():
            return
        for a in ArrayDir.all(self.root):
            job = a.job()
            if job is not None and str(job["job_id"]) not in self._ended:
                with contextlib.suppress(SchedulerError):
                    self.scheduler.cancel(str(job["job_id"]))


class PilotFactory:
    """The ExecutorFactory of a server on pilots: every batch shares one pool."""

    def __init__(self, pool: PilotPool,
                 progress: Callable[[int, int], None] | None = None) -> None:
        self.pool, self.progress = pool, progress

    def __call__(self, batch_dir: Path) -> PilotExecutor:
        return PilotExecutor(self.pool, batch_dir, self.progress)

    def expect(self, jobs: int) -> None:
        self.pool.expect(jobs)

    def close(self) -> None:
        self.pool.close()


def ticket_sizes(n: int, pilots: int) -> list[int]:
    """Submissions per ticket, in the order pilots take them: guided self-scheduling
    (each ticket a quarter of the remaining work per pilot), so tickets start large (few
    files) and shrink to single submissions at the end, and no pilot is left grading a
    large last ticket while the others idle (measured: equal 15-submission tickets cost
    ~5% of a 240-submission batch on two cores at its end)."""
    sizes: list[int] = []
    left = n
    while left > 0:
        k = max(1, math.ceil(left / (4 * max(1, pilots))))
        sizes.append(k)
        left -= k
    return sizes


class PilotExecutor:
    """The Executor port on pilot tasks: one batch's jobs as tickets of its own."""

    def __init__(self, pool: PilotPool, batch_dir: Path,
                 progress: Callable[[int, int], None] | None = None) -> None:
        self.pool, self.batch_dir, self.progress = pool, batch_dir, progress
        self._pools: dict[str, PilotPool] = {}  # ticket -> the pool of its shape

    def _mine(self) -> list[str]:
        """This batch's tickets anywhere in the pool (of any shape)."""
        tag = f".{self.batch_dir.name}."
        out = []
        for pool in self.pool.pools():
            t = pool.tickets
            out += [n for n in t.waiting() if tag in n] + [n for n, _ in t.held() if tag in n]
        return out

    def wait_active(self) -> None:
        """A resumed batch: wait until tickets an earlier server posted are graded
        (pilots are started for them and dead ones' tickets given back meanwhile)."""
        while self._mine():
            for pool in self.pool.pools():
                pool.tend()
            time.sleep(self.pool.spec.poll_s * 5)

    def collected(self) -> Iterator[Outcome]:
        """Outcomes already on disk from earlier arrays (after a crash of the caller)."""
        return batch_outcomes(self.batch_dir)

    def samples(self) -> list[ShardSample]:
        return batch_samples(self.batch_dir)

    def run(self, jobs: Sequence[GradingJob]) -> Iterator[Outcome]:
        if not jobs:
            return
        names: dict[str, Shard] = {}
        owed: dict[str, int] = {}
        for shape, group in by_shape(jobs).items():  # each shape's tickets to its pilots
            pool = self.pool.for_shape(shape)
            fixed = pool.spec.ticket_size
            sizes = [fixed] * math.ceil(len(group) / fixed) if fixed else \
                ticket_sizes(len(group), pool.spec.pilots)
            array = ArrayDir.create(self.batch_dir)
            stamp = time.time_ns()
            starts = [sum(sizes[:i]) for i in range(len(sizes))]
            for i, (a, k) in enumerate(zip(starts, sizes, strict=True)):
                shard = array.shard(i)
                shard.write_jobs(group[a:a + k])
                name = f"{stamp:020d}.{self.batch_dir.name}.{array.path.name}.{i:05d}"
                names[name], owed[name] = shard, len(group[a:a + k])
                pool.tickets.post(name, shard)
                self._pools[name] = pool
            pool.tend(force=True)
        yield from self._collect(names, {j.key: j for j in jobs}, owed)

    def _collect(self, names: dict[str, Shard], jobs: dict[str, GradingJob],
                 owed: dict[str, int]) -> Iterator[Outcome]:
        """Stream each ticket's outcomes as its pilot appends them. A ticket whose
        ``owed`` outcomes are all in is not read again: re-reading every finished
        ticket ten times a second was most of a server's CPU at 100/s."""
        done: set[str] = set()
        offsets = {n: 0 for n in names}
        open_tickets = dict(names)

        def sweep(which: Iterable[str]) -> Iterator[Outcome]:
            for n in which:
                outs, offsets[n] = names[n].read_outcomes(offsets[n])
                for o in outs:
                    if o.key in jobs and o.key not in done:
                        done.add(o.key)
                        owed[n] -= 1
                        yield o
                        if self.progress:
                            self.progress(len(done), len(jobs))
                if owed[n] <= 0:
                    open_tickets.pop(n, None)

        last_check = time.monotonic()
        while len(done) < len(jobs):
            yield from sweep(list(open_tickets))
            now = time.monotonic()
            if now - last_check >= 1.0:
                last_check = now
                pools = {id(p): p for p in self._pools.values()}.values()
                pending: set[str] = set()
                for pool in pools:
                    pool.tend()
                    pending |= pool.pending()
                for n in [n for n in open_tickets if n not in pending]:
                    dropped = (self._pools[n].tickets.dropped / n).exists()
                    yield from sweep([n])  # the pilot wrote every outcome before removing it
                    missing = [j for j in self._jobs_of(names[n]) if j.key not in done]
                    open_tickets.pop(n, None)
                    for j in missing:
                        done.add(j.key)
                        reason = ("dropped: the pilots holding it died" if dropped
                                  else "its pilot ended without an outcome for it")
                        yield Outcome(j.key, JudgeFault(f"not graded: {reason}"))
            time.sleep(self.pool.spec.poll_s)

    @staticmethod
    def _jobs_of(shard: Shard) -> list[GradingJob]:
        try:
            return shard.jobs()
        except (OSError, ValueError, KeyError, TypeError):
            return []
