"""A server's stores are kept open between batches: opened and migrated once, lent
again when given back, and a store whose call failed is closed, not lent again."""

import pytest

from grader.core.errors import StoreError
from grader.pipeline.store_pool import StorePool

from ..support import MemoryStore


class Counted(MemoryStore):
    opened = 0

    def __init__(self) -> None:
        super().__init__()
        Counted.opened += 1
        self.migrations = 0
        self.closed = False

    def migrate(self) -> list[str]:
        self.migrations += 1
        return super().migrate()

    def close(self) -> None:
        self.closed = True

    def alive(self) -> bool:
        return not getattr(self, "dead", False)


def test_a_store_given_back_is_lent_again_without_opening_or_migrating():
    Counted.opened = 0
    pool = StorePool(Counted)
    a = pool()
    a.migrate()
    a.close()
    b = pool()
    b.migrate()
    assert Counted.opened == 1 and b.store is a.store and a.store.migrations == 1
    c = pool()  # while b is out: a second connection
    assert Counted.opened == 2 and c.store is not b.store
    b.close()
    c.close()
    pool.close()
    assert a.store.closed and c.store.closed


def test_a_store_whose_call_failed_is_closed_not_lent_again():
    Counted.opened = 0
    pool = StorePool(Counted)
    a = pool()
    a.store.down = True
    with pytest.raises(StoreError):
        a.ingest([])
    a.close()
    assert a.store.closed
    b = pool()
    assert b.store is not a.store and Counted.opened == 2


def test_an_idle_store_that_died_is_replaced_before_it_is_lent():
    """A PostgreSQL restart kills the idle connections: the one lent next is checked
    first (once it idled past check_after_s) and a fresh one opened in its place."""
    Counted.opened = 0
    pool = StorePool(Counted, check_after_s=0.0)
    a = pool()
    a.close()
    a.store.dead = True  # what alive() finds after the server restarted
    b = pool()
    assert b.store is not a.store and a.store.closed and pool.replaced == 1
    b.close()
    c = pool()  # a live one is lent again as it is
    assert c.store is b.store and pool.replaced == 1 and Counted.opened == 2
