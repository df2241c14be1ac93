"""``gradeline serve``: grade continuously as submissions arrive.

Theory of operation
-------------------
The server claims micro-batches from the spool and processes each in a thread of
its own (``Pipeline.stage``: intake, one Slurm array or the local workers, results
stored as they land), so several batches are in flight at once and a submission
that arrives while a long batch runs waits only for a free slot, never for that
batch (no head-of-line blocking).

* **Load on the controller is bounded**: at most ``in_flight`` batches (arrays) at
  once and at least ``submit_interval_s`` between two new ones (a second when every
  batch is one ``sbatch`` of a job array, as the Slurm high-throughput guide advises:
  few large submissions, no job per submission; a quarter second on pilots, whose
  batches are tickets in the spool).
* **Fair**: a batch takes waiting submissions round-robin over students, at most
  ``per_student`` of one student (``core.fairness``); a flood of resubmissions
  waits behind everyone else's, not in front.
* **Nothing lost, nothing twice**: a batch that ends without being finished (the
  database or Slurm was away) stays in ``cur/`` and is resumed after
  ``retry_s``; on start the server resumes every batch an earlier server left
  (after ``kill -9`` too: its arrays are waited for, their outcomes collected).
* **SIGTERM drains**: no new batch is claimed; the ones in flight finish and are
  stored; then it returns.

Micro-batches as arrays, or long-lived pilot tasks that pull work? Measured on
the local Slurm with both built (``bench/serve_load.py --count 120 --dispatch
pilots,arrays``; README, "Serving a deadline"): with one array per micro-batch,
serve at 70% of batch-mode capacity had a p95 feedback latency of 10.7 s and under
saturation reached 0.60 of batch-mode throughput; with pilots (``pipeline.slurm``:
array tasks that hold a core and a container and take the batches' work from a
shared queue, leaving after ``--pilot-idle`` seconds without any) p95 was 4.7 s
and saturation 0.91. (The first measurement, on a local cluster that deferred
every job to a 3 s scheduling pass by mistake, had arrays at 49 s and 0.39-0.48.)
Pilots are the default for Slurm (``--dispatch pilots``);
their price is a core held up to ``--pilot-idle`` seconds after the last
submission. ``--dispatch arrays`` keeps one array per batch (no core is ever
held idle; fine where the site's scheduler cycle is short).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from grader.core.errors import GradelineError
from grader.pipeline.run import Pipeline, RunSummary

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ServePolicy:
    """How the server claims and dispatches (defaults suit a shared site).

    :param batch_max: submissions per micro-batch at most.
    :param in_flight: batches in flight at once at most (each its own tickets or Slurm array).
    :param submit_interval_s: at least this long between two new batches.
    :param per_student: at most this many submissions of one student per batch
        (None: no cap; arrival order, round-robin over students either way).
    :param retry_s: wait before resuming a batch that ended unfinished.
    :param idle_exit: return once nothing waits and nothing is in flight.
    :param report_s: a progress line at most this often (0: none).
    """

    batch_max: int = 200
    in_flight: int = 4
    submit_interval_s: float = 0.25  # pilots, local; ARRAYS_SUBMIT_INTERVAL_S for arrays
    per_student: int | None = 4
    retry_s: float = 10.0
    poll_s: float = 0.25
    idle_exit: bool = False
    report_s: float = 10.0


#: between two batches when each is a Slurm job array (an sbatch each): a quarter of
#: a second suits pilots and local workers (a claim every 0.25 s: p95 added latency
#: 0.5 s at 50/s against 1.4 s with 1 s, ``bench/results/control_plane/``)
ARRAYS_SUBMIT_INTERVAL_S = 1.0


def submit_interval(given: float | None, arrays: bool) -> float:
    """The interval asked for, else the default of the dispatch."""
    if given is not None:
        return given
    return ARRAYS_SUBMIT_INTERVAL_S if arrays else ServePolicy().submit_interval_s


@dataclass
class ServeSummary:
    """What a server did: totals over its batches."""

    batches: int = 0
    failed_batches: int = 0
    total: RunSummary = field(default_factory=RunSummary)

    def add(self, s: RunSummary) -> None:
        t = self.total
        t.graded += s.graded
        t.reused += s.reused
        t.quarantined += s.quarantined
        t.stored += s.stored
        for a, by in s.verdicts.items():
            for v, n in by.items():
                t.verdicts.setdefault(a, {})[v] = t.verdicts.get(a, {}).get(v, 0) + n
        for a, scores in s.scores.items():
            t.scores.setdefault(a, []).extend(scores)


class Server:
    """Claims micro-batches of ``pipe``'s spool and keeps several in flight."""

    def __init__(self, pipe: Pipeline, policy: ServePolicy = ServePolicy(),
                 say: Callable[[str], None] = log.info) -> None:
        self.pipe, self.policy, self.say = pipe, policy, say
        self.summary = ServeSummary()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads: dict[str, threading.Thread] = {}
        self._ended: dict[str, float] = {}  # batch -> when its thread ended (for retry_s)

    def stop(self) -> None:
        """Drain: claim nothing more; what is in flight finishes (signal-safe)."""
        self._stop.set()

    def totals(self) -> tuple[ServeSummary, RunSummary]:
        """A copy of the totals so far (for metrics, from another thread)."""
        with self._lock:
            t = self.summary.total
            copy = RunSummary(graded=t.graded, reused=t.reused, quarantined=t.quarantined,
                              stored=t.stored,
                              verdicts={a: dict(v) for a, v in t.verdicts.items()})
            return ServeSummary(self.summary.batches, self.summary.failed_batches), copy

    @property
    def in_flight(self) -> int:
        return sum(t.is_alive() for t in self._threads.values())

    def serve(self) -> ServeSummary:
        """Serve until stopped (or idle, with ``idle_exit``); returns the totals."""
        p = self.policy
        t0 = time.monotonic()
        last_claim = last_report = -1e9
        while not self._stop.is_set():
            self._reap()
            now = time.monotonic()
            try:
                self._resume(now)
                if self.in_flight < p.in_flight and now - last_claim >= p.submit_interval_s:
                    name = self.pipe.claim(p.batch_max, p.per_student)
                    if name is not None:
                        last_claim = now
                        self._start(name)
                        continue
                if p.report_s and now - last_report >= p.report_s:
                    last_report = now
                    self._report(t0)
                if p.idle_exit and not self._threads and not self.pipe.spool.new_entries() \
                        and not self._resumable(now, ignore_wait=True):
                    break
            except OSError as e:  # the spool's file system (full, or away for a moment)
                log.error("serve: spool trouble (%s); trying again in %g s", e, p.retry_s / 10)
                last_claim = now
                self._stop.wait(p.retry_s / 10)
                continue
            self._stop.wait(p.poll_s)
        self.say(f"serve: draining {self.in_flight} batch(es) in flight")
        for t in list(self._threads.values()):
            t.join()
        self._reap()
        self.summary.total.elapsed_s = time.monotonic() - t0
        self._report(t0)
        return self.summary

    # -- batches -------------------------------------------------------------------
    def _start(self, name: str) -> None:
        t = threading.Thread(target=self._batch, args=(name,), name=f"batch-{name}",
                             daemon=True)
        self._threads[name] = t
        self._ended.pop(name, None)
        t.start()

    def _batch(self, name: str) -> None:
        pipe = self.pipe.fork()
        try:
            s = pipe.stage(name, ingest=True)
        except GradelineError as e:  # the database or Slurm away: a reason is enough
            log.error("batch %s failed: %s; it stays in the spool and is resumed in %g s",
                      name, e, self.policy.retry_s)
            self._failed()
            return
        except Exception:  # a bug of ours: the traceback, but the server goes on
            log.exception("batch %s failed; it stays in the spool and is resumed", name)
            self._failed()
            return
        with self._lock:
            self.summary.batches += 1
            self.summary.add(s)

    def _failed(self) -> None:
        with self._lock:
            self.summary.failed_batches += 1

    def _reap(self) -> None:
        now = time.monotonic()
        for name, t in list(self._threads.items()):
            if not t.is_alive():
                del self._threads[name]
                self._ended[name] = now

    def _resumable(self, now: float, *, ignore_wait: bool = False) -> list[str]:
        """Batches in cur/ that no thread is working on (left by an earlier server, or
        ended unfinished ``retry_s`` ago or more)."""
        out = []
        for b in self.pipe.spool.batches():
            if b.name in self._threads or self.pipe.spool.busy(b):
                continue  # ours, or another gradeline's
            ended = self._ended.get(b.name)
            if ended is None or ignore_wait or now - ended >= self.policy.retry_s:
                out.append(b.name)
        return out

    def _resume(self, now: float) -> None:
        for name in self._resumable(now):
            if self.in_flight >= self.policy.in_flight:
                return
            self.say(f"serve: resuming batch {name}")
            self._start(name)

    def _report(self, t0: float) -> None:
        t = self.summary.total
        self.say(f"serve: {len(self.pipe.spool.new_entries())} waiting, {self.in_flight} "
                 f"batch(es) in flight; {self.summary.batches} done: graded {t.graded}, "
                 f"reused {t.reused}, quarantined {t.quarantined}, stored {t.stored} "
                 f"({time.monotonic() - t0:.0f} s)")
