"""Connections kept open between uses (``adapters.store.pool``): one given back is lent
again without opening another, one that broke is closed, not lent again, and an idle
one that died is replaced before it is lent."""

from __future__ import annotations

from grader.adapters.store.pool import Pool


class Conn:
    """A resource that counts how many were made and says whether it is closed."""

    made = 0

    def __init__(self) -> None:
        Conn.made += 1
        self.closed = self.dead = False


def pool(check_after_s: float = 1.0) -> Pool[Conn]:
    Conn.made = 0
    return Pool(Conn, alive=lambda c: not c.dead, close=lambda c: setattr(c, "closed", True),
                check_after_s=check_after_s)


def test_a_connection_given_back_is_lent_again_without_opening_another() -> None:
    p = pool()
    a = p.lend()
    p.give_back(a)
    b = p.lend()
    assert b is a and Conn.made == 1 == p.opened
    c = p.lend()  # while b is out: a second one
    assert c is not b and Conn.made == 2
    p.give_back(b)
    p.give_back(c)
    p.close()
    assert a.closed and c.closed


def test_a_broken_connection_is_closed_not_lent_again() -> None:
    p = pool()
    a = p.lend()
    p.give_back(a, broken=True)
    assert a.closed
    assert p.lend() is not a and Conn.made == 2


def test_no_more_than_keep_wait_idle() -> None:
    p = pool()
    p.keep = 1
    a, b = p.lend(), p.lend()
    p.give_back(a)
    p.give_back(b)
    assert b.closed and not a.closed and p.lend() is a


def test_an_idle_connection_that_died_is_replaced_before_it_is_lent() -> None:
    """A PostgreSQL restart kills the idle connections: the one lent next is checked
    first (once it idled past check_after_s) and a fresh one made in its place."""
    p = pool(check_after_s=0.0)
    a = p.lend()
    p.give_back(a)
    a.dead = True  # what alive() finds after the server restarted
    b = p.lend()
    assert b is not a and a.closed and p.replaced == 1
    p.give_back(b)
    assert p.lend() is b and p.replaced == 1 and Conn.made == 2
