"""Pilot tasks: tickets are taken once, a dead pilot's ticket is given back (and
dropped after repeated deaths, as JE), pilots leave when idle, and the pool starts
no more pilots than it may. The scheduler here is an in-memory stand-in whose
"tasks" are threads running the real pilot loop; tests/slurm runs them on Slurm."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from grader.adapters.scheduler.base import SchedulerError, TaskState
from grader.core.cpuset import CpuSet
from grader.core.jobs import GradingJob, JudgeFault, Outcome
from grader.formats.load import load_problem
from grader.formats.problem import Problem
from grader.pipeline.slurm.node.pilot import idle_poll_s, run_pilot
from grader.pipeline.slurm.node.task import run_shard
from grader.pipeline.slurm.shards import ArrayDir, Shard
from grader.pipeline.slurm.submit.pool import PilotExecutor, PilotPool, ticket_sizes
from grader.pipeline.slurm.tickets import PilotSpec, SickReports, Tickets, read_spec
from grader.settings import SlurmTask

from ..support import EXAMPLES, FakeExecutor


@pytest.fixture
def bigsum() -> Problem:
    return load_problem(EXAMPLES / "bigsum")


SPEC = PilotSpec(pilots=2, idle_s=0.5, poll_s=0.02, submit_interval_s=0.0, max_attempts=2)


class ThreadScheduler:
    """Each submitted pilot array runs its tasks as threads of the real pilot loop."""

    name = "threads"

    def __init__(self, runner, die_on: set[str] | None = None) -> None:
        self.runner, self.die_on = runner, die_on or set()
        self.jobs: dict[str, dict[int, str]] = {}
        self.lock = threading.Lock()
        self.n = 0

    def submit(self, script: Path, *, env=None) -> str:
        text = script.read_text()
        tasks = int(text.split("--array=0-")[1].split()[0]) + 1
        pool = Path(text.strip().split()[-1])
        with self.lock:
            self.n += 1
            jid = str(100 + self.n)
            self.jobs[jid] = {t: "RUNNING" for t in range(tasks)}
        for t in range(tasks):
            threading.Thread(target=self._task, args=(jid, t, pool), daemon=True).start()
        return jid

    def _task(self, jid: str, t: int, pool: Path) -> None:
        state = "COMPLETED"
        try:
            run_pilot(pool, f"{jid}_{t}", self.runner(self), read_spec(pool),
                      say=lambda _: None)
        except SystemExit:
            state = "FAILED"  # died holding a ticket
        with self.lock:
            self.jobs[jid][t] = state

    def tasks(self, job_id: str) -> dict[int, TaskState]:
        with self.lock:
            return {t: TaskState(t, s) for t, s in self.jobs.get(job_id, {}).items()}

    def cancel(self, job_id: str) -> None:
        pass

    def max_array_size(self) -> int:
        return 1001

    def total_cpus(self) -> int:
        return 2


def sources(tmp_path: Path, n: int) -> list[Path]:
    out = []
    for i in range(n):
        f = tmp_path / f"s{i}" / "sum.cpp"
        f.parent.mkdir(parents=True)
        f.write_text(f"// {i}\n")
        out.append(f)
    return out


def grading(ex: FakeExecutor, die_on: set[str]):
    """A pilot's shard runner; a shard whose first job is in ``die_on`` kills the
    pilot holding it (each time: a poison shard)."""
    def runner(_sched):
        def run(shard):
            jobs = shard.jobs()
            if jobs and jobs[0].key in die_on:
                raise SystemExit(137)
            return run_shard(shard, cpus=CpuSet([0]), grade=ex.run, slurm=SlurmTask(),
                             steal=False, say=lambda _: None)
        return run
    return runner


def test_tickets_are_taken_once_and_given_back_then_dropped(tmp_path, bigsum):
    t = Tickets(tmp_path / "pool")
    t.ensure()
    a = ArrayDir.create(tmp_path / "batch")
    a.shard(0).write_jobs([GradingJob(bigsum.path, p) for p in sources(tmp_path, 1)])
    t.post("0001.b.array-0.00000", a.shard(0))
    assert t.take("p1") == "0001.b.array-0.00000"
    assert t.take("p2") is None  # one taker
    assert t.held() == [("0001.b.array-0.00000", "p1")]
    t.give_back("0001.b.array-0.00000", "p1", max_attempts=2)
    assert t.waiting() == ["0001.b.array-0.00000"] and not t.held()
    assert t.take("p2") is not None
    t.give_back("0001.b.array-0.00000", "p2", max_attempts=2)  # the second death
    assert not t.waiting() and (t.dropped / "0001.b.array-0.00000").exists()


def test_pilots_looking_at_once_spread_over_the_oldest_tickets(tmp_path, monkeypatch):
    renames = 0
    real = Path.rename

    def counted(self, target):
        nonlocal renames
        renames += 1
        return real(self, target)

    monkeypatch.setattr(Path, "rename", counted)

    def eight_pilots_at_once(spread: int) -> int:
        nonlocal renames
        t = Tickets(tmp_path / f"pool{spread}")
        t.ensure()
        for i in range(16):
            t.post(f"{i:05d}", Shard(tmp_path / "b" / "array-0", i))
        seen = t.waiting()  # what every pilot listed at the same moment
        monkeypatch.setattr(t, "waiting", lambda: list(seen))
        renames = 0
        taken = [t.take(f"4242_{i}", spread) for i in range(8)]
        assert len(set(taken)) == 8 and None not in taken
        return renames

    assert eight_pilots_at_once(1) == 36  # all at the oldest: 1 + 2 + ... + 8 renames
    assert eight_pilots_at_once(8) <= 20  # each from its own place among the oldest 8


def test_a_batch_on_pilots_gets_every_outcome_once(tmp_path, bigsum):
    ex = FakeExecutor(bigsum)
    jobs = [GradingJob(bigsum.path, p) for p in sources(tmp_path, 12)]
    pool = PilotPool(ThreadScheduler(grading(ex, set())), tmp_path / "pool", SPEC)
    outs = list(PilotExecutor(pool, tmp_path / "b1").run(jobs))
    assert sorted(o.key for o in outs) == sorted(j.key for j in jobs)
    assert sorted(ex.dispatched) == sorted(j.key for j in jobs)  # none twice
    assert pool.submitted <= SPEC.pilots  # pilots were reused for every ticket
    deadline = time.monotonic() + 30  # idle pilots leave (a loaded machine may be slow)
    while not all(s.state == "COMPLETED" for s in pool.scheduler.tasks("101").values()):
        assert time.monotonic() < deadline, pool.scheduler.tasks("101")
        time.sleep(0.1)


def test_a_finished_ticket_is_not_read_again(tmp_path, bigsum, monkeypatch):
    """The collector reads a ticket's outcomes until all it owes are in, then never
    again, however long the batch's other tickets take."""
    ex = FakeExecutor(bigsum)
    jobs = [GradingJob(bigsum.path, p) for p in sources(tmp_path, 3)]
    slow = jobs[2].key
    real_run = ex.run

    def run(batch):
        batch = list(batch)
        if any(j.key == slow for j in batch):
            time.sleep(1.0)  # the last ticket is graded a second after the others
        return real_run(batch)

    ex.run = run  # type: ignore[method-assign]
    reads: dict[int, int] = {}
    real_read = Shard.read_outcomes

    def counted(self, offset=0):
        reads[self.index] = reads.get(self.index, 0) + 1
        return real_read(self, offset)

    monkeypatch.setattr(Shard, "read_outcomes", counted)
    pool = PilotPool(ThreadScheduler(grading(ex, set())), tmp_path / "pool",
                     replace(SPEC, ticket_size=1))
    outs = list(PilotExecutor(pool, tmp_path / "b1").run(jobs))
    assert sorted(o.key for o in outs) == sorted(j.key for j in jobs)
    # the slow ticket is read for its whole second (every 20 ms), a finished one only
    # until its outcome is in (before this, each was read as often as the slow one)
    assert max(reads[0], reads[1]) < reads[2] / 2, reads


