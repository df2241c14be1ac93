"""Sandbox pieces that need no running container: cgroup files, command lines, the
runner's request and reply, and the verdict order."""
import errno
import os
import signal
import time
from pathlib import Path

import pytest

from grader.adapters.sandbox.apptainer import ApptainerSandbox
from grader.adapters.sandbox.bwrap import BwrapSandbox
from grader.adapters.sandbox.cgroups import CgroupManager
from grader.adapters.sandbox.container import ContainerSandbox
from grader.adapters.sandbox.outcome import RawOutcome, interpret
from grader.adapters.sandbox.runtime import Identity, session_members
from grader.core.errors import SandboxError
from grader.core.limits import MIB, Limits
from grader.judge.ports import Bind, RunRequest


def fake_proc(tmp_path: Path, mounts: str, cgroup: str) -> Path:
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "mounts").write_text(mounts)
    (proc / "cgroup").write_text(cgroup)
    return proc


def test_cgroup_v1_shard_is_made_below_our_own(tmp_path):
    root = tmp_path / "cg"
    mounts = ""
    for c in ("memory", "pids", "cpuacct", "cpuset"):
        (root / c / "job1").mkdir(parents=True)
        mounts += f"cgroup {root / c} cgroup rw,relatime,{c} 0 0\n"
    (root / "cpuset" / "job1" / "cpuset.mems").write_text("0\n")
    proc = fake_proc(tmp_path, mounts, "4:memory:/job1\n8:pids:/job1\n2:cpuacct:/job1\n"
                                       "3:cpuset:/job1\n")
    mgr = CgroupManager.detect(proc)
    assert mgr is not None and mgr.version == 1
    # Below our own cgroup, so a batch system's limits still bound everything in it.
    assert mgr.bases["memory"] == root / "memory" / "job1"
    cg = mgr.create_shard([2])
    assert all(d.parent == root / c / "job1" for c, d in cg.dirs.items())
    assert (cg.dirs["cpuset"] / "cpuset.cpus").read_text() == "2"
    assert (cg.dirs["cpuset"] / "cpuset.mems").read_text() == "0"
    args = cg.runner_args("/gl/cgroup")
    assert args[::2] == ["--cgroup-v1"] * 4
    assert set(args[1::2]) == {f"{c}=/gl/cgroup/{c}" for c in ("memory", "pids", "cpuacct",
                                                                 "cpuset")}
    assert ("/gl/cgroup/memory" in {dst for _, dst in cg.binds("/gl/cgroup")})
    (cg.dirs["memory"] / "run1").mkdir()  # a run the runner left behind
    cg.remove()
    # gone, runs first (a real cgroupfs ignores control files; here cpuset's are files)
    assert not any(cg.dirs[c].exists() for c in ("memory", "pids", "cpuacct"))


def test_cgroup_v2_shard(tmp_path):
    root = tmp_path / "unified"
    (root / "job").mkdir(parents=True)
    (root / "job" / "cgroup.subtree_control").write_text("")
    proc = fake_proc(tmp_path, f"cgroup2 {root} cgroup2 rw 0 0\n", "0::/job\n")
    mgr = CgroupManager.detect(proc)
    assert mgr is not None and mgr.version == 2
    cg = mgr.create_shard(None)
    assert cg.runner_args() == ["--cgroup-v2", "/gl/cgroup/unified"]
    # the container starts in the shard's leaf, beside the runs' cgroups
    shard = cg.dirs["unified"]
    assert (shard / "runner").is_dir()
    argv = cg.enter_argv(["bwrap", "x"])
    assert argv[:2] == ["/bin/sh", "-c"] and argv[3:] == [str(shard / "runner/cgroup.procs"),
                                                          "bwrap", "x"]
    v1 = CgroupManager(1, {"memory": tmp_path}).create_shard(None)
    assert v1.enter_argv(["bwrap"]) == ["bwrap"]


