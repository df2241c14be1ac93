"""The web pages served on two doors at once: TCP for students' own pages (a signed
link is their key), and a Unix socket for the staff pages, where the kernel names the
account at the other end (``SO_PEERCRED``) and the app checks it against the course's
staff. Staff reach the socket through ``ssh -L 8470:/path/staff.sock login1``
(OpenSSH forwards to a Unix socket as the logged-in account), or through Open
OnDemand's per-user app; "127.0.0.1" alone never makes anyone staff, since every
account on a login node has it.

uvicorn serves both sockets; its HTTP/1.1 protocol is subclassed only to put the
connection's peer into the request's ``state`` (``scope["state"]["peer"]``) when the
connection came over a Unix socket. Proxy headers are off: nothing a client sends
changes who it is."""

from __future__ import annotations

import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import uvicorn
from starlette.types import ASGIApp
from uvicorn.protocols.http.h11_impl import H11Protocol

from grader.adapters.peercred import Peer, bind_for_everyone, peer_of

PEER = "peer"  # the key in the request's state


class PeerProtocol(H11Protocol):
    """HTTP/1.1 that records, per connection, who connected over a Unix socket."""

    def connection_made(self, transport: Any) -> None:  # uvloop's or asyncio's
        super().connection_made(transport)
        sock = transport.get_extra_info("socket")
        peer: Peer | None = None
        if sock is not None and sock.family == socket.AF_UNIX:
            try:
                peer = peer_of(sock)
            except OSError:
                peer = None
        self.app_state = {**self.app_state, PEER: peer}


def peer_in(scope_state: Mapping[str, object] | None) -> Peer | None:
    """The kernel-named peer of a request (None: it came over TCP)."""
    found = (scope_state or {}).get(PEER)
    return found if isinstance(found, Peer) else None


def serve(app: ASGIApp, *, host: str, port: int, staff_socket: Path | None) -> None:
    """Serve ``app`` on ``host:port`` and, when given, on ``staff_socket`` until
    stopped (SIGTERM or Ctrl-C)."""
    config = uvicorn.Config(app, http=PeerProtocol, proxy_headers=False,
                            log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    tcp = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind((host, port))
    sockets = [tcp]
    if staff_socket is not None:
        sockets.append(bind_for_everyone(staff_socket, "staff server", dir_mode=0o711))
    try:
        server.run(sockets=sockets)
    finally:
        for s in sockets:
            s.close()
        if staff_socket is not None:
            staff_socket.unlink(missing_ok=True)