def test_a_file_system_full_while_a_pilot_claims_costs_a_retry_not_a_judge_error(
        tmp_path, bigsum, monkeypatch):
    """The first claim's write fails (ENOSPC, as when the spool's file system is full):
    the pilot tries its ticket again, and the job gets its real outcome. (A claim file
    left empty by the failed write once refused the retry as another task's claim, and
    the job ended as "its pilot ended without an outcome": a JE under the soak's
    faults.)"""
    import errno
    import io
    import os

    real_open, full = io.open, [True]

    class Full(io.StringIO):
        def close(self) -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

    def open_(file, mode="r", *args, **kwargs):
        name = os.readlink(f"/proc/self/fd/{file}") if isinstance(file, int) else str(file)
        if "/claims/" in name and "w" in mode and full[0]:
            full[0] = False
            f = real_open(file, mode, *args, **kwargs)  # made (as a full disk makes it),
            f.close()  # but its bytes cannot be written
            return Full()
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(io, "open", open_)
    ex = FakeExecutor(bigsum)
    jobs = [GradingJob(bigsum.path, p) for p in sources(tmp_path, 3)]
    pool = PilotPool(ThreadScheduler(grading(ex, set())), tmp_path / "pool",
                     replace(SPEC, ticket_size=1))
    outs = {o.key: o for o in PilotExecutor(pool, tmp_path / "b1").run(jobs)}
    assert not full[0]  # the fault happened
    assert set(outs) == {j.key for j in jobs}
    assert not [o for o in outs.values() if isinstance(o.result, JudgeFault)], outs