def _busy_v2(tmp_path, procs: str, parent_enabled: str):
    """A delegated v2 cgroup ``deleg`` holding ``procs``: enabling controllers in a
    cgroup that holds processes fails with EBUSY, as the kernel does."""
    root = tmp_path / "unified"
    deleg = root / "deleg"
    deleg.mkdir(parents=True)
    (root / "cgroup.subtree_control").write_text(parent_enabled)
    (deleg / "cgroup.procs").write_text(procs)
    (deleg / "cgroup.subtree_control").write_text("")
    return root, deleg


def test_cgroup_v2_delegated_to_us_alone_moves_us_to_a_leaf(tmp_path, monkeypatch):
    root, deleg = _busy_v2(tmp_path, f"{os.getpid()}\n", "")

    def enable(base, require):
        if (base / "cgroup.procs").read_text().strip():
            raise OSError(errno.EBUSY, "busy")
        (base / "cgroup.subtree_control").write_text(" ".join(require))
    monkeypatch.setattr(CgroupManager, "_enable", staticmethod(enable))

    def move(path, value):  # writing cgroup.procs moves the process
        path.write_text(value)
        if path.name == "cgroup.procs":
            (deleg / "cgroup.procs").write_text("")
    monkeypatch.setattr("grader.adapters.sandbox.cgroups._write", move)
    proc = fake_proc(tmp_path, f"cgroup2 {root} cgroup2 rw 0 0\n", "0::/deleg\n")
    mgr = CgroupManager.detect(proc)
    assert mgr is not None and mgr.bases == {"unified": deleg}
    leaf = deleg / f"gradeline-{os.getpid()}-self"
    assert (leaf / "cgroup.procs").read_text() == str(os.getpid())


def test_cgroup_v2_child_of_a_gradeline_process_uses_the_cgroup_above(tmp_path, monkeypatch):
    root, deleg = _busy_v2(tmp_path, "1\n", "")
    leaf = deleg / "gradeline-1-self"  # our parent process moved itself here
    leaf.mkdir()
    (leaf / "cgroup.procs").write_text(f"1\n{os.getpid()}\n")
    (deleg / "cgroup.procs").write_text("")
    (deleg / "cgroup.subtree_control").write_text("memory pids cpu")

    def enable(base, require):
        raise OSError(errno.EBUSY, "busy")
    monkeypatch.setattr(CgroupManager, "_enable", staticmethod(enable))
    proc = fake_proc(tmp_path, f"cgroup2 {root} cgroup2 rw 0 0\n", "0::/deleg/gradeline-1-self\n")
    mgr = CgroupManager.detect(proc)
    assert mgr is not None and mgr.bases == {"unified": deleg}
    # shared with a process that is not gradeline's, and nothing usable above: none
    (deleg / "cgroup.subtree_control").write_text("")
    assert CgroupManager.detect(proc) is None


def test_no_cgroups_without_controllers(tmp_path):
    proc = fake_proc(tmp_path, "proc /proc proc rw 0 0\n", "0::/\n")
    assert CgroupManager.detect(proc) is None


def rootfs(tmp_path: Path) -> Path:
    root = tmp_path / "rootfs"
    for d in ("work", "judge", "tmp", "proc", "dev", "gl/work", "usr/local/bin"):
        (root / d).mkdir(parents=True)
    (root / "usr/local/bin/gl-runner").touch()
    return root


def test_bwrap_container_as_the_sandbox_uid(tmp_path):
    sb = BwrapSandbox(rootfs(tmp_path), tmp_path / "w", identity=Identity(61003, 61003),
                      bwrap="/usr/bin/bwrap", image_env={"LANG": "C.UTF-8"})
    argv = sb.container_argv([(tmp_path / "w", "/gl/work")], ["/usr/local/bin/gl-runner"])
    assert argv[1:4] == ["--reuid=61003", "--regid=61003", "--clear-groups"]
    b = argv.index("/usr/bin/bwrap")
    assert argv[b + 1] == "--unshare-all" and "--die-with-parent" in argv
    r = argv.index("--ro-bind")
    assert argv[r + 1:r + 3] == [str(tmp_path / "rootfs"), "/"]
    assert ["--bind", str(tmp_path / "w"), "/gl/work"] == \
        argv[argv.index("/gl/work") - 2:argv.index("/gl/work") + 1]
    assert argv[argv.index("LANG") + 1] == "C.UTF-8" and "--share-net" not in argv
    assert argv[-2:] == ["--", "/usr/local/bin/gl-runner"]
    caller = BwrapSandbox(rootfs(tmp_path / "2"), tmp_path / "w", bwrap="/usr/bin/bwrap")
    assert caller.container_argv([], ["r"])[0] == "/usr/bin/bwrap"  # a site: as the caller


