"""The pipeline's logic with an in-memory store and executor: no PostgreSQL, no
sandbox, no Slurm. (tests/store and tests/slurm run the same paths for real.)"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import pytest

from grader.adapters.spool import Spool
from grader.core.cpuset import CpuSet
from grader.core.errors import StoreError
from grader.core.jobs import GradingJob, Outcome
from grader.core.record import SubmissionRecord
from grader.core.samples import Sample, ShardSample
from grader.core.verdict import Verdict
from grader.formats.load import load_problem
from grader.formats.problem import Problem
from grader.pipeline import dedupe
from grader.pipeline.journal import Journal
from grader.pipeline.regrade import regrade
from grader.pipeline.run import Pipeline
from grader.pipeline.slurm.node.task import OK, OUR_FAULT, SUBMISSION_FAULT, run_shard
from grader.pipeline.slurm.shards import ArrayDir
from grader.settings import SlurmTask

from ..support import EXAMPLES, FakeExecutor, MemoryStore, fake_result

SUBS = EXAMPLES / "bigsum" / "submissions"


@pytest.fixture
def bigsum() -> Problem:
    return load_problem(EXAMPLES / "bigsum")


@pytest.fixture
def course(tmp_path: Path) -> Spool:
    spool = Spool(tmp_path / "spool", create=True)
    src = (SUBS / "accepted/sum.cpp").read_text()
    for student, text in [("ann", src), ("bob", src), ("cid", src + "// WRONG\n"),
                          ("dee", src + "// mine\n")]:
        f = tmp_path / student / "sum.cpp"
        f.parent.mkdir()
        f.write_text(text)
        spool.submit(course="c", assignment="bigsum", student=student, path=f)
    spool.submit(course="c", assignment="nosuch", student="eve", path=SUBS / "accepted/sum.cpp")
    return spool


def make_pipeline(spool: Spool, problem: Problem, store: MemoryStore | None,
                  executor: FakeExecutor, **kw: bool) -> Pipeline:
    return Pipeline(spool, {"bigsum": problem}, open_store=(lambda: store) if store else None,
                    executor=lambda _batch: executor, **kw)


def test_every_entry_ends_graded_or_quarantined_exactly_once(course, bigsum):
    store, ex = MemoryStore(), FakeExecutor(bigsum)
    s = make_pipeline(course, bigsum, store, ex).run()
    assert (s.graded, s.reused, s.quarantined, s.stored) == (3, 1, 1, 4)
    assert len(ex.dispatched) == 3  # ann and bob are identical: graded once
    assert len(list(course.dir("done").iterdir())) == 4
    assert len(list(course.dir("quarantine").iterdir())) == 1 and not course.batches()
    recs = {r.student: r for r in store.subs.values()}
    assert recs["eve"].state == "quarantined" and recs["eve"].quarantine_code == \
        "unknown-assignment"
    assert recs["cid"].result.verdict is Verdict.WA and recs["dee"].result.verdict is Verdict.AC
    follower = next(r for r in (recs["ann"], recs["bob"]) if r.reused_from)
    leader = recs["bob"] if follower is recs["ann"] else recs["ann"]
    assert follower.reused_from == leader.spool_id and "reused" in follower.result.message
    assert leader.dispatched_at and leader.started_at == "t0" and leader.finished_at == "t1"
    assert all(r.result.submission == f"spool:{r.spool_id}" for r in recs.values() if r.result)
    assert not any((e / "src").exists() for e in course.dir("done").iterdir())
    # a second run finds nothing to do
    again = make_pipeline(course, bigsum, store, ex).run()
    assert (again.graded, again.stored) == (0, 0) and len(ex.dispatched) == 3


def test_each_record_is_stored_once_when_nothing_fails(course, bigsum):
    # as results land they are stored; the batch's end stores only what is left
    store = MemoryStore()
    make_pipeline(course, bigsum, store, FakeExecutor(bigsum)).run()
    assert len(store.times_stored) == 5 and set(store.times_stored.values()) == {1}


class PrestartFactory:
    """An executor factory that is told the batch's size before intake (as pilots are)."""

    def __init__(self, ex: FakeExecutor) -> None:
        self.ex, self.told = ex, []

    def __call__(self, _batch: Path) -> FakeExecutor:
        return self.ex

    def expect(self, jobs: int) -> None:
        self.told.append((jobs, len(self.ex.dispatched)))