@pytest.mark.parametrize("links", [True, False])
def test_a_submission_is_claimed_by_one_task_and_again_by_its_own_retry(
        tmp_path, bigsum, monkeypatch, links):
    """Claims with hard links, and (``links`` False: a file system without them) with an
    exclusive create: one task of an array takes a job, its own retry takes it again."""
    import errno
    import os

    if not links:
        def no_link(*_a: object) -> None:
            raise OSError(errno.EPERM, "Operation not permitted")
        monkeypatch.setattr(os, "link", no_link)
    array = tmp_path / "array-0"
    array.mkdir()
    job = GradingJob(bigsum.path, sources(tmp_path, 1)[0])
    first, second = Shard(array, 0), Shard(array, 1)
    assert first.claim(job) and not second.claim(job) and first.claim(job)
    assert [p.name for p in (array / "claims").iterdir() if p.name.startswith(".")] == []


def test_pilots_charge_the_courses_account_under_its_live_qos(tmp_path, bigsum):
    sched = ThreadScheduler(grading(FakeExecutor(bigsum), set()))
    spec = replace(SPEC, account="cs101", qos="live")
    pool = PilotPool(sched, tmp_path / "pool", spec)
    list(PilotExecutor(pool, tmp_path / "b1").run(
        [GradingJob(bigsum.path, p) for p in sources(tmp_path, 2)]))
    script = next((tmp_path / "pool").glob("array-*/job.sbatch")).read_text().splitlines()
    assert "#SBATCH --account=cs101" in script and "#SBATCH --qos=live" in script


def test_a_poison_shard_is_dropped_as_je_and_the_rest_is_graded(tmp_path, bigsum):
    ex = FakeExecutor(bigsum)
    jobs = [GradingJob(bigsum.path, p) for p in sources(tmp_path, 4)]
    pool = PilotPool(ThreadScheduler(grading(ex, {jobs[1].key})), tmp_path / "pool",
                     SPEC)
    outs = {o.key: o for o in PilotExecutor(pool, tmp_path / "b1").run(jobs)}
    assert set(outs) == {j.key for j in jobs}
    bad = outs[jobs[1].key].result
    assert isinstance(bad, JudgeFault) and "dropped" in bad.reason
    assert all(not isinstance(outs[j.key].result, JudgeFault) for j in jobs if j != jobs[1])
    assert pool.submitted >= 2  # pilots that died were replaced


