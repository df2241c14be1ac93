"""The sandbox contract's "MPI ranks" (CONTRACT.md): ``gl-runner --once`` runs one
request in a container that shares the host's network, as an srun task's launcher starts
it, and with ``net_mpi 1`` the run reaches its PMIx server and its peers on the step's
reserved ports, and nothing else, whatever it tries."""
import ctypes
import os
import platform
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from grader.core.limits import MIB, Limits
from grader.judge.ports import RunRequest

from ..mpi_launch import pass_task_env, rank_container

pytestmark = pytest.mark.sandbox

HERE = Path(__file__).resolve().parent
RUNNER = "/usr/local/bin/gl-runner"
LIM = Limits(cpu_time_s=5.0, wall_time_s=10.0, memory_bytes=64 * MIB, processes=16)


class Listener:
    """A TCP (or UDP) socket of this test on ``host``:``port`` that counts who came."""

    def __init__(self, host: str, port: int = 0, backlog: int = 256, accept: bool = True,
                 udp: bool = False) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM if udp else socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.port = self.sock.getsockname()[1]
        self.got: list[bytes] = []
        if udp:
            self.sock.settimeout(0.1)
            return
        self.sock.listen(backlog)
        if accept:
            threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.settimeout(0.2)
            try:
                self.got.append(conn.recv(64))
            except OSError:
                self.got.append(b"")
            conn.close()

    def datagrams(self) -> int:
        n = 0
        while True:
            try:
                self.sock.recv(64)
            except OSError:
                return n
            n += 1

    def close(self) -> None:
        self.sock.close()


def _landlock_abi() -> int:
    """The kernel's Landlock ABI (landlock_create_ruleset(NULL, 0, VERSION)), 0 if none."""
    libc = ctypes.CDLL(None, use_errno=True)
    return max(0, libc.syscall(444, None, 0, 1))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def once(sandbox_factory, sbx_tmp):
    """once(request lines, task environment) -> (exit status, reply): gl-runner --once in
    a container on the host's network, as a rank's launcher starts it."""
    box = sandbox_factory([0], sbx_tmp)
    work = sbx_tmp / "work"
    work.mkdir()
    work.chmod(0o755)
    box.own(sbx_tmp)  # the runner writes the runs' output files there

    def go(req: RunRequest, extra: list[str], task: dict[str, str], pass_fds=(), during=None):
        path = sbx_tmp / "rank.req"
        path.write_text(box.request_text(req).removesuffix("run\n")
                        + "".join(f"{e}\n" for e in extra)
                        + "run\n")
        argv, env = rank_container(box, [RUNNER, "--once", box.inside(path)])
        argv, env = pass_task_env(box.runtime, argv, env, task)
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, pass_fds=pass_fds, start_new_session=True)
        seen = during(proc.pid) if during else None
        out, err = proc.communicate(timeout=60)
        reply = dict(ln.split(": ", 1) for ln in out.splitlines() if ": " in ln)
        return proc.returncode, reply, err, seen

    go.box, go.work = box, work
    return go


def _compile(box, work: Path, tmp: Path, name: str, flags: list[str]) -> None:
    """``name``.c of this directory, compiled by the image's gcc in a run of its own."""
    (work / f"{name}.c").write_text((HERE / f"{name}.c").read_text())
    box.own(work)
    meta = box.run(RunRequest(["gcc", "-O2", "-o", name, f"{name}.c", *flags], work,
                              Limits(cpu_time_s=30.0), stdout=tmp / "cc.out",
                              stderr=tmp / "cc.err", workdir_writable=True))
    assert meta.ok, (tmp / "cc.err").read_text()