def test_an_executor_that_starts_slowly_is_told_the_batch_size_before_grading(course,
                                                                             bigsum):
    ex = FakeExecutor(bigsum)
    factory = PrestartFactory(ex)
    s = Pipeline(course, {"bigsum": bigsum}, open_store=None, executor=factory).run()
    assert s.graded == 3
    assert factory.told == [(5, 0)]  # every claimed entry, before any was dispatched


def test_identical_content_stored_by_an_earlier_batch_is_reused(course, bigsum, tmp_path):
    store, ex = MemoryStore(), FakeExecutor(bigsum)
    make_pipeline(course, bigsum, store, ex).run()
    first = next(r for r in store.subs.values() if r.student == "ann")
    course.submit(course="c", assignment="bigsum", student="fay", path=tmp_path / "ann")
    s = make_pipeline(course, bigsum, store, ex).run()
    assert (s.graded, s.reused) == (0, 1) and len(ex.dispatched) == 3
    fay = next(r for r in store.subs.values() if r.student == "fay")
    assert fay.reused_from in (first.spool_id, first.reused_from)


def test_without_dedupe_everything_is_graded(course, bigsum):
    ex = FakeExecutor(bigsum)
    s = make_pipeline(course, bigsum, MemoryStore(), ex, dedupe=False).run()
    assert (s.graded, s.reused) == (4, 0) and len(ex.dispatched) == 4


def test_store_down_keeps_results_in_the_journal_until_it_is_back(course, bigsum):
    store, ex = MemoryStore(), FakeExecutor(bigsum)
    store.down = True
    s = make_pipeline(course, bigsum, store, ex).run()
    assert s.pending_batches and s.stored == 0 and s.graded == 3
    (batch,) = course.batches()
    assert len(Journal(batch).read()) == 5 and len(course.batch_entries(batch)) == 4
    store.down = False
    s2 = make_pipeline(course, bigsum, store, ex).run()
    assert (s2.graded, s2.stored) == (0, 4) and len(ex.dispatched) == 3
    assert not course.batches() and len(store.subs) == 5


def test_no_store_configured_is_the_same_as_down(course, bigsum):
    s = make_pipeline(course, bigsum, None, FakeExecutor(bigsum)).run()
    assert s.pending_batches and len(Journal(course.batches()[0]).read()) == 5


def test_stored_before_a_crash_moves_to_done_without_grading(course, bigsum):
    store, ex = MemoryStore(), FakeExecutor(bigsum)
    pipe = make_pipeline(course, bigsum, store, ex)
    name = pipe.claim()
    batch = course.dir("cur") / name
    for e in course.batch_entries(batch):  # as if ingested just before a crash
        store.subs[e.id] = replace(SubmissionRecord.from_json({
            "spool_id": e.id, "course": "c", "assignment": "bigsum", "student": "x",
            "submitted_at": "t", "batch_id": name, "state": "graded", "arrived_at": "t",
            "claimed_at": "t"}))
    s = pipe.stage(name, ingest=True)
    assert s.graded == 0 and ex.dispatched == [] and len(list(course.dir("done").iterdir())) == 5


def test_outcomes_an_interrupted_run_left_are_collected_not_regraded(course, bigsum):
    store, ex = MemoryStore(), FakeExecutor(bigsum)
    pipe = make_pipeline(course, bigsum, store, ex)
    batch = course.dir("cur") / pipe.claim()
    dee = next(e for e in course.batch_entries(batch) if e.meta().student == "dee")
    ex.left_behind = [Outcome(str(dee.src), fake_result(bigsum, True, "left"), "a", "b")]
    pipe.run()
    assert str(dee.src) not in ex.dispatched and len(ex.dispatched) == 2
    assert store.subs[dee.id].result.content_hash == str(hash("left"))


