"""A project-local PostgreSQL server (initdb + pg_ctl in the state dir), used unless
``GRADELINE_DB_URL`` points at a site database.

PostgreSQL refuses to run as root, so as root the cluster belongs to Debian's
``postgres`` user (commands run through ``runuser``). It listens on 127.0.0.1 at a
port chosen free at init (kept in ``port``), and on a socket inside its data dir,
so it never collides with a system server. Start is idempotent.

Who gets in (SECURITY.md): the cluster's owner by peer authentication on the socket
in the 0700 data dir (only that account and root can reach it), used for setup only;
gradeline itself by scram-sha-256 as the ``gradeline`` role, which owns its databases
and is no superuser, with a generated secret kept 0600 in ``passfile`` (the URL names
the file, never the secret). Nobody else: there is no ``trust`` line. A cluster made
by an earlier version (``trust``) is converted on its next start, data kept.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

from grader.core.errors import StoreError

log = logging.getLogger(__name__)
DBNAME = "gradeline"
ROLE = "gradeline"
AUTH_VERSION = "peer+scram-1"  # the content of ``auth`` once a cluster is set up this way
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


def scram_verifier(password: str, *, iterations: int = 4096) -> str:
    """The SCRAM-SHA-256 verifier PostgreSQL stores (RFC 5802/7677), made here so the
    secret itself is never sent to the server (nor into its log on an error)."""
    salt = secrets.token_bytes(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client = hmac.digest(salted, b"Client Key", "sha256")
    stored = hashlib.sha256(client).digest()
    server = hmac.digest(salted, b"Server Key", "sha256")

    def b64(b: bytes) -> str:
        return base64.b64encode(b).decode()
    return f"SCRAM-SHA-256${iterations}:{b64(salt)}${b64(stored)}:{b64(server)}"


def _hba(owner: str, role: str) -> str:
    return (f"# gradeline local server ({AUTH_VERSION}); see grader/adapters/store/server.py\n"
            f"# the cluster's owner: peer authentication on the socket in the 0700 data dir\n"
            f"local  all  {owner}  peer\n"
            f"# gradeline: scram-sha-256, the secret in the state dir's postgres/passfile\n"
            f"local  all  {role}  scram-sha-256\n"
            f"host   all  {role}  127.0.0.1/32  scram-sha-256\n"
            f"# nobody else\n")


_REOWN = """
ALTER SCHEMA public OWNER TO {role};
DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT c.oid::regclass AS name, c.relkind FROM pg_class c
           JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
             AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = c.oid
                             AND d.classid = 'pg_class'::regclass AND d.deptype IN ('a', 'i'))
  LOOP
    EXECUTE format('ALTER %s %s OWNER TO {role}', CASE r.relkind WHEN 'S' THEN 'SEQUENCE'
      WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END, r.name);
  END LOOP;
