"""Who is at the other end of a Unix socket, as the kernel says (``SO_PEERCRED``), and
whether that account is one a list names (by account or Unix group).

Shared by the two front doors that run on a login node, the student desk and the staff
pages: a request can claim anything, the kernel's word on the connecting process
cannot be forged, and every account on the host passes a "came from 127.0.0.1" test."""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import socket
import stat
import struct
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from grader.core.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Peer:
    """Who is at the other end, as the kernel says."""

    pid: int
    uid: int
    gid: int
    user: str  # the uid's name (``uid<N>`` when it has none)


def peer_of(sock: socket.socket) -> Peer:
    """The credentials of the process that connected (``SO_PEERCRED``)."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, gid = struct.unpack("3i", raw)
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = f"uid{uid}"
    return Peer(pid, uid, gid, user)


def groups_of(peer: Peer) -> set[str]:
    """The names of the peer account's groups: its primary one and every group that
    lists it (what ``id -Gn`` says). Asked of NSS for this account (``getgrouplist``),
    not by walking every group: a directory (SSSD, LDAP) seldom lists all of them."""
    names = set()
    for gid in os.getgrouplist(peer.user, peer.gid):
        with contextlib.suppress(KeyError):
            names.add(grp.getgrgid(gid).gr_name)
    return names


def is_one_of(peer: Peer, accounts: Collection[str], groups: Collection[str]) -> bool:
    """Whether ``peer`` is one of ``accounts``, a member of one of ``groups``, or the
    account this process runs as (which holds every byte the pages show anyway)."""
    if peer.uid == os.geteuid() or peer.user in accounts:
        return True
    return bool(groups) and bool(groups_of(peer) & set(groups))


def account_is_one_of(user: str, accounts: Collection[str],
                      groups: Collection[str]) -> bool | None:
    """Whether the account named ``user`` would pass :func:`is_one_of` when it connects
    (None: this host has no such account, so its groups cannot be asked)."""
    if user in accounts:
        return True
    try:
        pw = pwd.getpwnam(user)
    except KeyError:
        return None
    return is_one_of(Peer(0, pw.pw_uid, pw.pw_gid, user), accounts, groups)


def bind_for_everyone(path: Path, what: str, dir_mode: int | None = None) -> socket.socket:
    """A Unix socket bound at ``path`` that every account may connect to (who they are is
    asked per request: :func:`peer_of`); its directory made searchable by all (or set to
    ``dir_mode``). A socket left by a server that died is replaced.

    :param what: the server, for the refusal ("desk", "staff server").
    :raises ConfigError: when ``path`` is not a socket, or another server answers there.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    path.parent.chmod(dir_mode if dir_mode is not None else path.parent.stat().st_mode | 0o111)
    if path.exists() or path.is_symlink():
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise ConfigError(f"{path} exists and is not a socket")
        try:
            with socket.socket(socket.AF_UNIX) as probe:
                probe.connect(str(path))
            raise ConfigError(f"another {what} already answers on {path}")
        except ConnectionRefusedError:
            path.unlink()  # left by a server that died
    sock = socket.socket(socket.AF_UNIX)
    old = os.umask(0o111)
    try:
        sock.bind(str(path))
    finally:
        os.umask(old)
    path.chmod(0o666)
    return sock
