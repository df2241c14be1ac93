"""The sandbox contract (grader/adapters/sandbox/CONTRACT.md), checked on the real runtime."""
import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from grader.core.limits import MIB, Limits
from grader.judge.ports import RunRequest

from ..support import SLOWDOWN, own_sleep, sleeping

pytestmark = pytest.mark.sandbox

LIM = Limits(cpu_time_s=1.0 * SLOWDOWN, wall_time_s=3.0 * SLOWDOWN, memory_bytes=64 * MIB,
             output_bytes=MIB, processes=16, tmpfs_bytes=4 * MIB)


@pytest.fixture
def box(sandbox_factory, sbx_tmp):
    return sandbox_factory([0], sbx_tmp)


@pytest.fixture
def run(box, sbx_tmp):
    tmp_path = sbx_tmp
    work = tmp_path / "work"
    work.mkdir()
    work.chmod(0o755)
    box.own(work)  # as the judge does with a build dir

    def go(script: str, limits: Limits = LIM, stdin: Path | None = None, writable=False,
           argv=None):
        req = RunRequest(argv or ["/bin/sh", "-c", script], work, limits,
                         stdout=tmp_path / "out", stderr=tmp_path / "err", stdin=stdin,
                         workdir_writable=writable, cpus=[0])
        meta = box.run(req)
        return meta, (tmp_path / "out").read_text(errors="replace"), \
            (tmp_path / "err").read_text(errors="replace")

    go.work = work
    go.box = box
    return go


def test_exit_code_and_output(run):
    meta, out, _ = run("echo hello; exit 3")
    assert meta.exit_code == 3 and meta.signal is None and meta.termination is None
    assert out == "hello\n" and meta.stdout_bytes == 6
    assert meta.memory_bytes is None or meta.memory_bytes > 0


def test_stdin_is_fed(run, sbx_tmp):
    src = sbx_tmp / "input.in"
    src.write_text("41\n")
    meta, out, _ = run("read x; echo $((x+1))", stdin=src)
    assert out == "42\n" and meta.ok


def test_signal_is_reported(run):
    meta, _, _ = run("kill -SEGV $$")
    assert meta.signal == signal.SIGSEGV and meta.exit_code is None


def test_cpu_time_limit(run):
    # a generous wall limit: on a loaded host the CPU limit must still be what ends it
    lim = Limits(cpu_time_s=1.0, wall_time_s=30.0)
    meta, _, _ = run("while :; do :; done", lim)
    assert meta.termination == "cpu-time"
    assert lim.cpu_time_s < meta.cpu_time_s < lim.cpu_hard_s + 0.5


def test_cpu_hard_limit_is_kept_to_the_millisecond_with_a_cgroup(run):
    """RLIMIT_CPU counts whole seconds (a 1.75 s limit would end the run at 2 s, a
    quarter of a second of wasted CPU per TLE test); with a cgroup the runner ends the
    run itself once its CPU time reaches the limit."""
    lim = Limits(cpu_time_s=1.0, wall_time_s=30.0)
    meta, _, _ = run("while :; do :; done", lim)
    assert meta.termination == "cpu-time"
    if run.box.cgroups is None:  # RLIMIT_CPU alone: by the next whole second
        # The kernel fires RLIMIT_CPU on its own clock of the process's runtime, while the
        # run's CPU time is the rusage the init collects, which on a loaded VM came out
        # lower (1.73 s for a run SIGXCPU ended at 2 s): past the soft limit, never past
        # the next whole second, whatever the load.
        assert lim.cpu_time_s < meta.cpu_time_s < 2.0 + 0.3, meta
    else:
        assert lim.cpu_hard_s <= meta.cpu_time_s < lim.cpu_hard_s + 0.15, meta


def test_wall_time_limit(run):
    meta, _, _ = run("sleep 100")
    assert meta.termination == "wall-time"
    # a sleeper's CPU is its start (sh, sleep): ~0.6 s under emulation (SLOWDOWN)
    assert LIM.wall_s - 0.1 < meta.wall_time_s < LIM.wall_s + 1.0
    assert meta.cpu_time_s < 0.5 * SLOWDOWN


def test_memory_limit(run):
    meta, _, _ = run("", argv=["python3", "-c", "x = bytearray(200 * 2**20)"])
    assert meta.termination == "memory"
    if run.box.cgroups is not None:  # the OOM killer; else the allocation fails (rlimit)
        assert meta.signal == signal.SIGKILL
    else:
        assert meta.exit_code == 1 and meta.memory_bytes < LIM.memory_bytes


def test_a_run_the_clock_ends_is_still_measured(run):
    # the init kills the run and reports: CPU time and peak memory of a run the wall
    # clock ended, which without a cgroup nothing else measures
    script = ("x = b'x' * (32 * 2**20)\nfor _ in range(3 * 10**6): pass\n"
              "import time; time.sleep(100)")
    meta, _, _ = run("", argv=["python3", "-c", script])
    assert meta.termination == "wall-time" and meta.signal == signal.SIGKILL
    assert meta.memory_bytes is not None and meta.memory_bytes >= 32 * MIB
    assert meta.cpu_time_s > 0.02


