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
import struct
from collections.abc import Collection
from dataclasses import dataclass


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
    lists it (what ``id -Gn`` says, read from the group database)."""
    names = {g.gr_name for g in grp.getgrall() if peer.user in g.gr_mem}
    with contextlib.suppress(KeyError):
        names.add(grp.getgrgid(peer.gid).gr_name)
    return names


def is_one_of(peer: Peer, accounts: Collection[str], groups: Collection[str]) -> bool:
    """Whether ``peer`` is one of ``accounts``, a member of one of ``groups``, or the
    account this process runs as (which holds every byte the pages show anyway)."""
    if peer.uid == os.geteuid() or peer.user in accounts:
        return True
    return bool(groups) and bool(groups_of(peer) & set(groups))
