"""A project-local PostgreSQL server (initdb + pg_ctl in the state dir), used unless
``GRADELINE_DB_URL`` points at a site database.

PostgreSQL refuses to run as root, so as root the cluster belongs to Debian's
``postgres`` user (commands run through ``runuser``). It listens on 127.0.0.1 at a
port chosen free at init (kept in ``port``), and on a socket inside its data dir,
so it never collides with a system server. Start is idempotent.
"""

from __future__ import annotations

import logging
import os
import pwd
import shutil
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

from grader.core.errors import StoreError

log = logging.getLogger(__name__)
DBNAME = "gradeline"
INSTALL_HINT = "apt-get install postgresql (Debian/Ubuntu), or set GRADELINE_DB_URL"


def _bindir() -> Path:
    cands = sorted((p for p in Path("/usr/lib/postgresql").glob("*/bin")
                    if p.parent.name.isdigit()), key=lambda p: int(p.parent.name))
    if cands:
        return cands[-1]
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    raise StoreError(f"PostgreSQL server binaries not found: {INSTALL_HINT}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalServer:
    """One PostgreSQL cluster in ``<state>/pgdata``."""

    def __init__(self, state_dir: Path) -> None:
        self.root = state_dir / "postgres"
        self.data = self.root / "data"
        self.port_file = self.root / "port"
        self.log_file = self.root / "server.log"
        self.owner = "postgres" if os.geteuid() == 0 else None

    def _run(self, argv: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        if self.owner:
            argv = ["runuser", "-u", self.owner, "--", *argv]
        r = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
        if check and r.returncode != 0:
            raise StoreError(f"{' '.join(argv)} failed: {r.stderr.strip() or r.stdout.strip()}")
        return r

    @property
    def port(self) -> int:
        return int(self.port_file.read_text().strip())

    @property
    def url(self) -> str:
        user = self.owner or pwd.getpwuid(os.geteuid()).pw_name
        return f"postgresql://{user}@127.0.0.1:{self.port}/{DBNAME}"

    def initialised(self) -> bool:
        return (self.data / "PG_VERSION").is_file() and self.port_file.is_file()

    def init(self) -> None:
        if self.initialised():
            return
        bindir = _bindir()
        self.root.mkdir(parents=True, exist_ok=True)
        if self.data.exists():
            shutil.rmtree(self.data)  # a half-made cluster from an interrupted init
        self.data.mkdir(mode=0o700)
        if self.owner:
            pw = pwd.getpwnam(self.owner)
            for p in (self.root, self.data):
                os.chown(p, pw.pw_uid, pw.pw_gid)
            self.root.chmod(0o755)
        self._run([str(bindir / "initdb"), "-D", str(self.data), "--auth=trust",
                   "--encoding=UTF8", "--locale=C.UTF-8", "-U", self.owner or
                   pwd.getpwuid(os.geteuid()).pw_name])
        port = _free_port()
        with (self.data / "postgresql.conf").open("a") as f:
            f.write(f"\n# gradeline local server\nport = {port}\nlisten_addresses = '127.0.0.1'\n"
                    f"unix_socket_directories = '{self.data}'\nfsync = on\n"
                    "max_connections = 50\nshared_buffers = 128MB\n")
        self.port_file.write_text(f"{port}\n")

    def running(self) -> bool:
        if not self.initialised():
            return False
        r = self._run([str(_bindir() / "pg_ctl"), "-D", str(self.data), "status"], check=False)
        return r.returncode == 0

    def start(self) -> str:
        """Init if needed, start if not running, create the database; return its URL."""
        self.init()
        if not self.running():
            if self.owner:
                self.log_file.touch()
                pw = pwd.getpwnam(self.owner)
                os.chown(self.log_file, pw.pw_uid, pw.pw_gid)
            self._run([str(_bindir() / "pg_ctl"), "-D", str(self.data), "-l",
                       str(self.log_file), "-w", "-t", "60", "start"])
        deadline = time.monotonic() + 30
        while True:
            r = self._run([str(_bindir() / "psql"), "-h", "127.0.0.1", "-p", str(self.port),
                           "-d", "postgres", "-tAc",
                           f"SELECT 1 FROM pg_database WHERE datname = '{DBNAME}'"],  # noqa: S608
                          check=False)
            if r.returncode == 0:
                break
            if time.monotonic() > deadline:
                raise StoreError(f"local PostgreSQL did not come up: {r.stderr.strip()}; "
                                 f"see {self.log_file}")
            time.sleep(0.2)
        if r.stdout.strip() != "1":
            self._run([str(_bindir() / "createdb"), "-h", "127.0.0.1", "-p", str(self.port),
                       DBNAME])
        return self.url

    def stop(self, mode: str = "fast") -> None:
        if self.running():
            self._run([str(_bindir() / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w",
                       "stop"])


    def names(self, url: str) -> bool:
        """Whether ``url`` points at this server (as ``gradeline db fresh`` URLs do)."""
        if not self.initialised():
            return False
        try:
            parts = urlsplit(url)
            return parts.hostname in ("127.0.0.1", "localhost") and parts.port == self.port
        except ValueError:
            return False


def database_url(state_dir: Path, configured: str | None, *, start: bool = True) -> str:
    """The database to use: ``configured`` (GRADELINE_DB_URL), else the local server's.

    A configured URL that names the local server (a ``gradeline db fresh`` database)
    gets that server started when ``start``, like the default one; a stopped one is
    otherwise reported with the command that starts it.

    :raises StoreError: with the remedy, when there is no database to use.
    """
    server = LocalServer(state_dir)
    if configured:
        if server.names(configured) and not server.running():
            if not start:
                raise StoreError(f"the local PostgreSQL that GRADELINE_DB_URL names is "
                                 f"stopped (data in {server.data}): run 'gradeline db start'")
            server.start()
        return configured
    if start:
        return server.start()
    if not server.initialised():
        raise StoreError("no database: set GRADELINE_DB_URL or run 'gradeline db start'")
    if not server.running():
        raise StoreError(f"the local PostgreSQL is stopped (data in {server.data}): "
                         "run 'gradeline db start'")
    return server.url