def test_a_resumed_batch_waits_for_its_tickets_then_collects(tmp_path, bigsum):
    ex = FakeExecutor(bigsum)
    jobs = [GradingJob(bigsum.path, p) for p in sources(tmp_path, 3)]
    pool = PilotPool(ThreadScheduler(grading(ex, set())), tmp_path / "pool", SPEC)
    # an earlier server posted the tickets and died before any pilot started
    a = ArrayDir.create(tmp_path / "b1")
    for i, j in enumerate(jobs):
        a.shard(i).write_jobs([j])
        pool.tickets.post(f"{i:020d}.b1.array-0.{i:05d}", a.shard(i))
    ex2 = PilotExecutor(pool, tmp_path / "b1")
    ex2.wait_active()
    assert sorted(o.key for o in ex2.collected()) == sorted(j.key for j in jobs)


def test_pilots_expected_for_a_batch_start_before_its_tickets_and_take_them(
        tmp_path, bigsum):
    ex = FakeExecutor(bigsum)
    # idle_s: the started pilots must still be there when the tickets come (at once here)
    spec = PilotSpec(pilots=2, idle_s=10.0, poll_s=0.02, submit_interval_s=0.0)
    sched = ThreadScheduler(grading(ex, set()))
    pool = PilotPool(sched, tmp_path / "pool", spec)
    pool.expect(0)
    assert sched.n == 0  # nothing to grade: no pilot
    pool.expect(5)
    assert sched.n == 1 and len(sched.tasks("101")) == 2  # before any ticket exists
    assert not pool.tickets.waiting()
    pool.expect(5)
    assert sched.n == 1  # the live pilots count: none more
    jobs = [GradingJob(bigsum.path, p) for p in sources(tmp_path, 5)]
    outs = list(PilotExecutor(pool, tmp_path / "b1").run(jobs))
    assert sorted(o.key for o in outs) == sorted(j.key for j in jobs)
    assert pool.submitted == 2  # the batch was graded by the pilots started for it


def test_no_more_pilots_are_started_than_the_work_expected(tmp_path, bigsum):
    sched = ThreadScheduler(grading(FakeExecutor(bigsum), set()))
    pool = PilotPool(sched, tmp_path / "pool", SPEC)
    pool.expect(1)
    assert pool.submitted == 1 and len(sched.tasks("101")) == 1


def test_tickets_shrink_to_single_submissions_at_the_end():
    assert ticket_sizes(3, 2) == [1, 1, 1]
    big = ticket_sizes(240, 2)
    assert sum(big) == 240 and big[0] == 30 and big[-8:] == [1] * 8
    assert big == sorted(big, reverse=True)  # large first, single submissions last


class TwoNodes(ThreadScheduler):
    """Pilot tasks land on n1 and n2 in turn (on n2 only while it is not drained); on
    n2 every ticket ends in a judge fault: its runtime is broken."""

    def __init__(self, ex: FakeExecutor, may_drain: bool = True) -> None:
        super().__init__(None)
        self.ex, self.may_drain = ex, may_drain
        self.turn = 0
        self.started: list[str] = []
        self.drained: dict[str, str] = {}

    def _task(self, jid: str, t: int, pool: Path) -> None:
        with self.lock:
            self.turn += 1
            node = "n2" if self.turn % 2 == 0 and "n2" not in self.drained else "n1"
            self.started.append(node)

        def broken(jobs):
            return (Outcome(j.key, JudgeFault("apptainer: not found"), "t0", "t1")
                    for j in jobs)

        def run(shard):
            return run_shard(shard, cpus=CpuSet([0]), slurm=SlurmTask(), steal=False,
                             grade=broken if node == "n2" else self.ex.run,
                             say=lambda _: None)

        run_pilot(pool, f"{jid}_{t}", run, read_spec(pool), say=lambda _: None, node=node)
        with self.lock:
            self.jobs[jid][t] = "COMPLETED"

    def drain(self, node: str, reason: str) -> None:
        if not self.may_drain:
            raise SchedulerError("scontrol: Invalid user for this operation")
        self.drained[node] = reason