def test_bwrap_refuses_an_image_without_the_runner(tmp_path):
    with pytest.raises(SandboxError, match="lacks /work"):
        BwrapSandbox(tmp_path, tmp_path / "w", bwrap="/usr/bin/bwrap")


def test_apptainer_container(tmp_path):
    sb = ApptainerSandbox(tmp_path / "g.sif", tmp_path / "w", apptainer="/usr/bin/apptainer")
    argv = sb.container_argv([(tmp_path / "w", "/gl/work")], ["/usr/local/bin/gl-runner"])
    for flag in ("--containall", "--cleanenv", "--no-home", "--net"):
        assert flag in argv
    assert argv[argv.index("--network") + 1] == "none"
    assert f"{tmp_path / 'w'}:/gl/work:rw" in argv
    assert argv[-2:] == [str(tmp_path / "g.sif"), "/usr/local/bin/gl-runner"]
    assert "--memory" not in argv and "--apply-cgroups" not in argv  # stays in Slurm's cgroup


class Box(ContainerSandbox):
    runtime = "test"


def test_request_translates_paths_escapes_and_hides(tmp_path):
    work = tmp_path / "w"
    (work / "sub/build").mkdir(parents=True)
    box = Box(tmp_path, work, identity=Identity(61001, 61001))
    box.runner_is_root = True
    req = RunRequest(["sh", "-c", "echo a\tb\nc\\d"], work / "sub/build",
                     Limits(cpu_time_s=1.5, memory_bytes=64 * MIB, processes=8),
                     stdout=work / "sub/out/0.out", stderr=work / "sub/out/0.err",
                     stdin=work / "sub/out/0", cpus=[1, 3],
                     binds=(Bind(work / "sub/judge", "/judge/data"),))
    lines = box.request_text(req).splitlines()
    assert lines[:3] == ["argv sh", "argv -c", r"argv echo a\tb\nc\\d"]
    assert "workdir /gl/work/sub/build" in lines and "stdin /gl/work/sub/out/0" in lines
    assert r"bind /gl/work/sub/judge\t/judge/data\t0" in lines
    assert {"hide /gl/work", "hide /gl/cgroup", "hide /sys/fs/cgroup"} <= set(lines)
    # no cgroup here: RLIMIT_CPU ends a CPU-bound run at 3 s, so the clock waits to 4 s
    assert {"uid 61001", "gid 61001", "cpus 1,3", "cpu_hard_s 3", "wall_ms 4000",
            f"memory {64 * MIB}", "procs 8"} <= set(lines)
    # without a memory cgroup: a commit limit 64 MiB over the limit, an address-space
    # backstop as much again plus the language's reserve
    assert {f"data {128 * MIB}", f"as {128 * MIB}"} <= set(lines)
    java = req.limits.for_runtime(512 * MIB, 4096 * MIB)
    jl = box.request_text(RunRequest(req.argv, req.workdir, java, req.stdout, req.stderr))
    assert {f"data {640 * MIB}", f"as {4736 * MIB}"} <= set(jl.splitlines())
    assert lines[-1] == "run"
    box.runner_is_root = False  # a site's runner is the user: no uid to map to
    assert not any(ln.startswith("uid ") for ln in box.request_text(req).splitlines())
    with pytest.raises(SandboxError, match="outside the work root"):
        box.inside(tmp_path / "elsewhere")
    with pytest.raises(SandboxError, match="outside the work root"):
        box.inside(work / "sub/../../elsewhere")  # lexically out, not only by resolving
    (tmp_path / "alias").symlink_to(work)
    assert box.inside(tmp_path / "alias/sub/out/0") == "/gl/work/sub/out/0"