def test_memory_held_when_the_clock_ends_the_run_is_mle(run):
    # a memory bomb that a loaded host lets reach the wall clock before RLIMIT_CPU: it
    # holds more than its limit (RLIMIT_AS has headroom) and spins; MLE, not TLE
    script = "x = b'x' * (80 * 2**20)\nimport time; time.sleep(100)"
    meta, _, _ = run("", argv=["python3", "-c", script])
    assert meta.termination == "memory"


def test_output_limit(run):
    meta, _, _ = run("yes 'spam spam spam'")
    assert meta.termination == "output"
    assert meta.stdout_bytes == LIM.output_bytes


def test_process_limit(run):
    _meta, out, _ = run("", argv=["python3", "-c", """
import os, time
n = 0
try:
    for _ in range(100):
        if os.fork() == 0:
            time.sleep(5); os._exit(0)
        n += 1
except OSError as e:
    print("fork failed after", n, e.errno)
"""])
    assert "fork failed after" in out
    assert int(out.split()[3]) < LIM.processes


def test_tmpfs_is_private_and_bounded(run):
    big_files = Limits(cpu_time_s=1.0, output_bytes=64 * MIB, tmpfs_bytes=4 * MIB)
    _meta, out, _err = run("dd if=/dev/zero of=/tmp/f bs=1M count=10 2>&1; ls /tmp", big_files)
    assert "No space left on device" in out and out.endswith("f\n")


def test_file_size_limit_applies_to_every_file(run):
    _meta, out, _err = run("dd if=/dev/zero of=/tmp/f bs=1M count=3 2>&1; ls -s /tmp/f")
    assert "File size limit exceeded" in out
    assert out.strip().endswith(f"{LIM.output_bytes // 1024} /tmp/f")


def test_root_is_read_only_and_work_read_only_for_runs(run):
    _, out, _ = run("touch /usr/x 2>&1; touch /work/x 2>&1; echo done")
    assert out.count("Read-only file system") == 2
    _meta, out, _ = run("touch /work/x && echo wrote", writable=True)
    assert out == "wrote\n" and (run.work / "x").exists()


def test_nothing_written_reaches_the_next_run(run):
    """The container lives for many runs: whatever it left writable (Apptainer's
    /var/tmp, bubblewrap's /dev, /etc/hosts ...) is read-only or private per run."""
    script = ("for f in /tmp/m /var/tmp/m /dev/shm/m /dev/m /etc/hosts /etc/m /gl/m; do "
              "[ -e $f ] && echo seen $f; (echo x >> $f) 2>/dev/null && echo wrote $f; done; "
              "echo ok > /dev/null && echo devnull")
    _meta, first, _ = run(script)
    lines = sorted(set(first.split("\n")) - {"", "seen /etc/hosts"})  # Apptainer makes one
    assert lines == ["devnull", "wrote /dev/shm/m", "wrote /tmp/m", "wrote /var/tmp/m"]
    _meta, second, _ = run(script)
    assert second == first  # the three private tmpfs were new again


def test_no_network_but_loopback(run):
    _meta, out, _ = run("cat /proc/net/dev | tail -n +3 | cut -d: -f1; cat /proc/net/route | "
                       "wc -l")
    ifaces = out.split()
    assert ifaces[:-1] == ["lo"] and ifaces[-1] == "1"  # route table: header only


def test_localhost_resolves_to_loopback(run):
    """Under every runtime (Apptainer lends the host's /etc/hosts, bubblewrap only the
    image's): Otter's kernel logger and many tests bind "localhost"."""
    meta, out, err = run("getent hosts localhost")
    assert meta.exit_code == 0 and {"127.0.0.1", "::1"} & set(out.split()), (out, err)


def test_pinned_to_given_cpu_and_unprivileged(run):
    _meta, out, _ = run("grep -E 'Cpus_allowed_list|^Uid|CapEff' /proc/self/status")
    assert "Cpus_allowed_list:\t0\n" in out
    assert "CapEff:\t0000000000000000" in out
    if os.geteuid() == 0:
        assert "Uid:\t61000" in out  # the sandbox uid of CPU slot 0, not root


