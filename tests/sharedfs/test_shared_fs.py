"""The spool and the pilots' tickets on a file system that several hosts mount: the
serving host and the compute nodes each through their own client. Claims and tickets
are taken by rename (atomic at the server), batches held by flock (through NFS, the
server's byte-range locks), entries written aside, fsync'd and renamed into place (so
another client, opening after the rename, sees them whole: close-to-open).

Here the two "hosts" are two directories naming the same tree: by default the same
local directory twice; in the NFS node (``make test-nfs``) ``GRADELINE_SHARED_DIRS``
names two NFS mounts of one export, mounted with ``nosharecache`` so that each has its
own client caches, as two machines would.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import time
from pathlib import Path

import pytest

from grader.adapters.spool import Spool
from grader.pipeline.slurm.shards import Shard
from grader.pipeline.slurm.tickets import Tickets

PER_WRITER = 120
CTX = mp.get_context("fork")


@pytest.fixture
def mounts(tmp_path: Path) -> tuple[Path, Path]:
    """The same fresh directory as two clients see it."""
    given = os.environ.get("GRADELINE_SHARED_DIRS")
    if not given:
        return tmp_path, tmp_path
    a, b = (Path(p) for p in given.split(":"))
    name = f"t{os.getpid()}-{time.monotonic_ns()}"
    (a / name).mkdir(mode=0o700)
    for _ in range(100):  # the other client sees the new directory (close-to-open)
        if (b / name).is_dir():
            break
        time.sleep(0.05)
    return a / name, b / name


def _submit(root: Path, who: str, src: Path, go: mp.synchronize.Event) -> None:
    spool = Spool(root)
    go.wait()
    for i in range(PER_WRITER):
        spool.submit(course="c", assignment="a", student=f"{who}{i}", path=src)


def _claim(root: Path, who: str, out: mp.Queue[list[str]],
           go: mp.synchronize.Event) -> None:
    spool, mine, idle, n = Spool(root), [], 0, 0
    go.wait()
    while idle < 40:
        got = spool.claim(f"{who}-{n}", limit=7)
        n += 1
        mine += [e.id for e in got]
        idle = 0 if got else idle + 1
        time.sleep(0 if got else 0.05)
    out.put(mine)


def test_two_hosts_submit_and_claim_every_submission_exactly_once(mounts, tmp_path):
    a, b = mounts
    Spool(a / "spool", create=True)
    src = tmp_path / "sum.py"
    src.write_text("print(sum(map(int, input().split())))\n")
    go, out = CTX.Event(), CTX.Queue()
    procs = [CTX.Process(target=_submit, args=(a / "spool", "a", src, go)),
             CTX.Process(target=_submit, args=(b / "spool", "b", src, go)),
             CTX.Process(target=_claim, args=(a / "spool", "serve-a", out, go)),
             CTX.Process(target=_claim, args=(b / "spool", "serve-b", out, go))]
    for p in procs:
        p.start()
    go.set()
    claimed = [out.get(timeout=600), out.get(timeout=600)]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    both = claimed[0] + claimed[1]
    assert len(both) == len(set(both)) == 2 * PER_WRITER  # each once, none lost
    assert claimed[0] and claimed[1]  # both intakes took part
    on_disk = [p.name for p in (a / "spool" / "cur").glob("*/*") if not p.name.startswith(".")
               and p.is_dir()]
    assert sorted(on_disk) == sorted(both)
    spool_b = Spool(b / "spool")  # every entry whole as the other client reads it
    students = {e.meta().student for batch in spool_b.batches()
                for e in spool_b.batch_entries(batch)}
    assert students == {f"{w}{i}" for w in "ab" for i in range(PER_WRITER)}


def _take(root: Path, pilot: str, out: mp.Queue[list[str]], go: mp.synchronize.Event) -> None:
    t, mine = Tickets(root), []
    go.wait()
    while (name := t.take(pilot)) is not None:
        shard, _ = t.read(name, pilot)  # the ticket's body, whole
        mine.append(f"{name}={shard.index}")
        t.finish(name, pilot)
    out.put(mine)


def test_pilots_on_two_hosts_take_every_ticket_exactly_once(mounts):
    a, b = mounts
    posted = Tickets(a / "pool")
    posted.ensure()
    for i in range(200):
        posted.post(f"t{i:04d}", Shard(a / "array-0", i))
    go, out = CTX.Event(), CTX.Queue()
    procs = [CTX.Process(target=_take, args=(root / "pool", f"p{k}@{root.name}", out, go))
             for k in range(2) for root in (a, b)]
    for p in procs:
        p.start()
    go.set()
    taken = [t for _ in procs for t in out.get(timeout=600)]
    for p in procs:
        p.join(timeout=60)
    assert sorted(taken) == sorted(f"t{i:04d}={i}" for i in range(200))
    assert Tickets(b / "pool").waiting() == [] and Tickets(b / "pool").held() == []


def _hold(batch: Path, ready: mp.synchronize.Event) -> None:
    with Spool.working_on(batch) as mine:
        assert mine
        ready.set()
        time.sleep(600)


def test_a_batch_held_on_one_host_is_busy_on_the_other_until_its_holder_dies(mounts):
    a, b = mounts
    Spool(a / "spool", create=True).claim("b1")
    ready = CTX.Event()
    holder = CTX.Process(target=_hold, args=(a / "spool" / "cur" / "b1", ready))
    holder.start()
    try:
        assert ready.wait(timeout=120)
        assert Spool.busy(b / "spool" / "cur" / "b1")
        with Spool.working_on(b / "spool" / "cur" / "b1") as mine:
            assert not mine
    finally:
        os.kill(holder.pid or 0, signal.SIGKILL)  # a crashed server: its lock goes with it
        holder.join(timeout=60)
    until = time.monotonic() + 120
    while Spool.busy(b / "spool" / "cur" / "b1"):
        assert time.monotonic() < until, "the dead holder's lock never went away"
        time.sleep(0.2)


def test_a_file_renamed_into_place_on_one_host_is_read_whole_on_the_other(mounts):
    a, b = mounts
    body = json.dumps({"x": "y" * 100_000})
    for i in range(20):
        tmp = a / f".f{i}.tmp"
        tmp.write_text(body)
        tmp.replace(a / f"f{i}")
        assert json.loads((b / f"f{i}").read_text()) == json.loads(body)