def test_a_node_whose_runtime_broke_is_drained_and_its_work_goes_elsewhere(tmp_path, bigsum):
    ex = FakeExecutor(bigsum)
    sched = TwoNodes(ex)
    pool = PilotPool(sched, tmp_path / "pool", SPEC)
    jobs = [GradingJob(bigsum.path, p) for p in sources(tmp_path, 16)]
    outs = {o.key: o for o in PilotExecutor(pool, tmp_path / "b1").run(jobs)}
    assert set(outs) == {j.key for j in jobs}
    pool.tend(force=True)  # the pool's next pass (serve tends every second)
    assert list(sched.drained) == ["n2"]
    assert "judge faults" in sched.drained["n2"]
    assert sched.started.count("n2") == 1  # none started there after the first left
    je = [k for k, o in outs.items() if isinstance(o.result, JudgeFault)]
    assert 0 < len(je) < len(jobs)  # n2's tickets (regrade --judge-errors), the rest graded
    handled = SickReports(tmp_path / "pool").handled()
    assert [(h["node"], h["drained"]) for h in handled] == [("n2", True)]
    assert not SickReports(tmp_path / "pool").open_reports()


def test_a_sick_node_that_may_not_be_drained_is_reported(tmp_path, bigsum):
    sched = TwoNodes(FakeExecutor(bigsum), may_drain=False)
    pool = PilotPool(sched, tmp_path / "pool", SPEC)
    jobs = [GradingJob(bigsum.path, p) for p in sources(tmp_path, 12)]
    outs = list(PilotExecutor(pool, tmp_path / "b1").run(jobs))
    assert len(outs) == len(jobs)
    pool.tend(force=True)
    (h,) = SickReports(tmp_path / "pool").handled()
    assert h["node"] == "n2" and h["drained"] is False and "Invalid user" in str(h["error"])


def test_a_full_spool_keeps_the_previous_pilot_spec_and_the_server_starting(
        tmp_path, monkeypatch):
    from grader.pipeline.slurm import tickets as tk

    tk.write_spec(tmp_path, PilotSpec(idle_s=5.0))

    def full(self: Path, *a: object, **k: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full)
    tk.write_spec(tmp_path, PilotSpec(idle_s=99.0))  # no exception: serve starts
    monkeypatch.undo()
    assert read_spec(tmp_path).idle_s == 5.0
    assert [p.name for p in tmp_path.iterdir()] == ["spec.json"]


def test_idle_pilots_back_off_so_that_together_they_look_a_bounded_number_of_times():
    few, many = PilotSpec(pilots=2, poll_s=0.1), PilotSpec(pilots=64, poll_s=0.1)
    # two pilots keep looking every ~0.1 s however long they idle
    assert all(0.07 < idle_poll_s(few, k, "7_0") < 0.13 for k in range(1, 30))
    # 64 pilots back off to ~0.8 s each: ~80 looks a second in all, not 640
    waits = [idle_poll_s(many, k, "7_1") for k in range(1, 30)]
    assert waits[0] < 0.13 and all(0.6 < w < 1.0 for w in waits[4:])
    assert waits == sorted(waits[:4]) + waits[4:]  # growing first
    looks = sum(1 / idle_poll_s(many, 30, f"7_{i}") for i in range(64))
    assert 60 < looks < 110