def test_judge_faults_are_je_and_submission_faults_ce(tmp_path, bigsum):
    spool = Spool(tmp_path / "spool", create=True)
    for student, mark in (("gus", "BREAK"), ("hal", "NOLANG")):
        f = tmp_path / student / "sum.cpp"
        f.parent.mkdir()
        f.write_text(f"int main() {{}} // {mark}\n")
        spool.submit(course="c", assignment="bigsum", student=student, path=f)
    store = MemoryStore()
    make_pipeline(spool, bigsum, store, FakeExecutor(bigsum)).run()
    recs = {r.student: r.result for r in store.subs.values()}
    assert recs["gus"].verdict is Verdict.JE and recs["gus"].message == "the sandbox broke"
    assert recs["hal"].verdict is Verdict.CE and recs["hal"].compile.output == "no source file"


def test_shard_samples_reach_the_store_with_their_batch(course, bigsum):
    store, ex = MemoryStore(), FakeExecutor(bigsum)
    ex.shard_samples = [ShardSample(Sample("perf", "instructions", 5e9), 3, "n1", "7", "0")]
    make_pipeline(course, bigsum, store, ex).run()
    (batch, samples), = store.metrics.items()
    assert batch.startswith("b") and samples[0].sample.source == "perf"


def test_regrade_grades_only_outdated_results_again(course, bigsum, tmp_path):
    store, ex = MemoryStore(), FakeExecutor(bigsum)
    make_pipeline(course, bigsum, store, ex).run()
    changed = replace(bigsum, version="v2")
    ex2 = FakeExecutor(changed)
    pipe = make_pipeline(course, changed, store, ex2)
    n = regrade(pipe, changed, "c", store)
    assert n == 4 and len(ex2.dispatched) == 3  # identical content once, again
    assert len(store.results) == 8
    assert {r.problem_version for (_, v), r in store.results.items() if v == "v2"} == {"v2"}
    assert regrade(pipe, changed, "c", store) == 0


def test_plan_splits_leaders_followers_and_stored(bigsum):
    def cand(key: str, content: str) -> dedupe.Candidate:
        return dedupe.Candidate(key, GradingJob(bigsum.path, Path(key)), bigsum, content)

    stored = fake_result(bigsum, True, "s")
    p = dedupe.plan([cand("a", "h1"), cand("b", "h1"), cand("c", "h2"), cand("d", "h3")],
                    lookup=lambda v, h: ("old", stored) if h == "h3" else None)
    assert [c.key for c in p.leaders] == ["a", "c"]
    assert {k: [c.key for c in v] for k, v in p.followers.items()} == {"a": ["b"]}
    assert [(c.key, src) for c, src, _ in p.stored] == [("d", "old")] and p.reused == 2
    assert len(dedupe.plan([cand("a", "h1"), cand("b", "h1")], dedupe=False).leaders) == 2


def test_journal_skips_a_torn_last_line(tmp_path):
    j = Journal(tmp_path)
    rec = SubmissionRecord("s1", "c", "a", "x", "t", "b", "graded", "t", "t")
    j.append(rec)
    with j.path.open("a") as f:
        f.write('{"spool_id": "s2", "cour')  # a crash mid-write
    assert j.read() == {"s1": rec}


@pytest.mark.parametrize(("marks", "status"), [((), OK), (("NOLANG",), SUBMISSION_FAULT),
                                               (("NOLANG", "BREAK"), OUR_FAULT)])
