"""Sandbox pieces that need no running sandbox: cgroup files, command lines, exit codes."""
import signal
from pathlib import Path

import pytest

from grader.adapters.sandbox.apptainer import ApptainerSandbox
from grader.adapters.sandbox.bwrap import BwrapSandbox
from grader.adapters.sandbox.cgroups import CgroupManager
from grader.adapters.sandbox.outcome import RawOutcome, interpret, split_exit
from grader.core.limits import MIB, Limits
from grader.judge.ports import Bind, RunRequest


def fake_proc(tmp_path: Path, mounts: str, cgroup: str) -> Path:
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "mounts").write_text(mounts)
    (proc / "cgroup").write_text(cgroup)
    return proc


def test_cgroup_v1_detect_and_create(tmp_path):
    root = tmp_path / "cg"
    mounts = ""
    for c in ("memory", "pids", "cpuacct", "cpuset"):
        (root / c / "job1").mkdir(parents=True)
        mounts += f"cgroup {root / c} cgroup rw,relatime,{c} 0 0\n"
    (root / "cpuset" / "job1" / "cpuset.mems").write_text("0\n")
    (root / "cpuset" / "job1" / "cpuset.cpus").write_text("0-3\n")
    proc = fake_proc(tmp_path, mounts, "4:memory:/job1\n8:pids:/job1\n2:cpuacct:/job1\n"
                                       "3:cpuset:/job1\n")
    mgr = CgroupManager.detect(proc)
    assert mgr is not None and mgr.version == 1
    # Created under our own cgroup (so a batch system's limits still apply).
    assert mgr.bases["memory"] == root / "memory" / "job1"
    cg = mgr.create(memory_bytes=64 * MIB, processes=16, cpus=[2])
    assert (cg.dirs["memory"] / "memory.limit_in_bytes").read_text() == str(64 * MIB)
    assert (cg.dirs["pids"] / "pids.max").read_text() == "16"
    assert (cg.dirs["cpuset"] / "cpuset.cpus").read_text() == "2"
    assert (cg.dirs["cpuset"] / "cpuset.mems").read_text() == "0"
    (cg.dirs["memory"] / "memory.oom_control").write_text("oom_kill_disable 0\noom_kill 1\n")
    (cg.dirs["cpuacct"] / "cpuacct.usage").write_text("1500000000\n")
    assert cg.oom_killed() and cg.cpu_time_s() == 1.5


def test_cgroup_v2_detect_and_create(tmp_path):
    root = tmp_path / "unified"
    (root / "job").mkdir(parents=True)
    (root / "job" / "cgroup.subtree_control").write_text("")
    proc = fake_proc(tmp_path, f"cgroup2 {root} cgroup2 rw 0 0\n", "0::/job\n")
    mgr = CgroupManager.detect(proc)
    assert mgr is not None and mgr.version == 2
    cg = mgr.create(memory_bytes=MIB, processes=4, cpus=None)
    assert (cg.dirs["unified"] / "memory.max").read_text() == str(MIB)
    (cg.dirs["unified"] / "memory.events").write_text("oom 1\noom_kill 2\n")
    assert cg.oom_killed()


def test_no_cgroups_without_controllers(tmp_path):
    proc = fake_proc(tmp_path, "proc /proc proc rw 0 0\n", "0::/\n")
    assert CgroupManager.detect(proc) is None


def request(tmp_path, **kw):
    return RunRequest(["./sol"], tmp_path / "build", Limits(cpu_time_s=1.0),
                      stdout=tmp_path / "o", stderr=tmp_path / "e", **kw)


def test_bwrap_command_isolates(tmp_path):
    root = tmp_path / "rootfs"
    for d in ("work", "judge", "tmp", "proc", "dev"):
        (root / d).mkdir(parents=True)
    sb = BwrapSandbox(root, bwrap="/usr/bin/bwrap")
    argv = sb.command(request(tmp_path, binds=[Bind(tmp_path / "fb", "/judge/feedback", True)]),
                      7)
    assert argv[:2] == ["/usr/bin/bwrap", "--unshare-all"]
    assert "--die-with-parent" in argv and "--clearenv" in argv
    i = argv.index("--ro-bind")
    assert argv[i + 1:i + 3] == [str(root), "/"]
    assert ["--ro-bind", str(tmp_path / "build"), "/work"] == argv[argv.index("/work") - 2:
                                                                   argv.index("/work") + 1]
    assert ["--bind", str(tmp_path / "fb"), "/judge/feedback"] == \
        argv[argv.index("/judge/feedback") - 2:argv.index("/judge/feedback") + 1]
    assert argv[argv.index("--size") + 1] == str(64 * MIB)
    assert argv[-2:] == ["--", "./sol"] and "--share-net" not in argv


def test_bwrap_refuses_an_image_without_mount_points(tmp_path):
    from grader.core.errors import SandboxError
    with pytest.raises(SandboxError, match="lacks /work"):
        BwrapSandbox(tmp_path, bwrap="/usr/bin/bwrap")


def test_apptainer_command(tmp_path):
    sb = ApptainerSandbox(tmp_path / "g.sif", apptainer="/usr/bin/apptainer")
    argv = sb.command(request(tmp_path, workdir_writable=True))
    for flag in ("--containall", "--cleanenv", "--no-home", "--net"):
        assert flag in argv
    assert argv[argv.index("--network") + 1] == "none"
    assert f"{tmp_path / 'build'}:/work:rw" in argv
    assert argv[-2:] == [str(tmp_path / "g.sif"), "./sol"]


def test_split_exit():
    assert split_exit(0) == (0, None)
    assert split_exit(3) == (3, None)
    assert split_exit(128 + signal.SIGSEGV) == (None, signal.SIGSEGV)


def raw(**kw):
    base = dict(status=0, wall_time_s=0.1, cpu_time_s=0.05, memory_bytes=MIB, oom_killed=False,
                memory_error_reported=False, wall_timed_out=False, stdout_bytes=10,
                stderr_bytes=0, cgroup=True)
    return RawOutcome(**{**base, **kw})


def test_interpret_order():
    lim = Limits(cpu_time_s=1.0, output_bytes=100)
    assert interpret(raw(), lim, 0, None).ok
    assert interpret(raw(oom_killed=True, wall_timed_out=True), lim, None, 9).termination == \
        "memory"
    assert interpret(raw(wall_timed_out=True), lim, None, 9).termination == "wall-time"
    assert interpret(raw(cpu_time_s=1.2), lim, 0, None).termination == "cpu-time"
    assert interpret(raw(stdout_bytes=100), lim, None, signal.SIGXFSZ).termination == "output"
    # Without cgroups, MLE only from the program's own report of a failed allocation.
    assert interpret(raw(cgroup=False, memory_error_reported=True), lim, 1, None
                     ).termination == "memory"
    assert interpret(raw(cgroup=False), lim, 1, None).termination is None


def test_limits_validate():
    with pytest.raises(ValueError):
        Limits(cpu_time_s=0)
    with pytest.raises(ValueError):
        Limits(cpu_time_s=1, memory_bytes=-1)
    assert Limits(cpu_time_s=1).wall_s == 3.0
    assert Limits(cpu_time_s=0.5).wall_s == 2.5
