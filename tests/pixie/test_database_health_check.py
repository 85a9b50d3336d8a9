"""A kept PostgreSQL connection is checked at the start of each request without a round
trip while it is healthy, and replaced, not failing a request, when the server dropped it
(pixie.postgresql)."""

import time

import psycopg
import pytest
from django.db import connection, connections

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's backend"),
]


@pytest.fixture
def kept_connection(monkeypatch):
    """The connection as a production web process keeps it between requests."""
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 60)
    connection.ensure_connection()
    assert connection.health_check_enabled  # settings: conn_health_checks
    connection.close_at = time.monotonic() + 60  # as connect() sets it with CONN_MAX_AGE
    yield connection


@pytest.fixture
def statements_sent(monkeypatch):
    """Statements sent straight through psycopg (as Django's SELECT 1 is), counted."""
    sent = []
    real = psycopg.Connection.cursor

    def cursor(self, *args, **kwargs):
        sent.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "cursor", cursor)
    return sent


def test_a_healthy_kept_connection_is_reused_without_a_round_trip(kept_connection, statements_sent):
    before = kept_connection.connection
    kept_connection.close_if_unusable_or_obsolete()  # a request begins
    kept_connection.close_if_health_check_failed()
    assert statements_sent == [] and kept_connection.connection is before
    with kept_connection.cursor() as cursor:
        cursor.execute("SELECT 2")
        assert cursor.fetchone() == (2,)


def test_a_connection_the_server_dropped_is_replaced_before_the_request_uses_it(
    kept_connection,
):
    with kept_connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    finally:
        other.close()
    deadline = time.monotonic() + 5
    while kept_connection.is_usable() and time.monotonic() < deadline:
        time.sleep(0.05)  # the server's goodbye is on its way
    kept_connection.close_if_unusable_or_obsolete()  # the next request begins
    with kept_connection.cursor() as cursor:  # checked, found dead, replaced
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != pid