def test_each_run_gets_the_cpus_it_asks_for_whatever_came_before(sandbox_factory, sbx_tmp):
    """The runner makes each run's cpuset ready before the request comes, with the
    previous run's CPUs: a run asking for others, or for none (every CPU of the
    worker), must get those all the same."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs")
    box = sandbox_factory([0, 1], sbx_tmp)
    work = sbx_tmp / "work"
    work.mkdir()
    work.chmod(0o755)
    box.own(work)
    seen = []
    for cpus in ([1], None, [0], [0], None, [1]):
        box.run(RunRequest(["grep", "Cpus_allowed_list", "/proc/self/status"], work, LIM,
                           stdout=sbx_tmp / "out", stderr=sbx_tmp / "err", cpus=cpus))
        seen.append((sbx_tmp / "out").read_text().split()[-1])
    assert seen == ["1", "0-1", "0", "0", "0-1", "1"]


def test_a_container_started_ahead_serves_the_runs_and_starts_once(sandbox_factory, sbx_tmp):
    """A pilot starts its container before its first ticket: the runs then use that
    container (no second start), and starting again is a no-op."""
    box = sandbox_factory([0], sbx_tmp)
    box.start()
    assert box.proc is not None and box.starts == 1
    first = box.proc.pid
    box.start()
    work = sbx_tmp / "work"
    work.mkdir()
    work.chmod(0o755)
    box.own(work)
    for _ in range(2):
        meta = box.run(RunRequest(["/bin/sh", "-c", "echo up"], work, LIM,
                                  stdout=sbx_tmp / "out", stderr=sbx_tmp / "err", cpus=[0]))
        assert meta.ok and (sbx_tmp / "out").read_text() == "up\n"
    assert box.starts == 1 and box.proc.pid == first
    os.killpg(first, signal.SIGKILL)  # the container dies between two runs
    box.proc.wait()
    meta = box.run(RunRequest(["/bin/sh", "-c", "echo again"], work, LIM,
                              stdout=sbx_tmp / "out", stderr=sbx_tmp / "err", cpus=[0]))
    assert meta.ok and (sbx_tmp / "out").read_text() == "again\n"
    assert box.starts == 2 and box.proc.pid != first
    box.close()
    assert box.proc is None
    box.start()  # a closed sandbox starts a new container
    assert box.starts == 3 and box.proc is not None


def test_environment_is_clean(run, monkeypatch):
    _meta, out, _ = run("env")
    assert "GRADELINE" not in out and "SSH" not in out
    assert "PATH=/usr/local/bin:/usr/bin:/bin" in out


def test_setup_failure_is_a_sandbox_error_not_a_verdict(box, sbx_tmp, tmp_path):
    from grader.core.errors import SandboxError
    outside = tmp_path / "w"  # not under the container's work root: it cannot see it
    outside.mkdir()
    with pytest.raises(SandboxError, match="outside the work root"):
        box.run(RunRequest(["true"], outside, LIM, stdout=tmp_path / "o", stderr=tmp_path / "e"))
    missing = sbx_tmp / "no-such-dir"  # inside, but the runner cannot enter it
    with pytest.raises(SandboxError, match="gl-runner"):
        box.run(RunRequest(["true"], missing, LIM, stdout=sbx_tmp / "o", stderr=sbx_tmp / "e"))


def test_nothing_outlives_the_run(run):
    # a duration only this run has: the scan must find what this test started, never an
    # unrelated `sleep 300` (another test's Slurm job, someone waiting in a shell)
    duration = own_sleep(301)
    meta, out, _ = run(f"(setsid sh -c 'sleep {duration}' &) ; sleep 0.2; echo started")
    assert out == "started\n" and meta.ok
    for pid in sleeping(duration):
        pytest.fail(f"process {pid} survived its run: {_describe(pid)}")


def _describe(pid: str) -> str:
    """What a survivor is: state, parent, cgroups, pid namespace (and whether it dies
    within a second) -- so a rare failure says which teardown step missed it."""
    facts = []
    with contextlib.suppress(OSError):
        status = Path(f"/proc/{pid}/status").read_text()
        facts += [ln for ln in status.splitlines() if ln.startswith(("State", "PPid", "NSpid"))]
    with contextlib.suppress(OSError):
        facts.append("cgroups " + Path(f"/proc/{pid}/cgroup").read_text().replace("\n", " "))
    with contextlib.suppress(OSError):
        facts.append("pidns " + os.readlink(f"/proc/{pid}/ns/pid"))
    time.sleep(1)
    facts.append("gone after 1 s" if not Path(f"/proc/{pid}").exists() else "alive after 1 s")
    return "; ".join(facts)


def test_the_caller_does_not_collect_other_orphans_as_zombies(run):
    """A long-running caller (pytest here, or `gradeline run`) stays no subreaper
    after a run: orphans of its other children (daemons it started) go to init,
    instead of piling up as zombies under it."""
    import subprocess

    meta, _, _ = run("true")
    assert meta.ok
    daemon = subprocess.run(["sh", "-c", "(sleep 0.3 &) ; echo started"], capture_output=True,
                            text=True, check=True)  # the sleep is orphaned at once
    assert daemon.stdout == "started\n"
    time.sleep(0.8)  # the orphan has exited by now
    zombies = []
    for task in Path("/proc/self/task").iterdir():
        for pid in (task / "children").read_text().split():
            with contextlib.suppress(OSError):
                if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                    zombies.append(pid)
    assert zombies == [], f"zombie children of the caller: {zombies}"
