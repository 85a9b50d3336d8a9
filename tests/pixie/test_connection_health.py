"""Django checks a kept connection before each request reuses it (CONN_HEALTH_CHECKS);
Pixie's backend (pixie.database.postgresql) looks at the socket first, so a quiet
connection is reused without a SELECT 1, and one the server has closed is still
replaced before the request's first query rather than failing it."""

import time

import psycopg
import pytest
from django.core.signals import request_finished, request_started
from django.db import connection, connections

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def kept_connection(postgres_only, monkeypatch):
    """The default connection as scripts/prod keeps it: open across requests, checked."""
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 60)
    monkeypatch.setitem(connection.settings_dict, "CONN_HEALTH_CHECKS", True)
    connection.close()
    connection.ensure_connection()
    yield connection
    connection.close()


def last_statement_of(pid: int) -> str:
    """What the session `pid` ran last, as PostgreSQL reports it to another session."""
    params = connection.get_connection_params()
    with psycopg.connect(**params, autocommit=True) as other:
        return other.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone()[
            0
        ]


def a_request(query: str):
    """One request's life as Django's handler runs it: its signals, and one query."""
    request_started.send(sender=__name__)
    try:
        with connection.cursor() as cursor:
            cursor.execute(query)
            return cursor.fetchone()[0]
    finally:
        request_finished.send(sender=__name__)


def test_the_backend_is_djangos_postgresql_backend_subclassed(kept_connection):
    from django.db.backends.postgresql.base import DatabaseWrapper

    assert isinstance(connections["default"], DatabaseWrapper)
    assert type(connections["default"]).__module__ == "pixie.database.postgresql.base"


def test_a_quiet_connection_is_reused_without_a_statement_to_check_it(kept_connection):
    pid = a_request("SELECT pg_backend_pid() /* first request */")
    request_started.send(sender=__name__)
    try:
        connection.cursor().close()  # Django's health check runs here, before any query
        assert connection.health_check_done
        assert last_statement_of(pid) == "SELECT pg_backend_pid() /* first request */"
        assert connection.connection.info.backend_pid == pid
    finally:
        request_finished.send(sender=__name__)


def test_a_connection_the_server_closed_is_replaced_before_the_next_request_uses_it(
    kept_connection,
):
    pid = a_request("SELECT pg_backend_pid()")
    params = connection.get_connection_params()
    with psycopg.connect(**params, autocommit=True) as other:
        assert other.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone()[0] is True
        deadline = time.monotonic() + 10
        while other.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid]
        ).fetchone()[0]:
            assert time.monotonic() < deadline, "the session outlived pg_terminate_backend"
            time.sleep(0.05)
    # The next request gets a new session and its answer, not an error.
    assert a_request("SELECT pg_backend_pid()") != pid