def test_a_rank_reaches_its_server_and_peers_and_nothing_else(once, sbx_tmp):
    _compile(once.box, once.work, sbx_tmp, "mpinet_probe", ["-pthread"])
    pmix = Listener("127.0.0.1")
    other_address = Listener("127.0.0.2", pmix.port)
    other_port = Listener("127.0.0.1")
    peer = Listener("127.0.0.3")
    peer_other_port = Listener("127.0.0.3", other_port.port)
    hang = Listener("127.0.0.3", backlog=0, accept=False)  # its queue fills: never answers
    udp = Listener("127.0.0.1", pmix.port, udp=True)
    own = _free_port()
    abstract = f"gl-mpinet-{os.getpid()}"
    node_socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    node_socket.bind("\0" + abstract)
    node_socket.settimeout(0.1)
    abi = _landlock_abi()
    task = {"PMIX_SERVER_URI41": f"pmix-server.7;tcp4://127.0.0.1:{pmix.port}",
            "SLURM_STEP_RESV_PORTS": f"{peer.port},{hang.port},{own}", "SLURM_PROCID": "0"}
    argv = ["./mpinet_probe", *map(str, (pmix.port, other_port.port, peer.port, hang.port, own)),
            abstract]
    req = RunRequest(argv, once.work, LIM, stdout=sbx_tmp / "out", stderr=sbx_tmp / "err")
    try:
        rc, reply, err, _ = once(req, ["net_mpi 1", "net_peer 127.0.0.3"], task)
        time.sleep(0.3)  # the listeners' threads take what came
        assert rc == 0 and reply["status"] == "ok" and reply["exit-code"] == "0", (reply, err)
        lines = (sbx_tmp / "out").read_text().splitlines()
        got = dict(ln.split(" ", 1) for ln in lines)
        assert {k: v for k, v in got.items() if k not in ("race", "while_pending")} == {
            "connect_pmix": "OK", "connect_pmix_nonblocking": "OK", "connect_peer": "OK",
            "connect_other_port": "EACCES", "connect_other_address": "EACCES",
            "connect_peer_other_port": "EACCES",
            "connect_ipv6": got["connect_ipv6"] if got["connect_ipv6"] == "EAFNOSUPPORT"
            else "EACCES",  # a kernel without IPv6 has no such socket at all
            "connect_unix_abstract": "EACCES",
            # Landlock's scope (ABI 6) keeps it in the run; without it, it gets through
            "unix_abstract_datagram": "EPERM" if abi >= 6 else "OK",
            "udp_socket": "OK", "udp_sendto": "EPERM",
            "udp_sendmsg": "EINVAL", "udp_connect": "EACCES", "icmp_socket": "EACCES",
            "tcp_fastopen_sendto": "EPERM",
            "tcp_fastopen_sendmsg": "EPERM", "tcp_fastopen_connect": "EPERM",
            "mptcp_socket": "EACCES", "io_uring": "EPERM", "raw_socket": "EACCES",
            "packet_socket": "EACCES", "netlink_socket": "EACCES", "sctp_socket": "EACCES",
            **({"x32_socket": "EPERM"} if platform.machine() == "x86_64" else {}),
            "bind_reserved": "OK", "listen_reserved": "OK", "bind_port_0": "OK",
            "listen_port_0": "EACCES", "bind_other_port": "EACCES",
            "ptrace_supervisor": "EPERM", "read_supervisor": "EPERM",
            # refused (Landlock's scope, or another uid), or sent and dropped (an init
            # gets no signal from inside its namespace that it does not handle)
            "kill_supervisor": got["kill_supervisor"] if got["kill_supervisor"] == "OK"
            else "EPERM",
            "after_kill_other_address": "EACCES", "after_kill_pmix": "OK"}, lines
        # the race: a thread rewriting the address after the check reached nothing else,
        # and the check did see both addresses
        connected, refused, elsewhere = (int(x) for x in got["race"].split()[1::2])
        assert elsewhere == 0 and connected > 0 and refused > 0, got["race"]
        # a peer that never answers held no other call
        result, seconds = got["while_pending"].split()
        assert result == "OK" and float(seconds) < 1.0, got["while_pending"]
        assert pmix.got[0] == b"hello\n"
        assert len(peer.got) == 1 and not other_address.got and not other_port.got
        assert not peer_other_port.got and udp.datagrams() == 0
        if abi >= 6:
            with pytest.raises(TimeoutError):
                node_socket.recv(8)
        assert reply["net-confinement"] == ("supervisor+landlock6" if abi >= 6 else
                                            "supervisor+landlock4" if abi >= 4 else "supervisor")
        assert int(reply["net-refused"]) >= 8 + refused
        assert reply["rank"] == "0"
    finally:
        for listener in (pmix, other_address, other_port, peer, peer_other_port, hang, udp):
            listener.close()
        node_socket.close()


def _runner_fds(root: int, want: str) -> list[str]:
    """The gl-runner processes below ``root`` (the container) that hold ``want``."""
    from ..support import descendants

    holders = []
    for pid in descendants(root):
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() != "gl-runner":
                continue
            fds = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            continue
        if want in fds:
            holders.append(pid)
    return holders


def test_once_runs_one_rank_with_its_files_and_variables(once, sbx_tmp):
    """--once: the rank's own output files (%r), its task's variables where asked (the
    request's own win), ``rank`` in the reply, and nothing the task inherited kept open
    (an srun task inherits the stepd's listening socket)."""
    task = {"SLURM_PROCID": "5", "PMIX_RANK": "5", "PMIX_CLASH": "task", "OMPI_X": "1"}
    req = RunRequest(["/bin/sh", "-c", "sleep 1; env"], once.work, LIM,
                     stdout=sbx_tmp / "out.%r", stderr=sbx_tmp / "err.%r",
                     env={"PMIX_CLASH": "request", "PATH": "/usr/bin:/bin"})
    read_end, write_end = os.pipe()
    inherited = os.readlink(f"/proc/self/fd/{write_end}")
    holders: list[list[str]] = []

    def look(pid: int) -> None:
        time.sleep(0.6)  # the run sleeps: the runner, its stub and the run's init are up
        holders.append(_runner_fds(pid, inherited))

    try:
        rc, reply, err, _ = once(req, ["env_pass PMIX_"], task, pass_fds=(write_end,),
                                 during=look)
    finally:
        os.close(read_end)
        os.close(write_end)
    assert rc == 0 and reply["status"] == "ok" and reply["rank"] == "5", (reply, err)
    env = (sbx_tmp / "out.5").read_text().split()
    assert "PMIX_RANK=5" in env and "PMIX_CLASH=request" in env
    assert not any(v.startswith(("SLURM_", "OMPI_")) for v in env)
    assert holders == [[]], holders
    # a request that cannot run: its reply says why, and --once exits 2
    bad = RunRequest(["true"], once.work, LIM, stdout=sbx_tmp / "o.%r", stderr=sbx_tmp / "e")
    rc, reply, _, _ = once(bad, [], {})
    assert rc == 2 and reply["status"] == "error" and "SLURM_PROCID" in reply["error"]