def test_reply_becomes_run_meta(tmp_path):
    box = Box(tmp_path, tmp_path)
    req = RunRequest(["./sol"], tmp_path, Limits(cpu_time_s=1.0, output_bytes=100),
                     stdout=tmp_path / "o", stderr=tmp_path / "e")
    (tmp_path / "e").write_bytes(b"terminate called after throwing std::bad_alloc\n")
    base = {"status": "ok", "cpu-time-s": "0.2", "wall-time-s": "0.3",
            "max-rss-bytes": "5000000", "oom-killed": "0", "wall-timed-out": "0",
            "stdout-bytes": "7", "stderr-bytes": "40", "cgroup": "0"}
    meta = box.meta(req, {**base, "signal": "6"})
    assert meta.signal == 6 and meta.termination == "memory"  # no cgroup: the program said
    assert meta.memory_bytes == 5000000
    cg = box.meta(req, {**base, "cgroup": "1", "memory-peak-bytes": "9000000",
                         "exit-code": "0"})
    assert cg.ok and cg.memory_bytes == 9000000
    missing = box.meta(req, {**base, "exit-code": "127", "exec-error": "No such file"})
    assert missing.exit_code == 127 and "cannot execute ./sol: No such file" in missing.message


def raw(**kw):
    base = dict(wall_time_s=0.1, cpu_time_s=0.05, memory_bytes=MIB, oom_killed=False,
                memory_error_reported=False, wall_timed_out=False, stdout_bytes=10,
                stderr_bytes=0, cgroup=True)
    return RawOutcome(**{**base, **kw})


def test_interpret_order():
    lim = Limits(cpu_time_s=1.0, output_bytes=100)
    assert interpret(raw(), lim, 0, None).ok
    assert interpret(raw(oom_killed=True, wall_timed_out=True), lim, None, 9).termination == \
        "memory"
    assert interpret(raw(wall_timed_out=True), lim, None, 9).termination == "wall-time"
    # over the wall limit but not yet ended by the runner's clock (rlimits): TLE all the same
    assert interpret(raw(wall_time_s=2.5), lim, 0, None).termination == "wall-time"
    assert interpret(raw(wall_time_s=1.9), lim, 0, None).ok
    assert interpret(raw(cpu_time_s=1.2), lim, 0, None).termination == "cpu-time"
    # a loaded host: the wall limit fired, but the program had used its CPU time
    assert interpret(raw(cpu_time_s=1.1, wall_timed_out=True), lim, None, 9).termination == \
        "cpu-time"
    assert interpret(raw(stdout_bytes=100), lim, None, signal.SIGXFSZ).termination == "output"
    # Without cgroups: MLE from the program's own report of a failed allocation, or
    # from a resident size at the limit (it spins on failing mallocs: not TLE).
    assert interpret(raw(cgroup=False, memory_error_reported=True), lim, 1, None
                     ).termination == "memory"
    assert interpret(raw(cgroup=False), lim, 1, None).termination is None
    mem = Limits(cpu_time_s=1.0, memory_bytes=64 * MIB)
    assert interpret(raw(cgroup=False, memory_bytes=70 * MIB, cpu_time_s=2.0), mem, None,
                     signal.SIGXCPU).termination == "memory"
    assert interpret(raw(cgroup=False, memory_bytes=60 * MIB, cpu_time_s=2.0), mem, None,
                     signal.SIGXCPU).termination == "cpu-time"
    # with a cgroup the peak charge is only a measurement: the OOM killer decides
    assert interpret(raw(memory_bytes=70 * MIB), mem, 0, None).termination is None