def test_array_task_exit_status_says_whose_fault(tmp_path, bigsum, marks, status):
    sources = []
    for i, mark in enumerate(("ok", *marks)):
        f = tmp_path / f"s{i}" / "sum.cpp"
        f.parent.mkdir()
        f.write_text(f"// {mark}\n")
        sources.append(f)
    array = ArrayDir.create(tmp_path / "batch")
    shard = array.shard(0)
    shard.write_jobs([GradingJob(bigsum.path, s) for s in sources])
    ex = FakeExecutor(bigsum)
    said: list[str] = []
    rc = run_shard(shard, cpus=CpuSet([0]), grade=ex.run, slurm=SlurmTask(node="n1"),
                   say=said.append)
    assert rc == status and len(shard.read_outcomes()[0]) == len(sources)
    # a requeued task grades only what has no outcome yet
    assert run_shard(shard, cpus=CpuSet([0]), grade=ex.run, slurm=SlurmTask(),
                     say=said.append) == OK
    assert len(ex.dispatched) == len(sources)


def test_a_shard_records_its_node_monitor_summary(tmp_path, bigsum):
    f = tmp_path / "s" / "sum.cpp"
    f.parent.mkdir()
    f.write_text("// ok\n")
    shard = ArrayDir.create(tmp_path / "batch").shard(0)
    shard.write_jobs([GradingJob(bigsum.path, f)])
    ex = FakeExecutor(bigsum)

    def slow(jobs):  # long enough for one monitor interval
        for o in ex.run(jobs):
            time.sleep(0.6)
            yield o

    assert run_shard(shard, cpus=CpuSet([0]), grade=slow, slurm=SlurmTask(node="n1"),
                     say=lambda _: None) == OK
    got = {(s.sample.event, s.sample.cpu): s for s in shard.samples()
           if s.sample.source == "monitor"}
    assert {("busy", 0), ("ctxt_per_s", None), ("mem_used_peak", None),
            ("monitor_overhead", None)} <= set(got)
    assert 0 <= got[("busy", 0)].sample.value <= 1
    assert got[("busy", 0)].node == "n1" and got[("busy", 0)].submissions == 1


def test_an_idle_array_task_steals_and_nothing_is_graded_twice(tmp_path, bigsum):
    """Task 0 finishes its shard and takes task 1's jobs from the end; task 1 then
    grades only what is left; a requeued task 0 takes back its own unfinished claim."""
    sources = []
    for i in range(6):
        f = tmp_path / f"s{i}" / "sum.cpp"
        f.parent.mkdir()
        f.write_text(f"// {i}\n")
        sources.append(f)
    array = ArrayDir.create(tmp_path / "batch")
    jobs = [GradingJob(bigsum.path, s) for s in sources]
    for i in range(3):
        array.shard(i).write_jobs(jobs[2 * i:2 * i + 2])
    assert array.shard(0).claim(jobs[0])  # a crashed earlier instance of task 0 took it
    assert not array.shard(1).claim(jobs[0])  # ... so no other task may
    ex = FakeExecutor(bigsum)
    stop_after = 3

    def grade_some(todo):  # task 0 dies after three outcomes
        for n, outcome in enumerate(ex.run(todo)):
            if n == stop_after:
                return
            yield outcome

    run_shard(array.shard(0), cpus=CpuSet([0]), grade=grade_some, slurm=SlurmTask(),
              say=lambda _: None)
    # own two first (the earlier claim is its own), then shard 1's from its end; it
    # claimed job 2 and died before its outcome
    assert ex.dispatched == [jobs[k].key for k in (0, 1, 3, 2)]
    for i in (1, 2):
        run_shard(array.shard(i), cpus=CpuSet([0]), grade=ex.run, slurm=SlurmTask(),
                  say=lambda _: None)
    # task 1 may not take job 2 (task 0's) and steals shard 2's, at most two of them
    assert ex.dispatched[4:] == [jobs[5].key, jobs[4].key]

    def graded():
        return [o.key for i in range(3) for o in array.shard(i).read_outcomes()[0]]

    assert jobs[2].key not in graded()
    run_shard(array.shard(0), cpus=CpuSet([0]), grade=ex.run, slurm=SlurmTask(),
              say=lambda _: None)  # task 0's requeued instance grades its claim
    assert sorted(graded()) == sorted(j.key for j in jobs)  # each exactly once
    # a multi-core task never steals (its pool takes every job at once)
    assert run_shard(array.shard(0), cpus=CpuSet([0, 1]), grade=ex.run, slurm=SlurmTask(),
                     say=lambda _: None) == OK


