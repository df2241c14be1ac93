"""The project-local PostgreSQL: a URL that names it (as `gradeline db fresh` prints)
starts it like the default one, and a stopped one is reported with the remedy."""
import os
import subprocess

import pytest

from grader.adapters.spool import Spool
from grader.adapters.store.connections import recreate_database
from grader.adapters.store.server import database_url
from grader.core.errors import StoreError

from ..support import BIN, own_local_server


@pytest.fixture
def server(pg_url):
    with own_local_server() as found:
        yield found


def test_db_start_starts_the_local_server_a_fresh_url_names(server):
    s, state = server
    url = recreate_database(s.url, "gradeline_fresh_test")
    assert s.names(url) and not s.names("postgresql://u@db.example.org:5432/x")
    s.stop()
    env = {**os.environ, "GRADELINE_DB_URL": url, "GRADELINE_STATE_DIR": str(state)}
    Spool(state / "spool", create=True)  # status reads a spool; it makes none
    st = subprocess.run([str(BIN), "status", "--spool", str(state / "spool")],
                        capture_output=True, text=True, env=env, timeout=120)
    assert "stopped" in st.stdout and "run 'gradeline db start'" in st.stdout
    r = subprocess.run([str(BIN), "db", "start"], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == url and s.running()


def test_a_stopped_server_is_reported_with_the_remedy(server):
    s, state = server
    s.stop()
    with pytest.raises(StoreError, match=r"stopped .* run 'gradeline db start'"):
        database_url(state, None, start=False)
    with pytest.raises(StoreError, match="run 'gradeline db start'"):
        database_url(state, s.url, start=False)
    assert database_url(state, s.url, start=True) == s.url and s.running()