def test_limits_validate():
    with pytest.raises(ValueError):
        Limits(cpu_time_s=0)
    with pytest.raises(ValueError):
        Limits(cpu_time_s=1, memory_bytes=-1)
    assert Limits(cpu_time_s=1).wall_s == 2.0
    assert Limits(cpu_time_s=0.5).wall_s == 1.5
    assert Limits(cpu_time_s=10).wall_s == 20.0
    for tl in (0.1, 0.5, 0.67, 1, 2, 10):  # the wall limit never ends a run before its CPU limit
        assert Limits(cpu_time_s=tl).wall_s > Limits(cpu_time_s=tl).cpu_hard_s
    # a language's time multiplier: derived limits follow, a set wall limit keeps its ratio
    assert Limits(cpu_time_s=1).slower(2).wall_s == 4.0
    java = Limits(cpu_time_s=1, wall_time_s=1.5, cpu_time_hard_s=1.2).slower(2)
    assert (java.cpu_time_s, java.wall_s, java.cpu_hard_s) == (2.0, 3.0, 2.4)


def test_stale_cgroups_of_dead_processes_are_swept_and_names_never_repeat(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pilot killed by scancel leaves its cgroups behind, and pids wrap: a new shard
    must neither collide with one (it did: EEXIST, a JE) nor let them pile up."""
    from grader.adapters.sandbox import cgroups as cg

    dead = next(p for p in range(4_000_000, 4_100_000) if not cg._alive(p))
    old = time.time() - 3600
    for ctl in ("pids", "cpuacct"):
        stale = tmp_path / ctl / f"gradeline-{dead}-0"
        (stale / "run-1").mkdir(parents=True)
        os.utime(stale, (old, old))
        (tmp_path / ctl / f"gradeline-{os.getpid()}-0").mkdir()  # a live process's
        (tmp_path / ctl / f"gradeline-{dead}-7").mkdir()  # too young to judge
    monkeypatch.setattr(cg, "_swept", False)
    m = cg.CgroupManager(1, {c: tmp_path / c for c in ("pids", "cpuacct")})
    names = {m.create_shard(None).dirs["pids"].name for _ in range(3)}
    assert len(names) == 3
    for ctl in ("pids", "cpuacct"):
        left = sorted(p.name for p in (tmp_path / ctl).iterdir())
        assert f"gradeline-{dead}-0" not in left
        assert f"gradeline-{os.getpid()}-0" in left and f"gradeline-{dead}-7" in left


def test_a_judge_warmed_where_its_container_cannot_start_leaves_the_reason_to_its_jobs(
        tmp_path, caplog):
    """A pilot starts its container ahead of its first ticket; when that fails the pilot
    goes on, and the first job's run tries again and says why (a JE, not a crash)."""
    from grader.judge.judge import Judge

    class Dead(Box):
        def container_argv(self, binds, runner):
            return [str(tmp_path / "no-such-runtime")]

    box = Dead(tmp_path, tmp_path / "w")
    judge = Judge(box, tmp_path / "jw", [0])
    judge.warm()
    assert "ahead of the first job failed" in caplog.text and "cannot start" in caplog.text
    assert box.proc is None
    with pytest.raises(SandboxError, match="cannot start"):
        box.start()
    assert box.log is None  # nothing of the failed start is left open
    judge.close()


def test_session_members_finds_a_session_across_its_process_groups(tmp_path):
    # squashfuse_ll (pgrp 40) stays in the container's session (10) after the
    # container's own group is killed: it is found by session, not by group
    for pid, comm, fields in [(10, "starter", "S 1 10 10"), (40, "squash fuse)", "S 1 40 10"),
                              (50, "other", "S 1 50 50"), (60, "sh", "R 50 50 50")]:
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(f"{pid} ({comm}) {fields} 0 0 0\n")
    (tmp_path / "self").mkdir()
    (tmp_path / "70").mkdir()  # gone meanwhile: no stat
    assert sorted(session_members(10, tmp_path)) == [10, 40]
    assert sorted(session_members(50, tmp_path)) == [50, 60]
    assert session_members(99, tmp_path) == []
