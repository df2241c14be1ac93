"""Connections to the results database: opened with a bounded wait and a clear error,
checked with one round trip, kept in a pool (``pool.Pool``) between the uses of a
server or a desk (``Store(connections)`` borrows one; closing the store gives it
back); and an empty database made on a server (``gradeline db create``, benchmarks)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql
from psycopg.pq import TransactionStatus
from psycopg.rows import TupleRow

from grader.adapters.store.pool import Pool
from grader.core.errors import StoreError

Connection = psycopg.Connection[TupleRow]


def connect(url: str, timeout_s: int = 5) -> Connection:
    """:raises StoreError: naming why the database cannot be reached."""
    try:
        return psycopg.connect(url, connect_timeout=timeout_s)
    except psycopg.OperationalError as e:
        raise StoreError(f"cannot connect to the results database: "
                         f"{str(e).strip().splitlines()[0]}") from e


def answers(conn: Connection) -> bool:
    """Whether the connection still answers: one round trip. A server restarted since
    it was opened left it dead, and its next real use would fail."""
    if conn.closed:
        return False
    try:
        with conn.transaction():
            conn.execute("SELECT 1")
    except psycopg.Error:
        return False
    return True


def reusable(conn: Connection) -> bool:
    """Whether a connection given back may be lent again as it is (open, no transaction
    left behind)."""
    return not conn.closed and not conn.broken and \
        conn.info.transaction_status is TransactionStatus.IDLE


class Connections(Pool[Connection]):
    """Connections to the database at ``url``; ``migrated`` once one of them applied the
    migrations (the next store lent one skips the check)."""

    def __init__(self, url: str, keep: int = 8, check_after_s: float = 1.0) -> None:
        super().__init__(lambda: connect(url), alive=answers, close=lambda c: c.close(),
                         keep=keep, check_after_s=check_after_s)
        self.url = url
        self.migrated = False


def recreate_database(url: str, name: str) -> str:
    """An empty database ``name`` on the server of ``url`` (dropped first); its URL."""
    if not name or not name.replace("_", "").isalnum():
        raise StoreError(f"database name {name!r}: use letters, digits and _")
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=5) as c:
            c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                sql.Identifier(name)))
            c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.Error as e:
        raise StoreError(f"cannot create database {name}: {str(e).strip()}") from e
    parts = urlsplit(url)  # keep the query: the local server's names its passfile
    return urlunsplit(parts._replace(path="/" + name))
