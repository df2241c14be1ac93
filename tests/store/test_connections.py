"""Stores over pooled connections (``Store(Connections(url))``): a server's batches and a
desk's requests reuse connections, migrate once, and never reuse one a failed call
left behind."""

from __future__ import annotations

import pytest

from grader.adapters.store.connections import Connections
from grader.adapters.store.postgres import Store
from grader.core.errors import StoreError


def test_a_store_closed_gives_its_connection_back_migrated_once(db):
    pool = Connections(db)
    with Store(pool) as s:
        first = s.conn
        assert s.migrate() == [] and pool.migrated  # the fixture's migrations: none new
    with Store(pool) as s:
        assert s.conn is first and s.migrate() == [] and s.alive()
        assert s.count("SELECT count(*) FROM submissions") == 0
    assert pool.opened == 1
    pool.close()
    assert first.closed


def test_a_connection_whose_call_failed_is_closed_not_lent_again(db):
    pool = Connections(db)
    with Store(pool) as s:
        first = s.conn
        with pytest.raises(StoreError):
            s.count("SELECT count(*) FROM no_such_table")
    assert first.closed
    with Store(pool) as s:
        assert s.conn is not first and s.count("SELECT 1") == 1
    assert pool.opened == 2
    pool.close()