END $$;
"""


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
        self.passfile = self.root / "passfile"
        self.auth_file = self.root / "auth"
        self.owner = "postgres" if os.geteuid() == 0 else None
        self.owner_name = self.owner or pwd.getpwuid(os.geteuid()).pw_name
        self.role = ROLE if self.owner_name != ROLE else f"{ROLE}_app"

    def _run(self, argv: list[str], check: bool = True,
             stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        if self.owner:
            argv = ["runuser", "-u", self.owner, "--", *argv]
        r = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120,
                           input=stdin)
        if check and r.returncode != 0:
            raise StoreError(f"{' '.join(argv)} failed: {r.stderr.strip() or r.stdout.strip()}")
        return r

    @property
    def port(self) -> int:
        return int(self.port_file.read_text().strip())

    @property
    def url(self) -> str:
        """gradeline's URL: the least-privilege role, the secret read by libpq from
        ``passfile`` (so the URL may be printed and logged)."""
        return (f"postgresql://{self.role}@127.0.0.1:{self.port}/{DBNAME}"
                f"?passfile={quote(str(self.passfile), safe='/')}")

    def _psql(self, sql: str, database: str = "postgres") -> str:
        """Run ``sql`` as the cluster's owner over the socket (peer authentication)."""
        r = self._run([str(_bindir() / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-tA",
                       "-h", str(self.data), "-p", str(self.port), "-U", self.owner_name,
                       "-d", database, "-f", "-"], stdin=sql)
        return r.stdout.strip()

    def secured(self) -> bool:
        """Whether this cluster admits only its owner and gradeline's role."""
        try:
            hba = (self.data / "pg_hba.conf").read_text()
            done = self.auth_file.read_text().strip() == AUTH_VERSION
        except OSError:
            return False
        return done and hba == _hba(self.owner_name, self.role) and self._passfile_private()

    def _passfile_private(self) -> bool:
        try:
            st = self.passfile.stat()
        except OSError:
            return False
        return st.st_uid == os.geteuid() and st.st_mode & 0o077 == 0

    def _write_hba(self) -> bool:
        """Install gradeline's pg_hba.conf; whether it changed."""
        path = self.data / "pg_hba.conf"
        want = _hba(self.owner_name, self.role)
        try:
            if path.read_text() == want:
                return False
        except OSError:
            pass
        tmp = path.with_name("pg_hba.conf.gradeline")
        tmp.write_text(want)
        if self.owner:
            pw = pwd.getpwnam(self.owner)
            os.chown(tmp, pw.pw_uid, pw.pw_gid)
        tmp.chmod(0o600)
        tmp.replace(path)
        return True

    def _secret(self) -> str:
        """gradeline's password: the one in ``passfile``, else a new one written there
        (0600, created exclusively so no other account can have opened it first)."""
        try:
            line = self.passfile.read_text().strip()
            if line.count(":") == 4 and line.split(":")[:2] == ["127.0.0.1", str(self.port)]:
                return line.rsplit(":", 1)[1]
        except FileNotFoundError:
            pass
        secret = secrets.token_hex(24)
        tmp = self.passfile.with_name(f"passfile.{os.getpid()}")
        tmp.unlink(missing_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(f"127.0.0.1:{self.port}:*:{self.role}:{secret}\n")
        tmp.replace(self.passfile)
        return secret

    def _provision(self) -> None:
        """Create (or convert an earlier cluster to) gradeline's role and ownership:
        the role owns every database of the cluster and their public schemas."""
        verifier = scram_verifier(self._secret())
        self._psql(f"""
            SELECT 'CREATE ROLE {self.role}' WHERE NOT EXISTS
              (SELECT 1 FROM pg_roles WHERE rolname = '{self.role}') \\gexec
            ALTER ROLE {self.role} LOGIN CREATEDB NOSUPERUSER NOCREATEROLE
              PASSWORD '{verifier}';
            SELECT 'CREATE DATABASE {DBNAME} OWNER {self.role}' WHERE NOT EXISTS
              (SELECT 1 FROM pg_database WHERE datname = '{DBNAME}') \\gexec
            """)  # noqa: S608 - names are constants, the verifier is base64
        dbs = self._psql("SELECT datname FROM pg_database WHERE NOT datistemplate "
                         "AND datname <> 'postgres'").split()
        for db in dbs:
            self._psql(f'ALTER DATABASE "{db}" OWNER TO {self.role};'
                       + _REOWN.format(role=self.role), database=db)
        self.auth_file.write_text(AUTH_VERSION + "\n")
        log.info("local PostgreSQL: only %s (peer) and %s (scram, %s) may connect",
                 self.owner_name, self.role, self.passfile)

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
        self._run([str(bindir / "initdb"), "-D", str(self.data), "--auth-local=peer",
                   "--auth-host=scram-sha-256", "--encoding=UTF8", "--locale=C.UTF-8",
                   "-U", self.owner_name])
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
        """Init if needed, secure, start if not running, provision; return the URL."""
        self.init()
        changed = self._write_hba()
        if not self.running():
            if self.owner:
                self.log_file.touch()
                pw = pwd.getpwnam(self.owner)
                os.chown(self.log_file, pw.pw_uid, pw.pw_gid)
            self._run([str(_bindir() / "pg_ctl"), "-D", str(self.data), "-l",
                       str(self.log_file), "-w", "-t", "60", "start"])
        elif changed:  # an earlier cluster's trust rules end now
            self._run([str(_bindir() / "pg_ctl"), "-D", str(self.data), "reload"])
        deadline = time.monotonic() + 30
        while True:
            try:
                self._psql("SELECT 1")
                break
            except StoreError as e:
                if time.monotonic() > deadline:
                    raise StoreError(f"local PostgreSQL did not come up: {e}; "
                                     f"see {self.log_file}") from e
                time.sleep(0.2)
        if not self.secured():
            self._provision()
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