def test_array_task_with_an_unreadable_shard_is_our_fault(tmp_path):
    array = ArrayDir.create(tmp_path / "batch")
    array.shard(0).spec.write_text(json.dumps({"broken": True}))
    assert run_shard(array.shard(0), cpus=CpuSet([0]), grade=lambda jobs: iter(()),
                     slurm=SlurmTask(), say=lambda _: None) == OUR_FAULT


def test_a_new_spool_is_private_and_a_shared_one_is_refused(tmp_path):
    from grader.adapters.spool import Spool
    from grader.core.errors import ConfigError

    root = tmp_path / "course" / "spool"
    Spool(root, create=True)
    assert root.stat().st_mode & 0o777 == 0o700
    assert (root / "new").stat().st_mode & 0o077 == 0
    (root / "new").chmod(0o777)
    with pytest.raises(ConfigError, match=r"writable by every account.*chmod o-w"):
        Spool(root)


def test_serve_outlives_a_full_spool_file_system(course, bigsum):
    """A claim that meets ENOSPC (or any spool OSError) is retried; serve does not end."""
    import errno

    from grader.pipeline.serve import ServePolicy, Server

    store, ex = MemoryStore(), FakeExecutor(bigsum)
    pipe = make_pipeline(course, bigsum, store, ex)
    real_claim, failures = pipe.claim, []

    def claim(*a, **kw):
        if len(failures) < 3:
            failures.append(1)
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_claim(*a, **kw)

    pipe.claim = claim  # type: ignore[method-assign]
    server = Server(pipe, ServePolicy(idle_exit=True, poll_s=0.01, retry_s=0.1,
                                      submit_interval_s=0.0, report_s=0), say=lambda _: None)
    s = server.serve()
    assert len(failures) == 3
    assert s.total.graded + s.total.reused == 4 and s.total.quarantined == 1
    assert not course.new_entries() and not course.batches()


def test_a_batch_that_meets_the_database_away_fails_with_a_reason_and_is_resumed(
        course, bigsum, monkeypatch, caplog):
    """PostgreSQL crashed under a batch: one line with the reason (no traceback), and
    the batch is graded when serve resumes it."""
    from grader.pipeline.run import Pipeline
    from grader.pipeline.serve import ServePolicy, Server

    store, ex = MemoryStore(), FakeExecutor(bigsum)
    pipe = make_pipeline(course, bigsum, store, ex)
    real_stage, calls = Pipeline.stage, []

    def stage(self, *a, **kw):
        calls.append(1)
        if len(calls) == 1:
            raise StoreError("database error: terminating connection due to crash")
        return real_stage(self, *a, **kw)

    monkeypatch.setattr(Pipeline, "stage", stage)
    server = Server(pipe, ServePolicy(idle_exit=True, poll_s=0.01, retry_s=0.1,
                                      submit_interval_s=0.0, report_s=0), say=lambda _: None)
    with caplog.at_level("ERROR", logger="grader.pipeline.serve"):
        s = server.serve()
    (rec,) = [r for r in caplog.records if "failed" in r.getMessage()]
    assert "terminating connection due to crash" in rec.getMessage()
    assert "resumed in 0.1 s" in rec.getMessage() and rec.exc_info is None
    assert s.failed_batches == 1 and len(calls) == 2
    assert s.total.graded + s.total.reused == 4 and s.total.quarantined == 1
    assert not course.new_entries() and not course.batches()


def test_serve_claims_every_quarter_second_but_an_sbatch_per_batch_every_second():
    from grader.pipeline.serve import submit_interval
    assert submit_interval(None, arrays=False) == 0.25  # pilots, local workers
    assert submit_interval(None, arrays=True) == 1.0  # one job array per batch
    assert submit_interval(2.0, arrays=False) == 2.0
