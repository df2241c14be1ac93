"""The Unix sockets of the login node's two front doors (the desk, the staff pages):
bound for every account, a dead server's socket replaced, anything else refused.
(Who connects, as the kernel says, with real accounts: tests/site/test_login_node.py.)"""

from __future__ import annotations

import pwd
import stat
import subprocess
from pathlib import Path

import pytest

from grader.adapters.peercred import Peer, bind_for_everyone, groups_of
from grader.core.errors import ConfigError


def test_a_socket_for_everyone_replaces_a_dead_servers_and_refuses_the_rest(
        tmp_path: Path) -> None:
    path = tmp_path / "d" / "x.sock"
    dead = bind_for_everyone(path, "desk")
    assert stat.S_IMODE(path.stat().st_mode) == 0o666
    assert stat.S_IMODE(path.parent.stat().st_mode) & 0o111 == 0o111
    dead.close()  # its file stays and nothing answers there: replaced
    live = bind_for_everyone(path, "desk", dir_mode=0o711)
    live.listen(1)
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o711
    with pytest.raises(ConfigError, match="another staff server already answers"):
        bind_for_everyone(path, "staff server")
    live.close()
    path.unlink()
    path.write_text("not a socket")
    with pytest.raises(ConfigError, match="exists and is not a socket"):
        bind_for_everyone(path, "desk")
    assert path.read_text() == "not a socket"  # left alone


def test_an_accounts_groups_are_what_id_says() -> None:
    """Every account on this machine with a group beyond its own (staff by group)."""
    checked = 0
    for p in pwd.getpwall():
        want = subprocess.run(["id", "-Gn", p.pw_name], capture_output=True, text=True)
        if want.returncode:
            continue
        got = groups_of(Peer(0, p.pw_uid, p.pw_gid, p.pw_name))
        assert got == set(want.stdout.split()), p.pw_name
        checked += 1
    assert checked
