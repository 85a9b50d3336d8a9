"""A live Pixie that answers one request at a time, for the real clients.

pytest-django's ``live_server`` answers each request in a thread of its own; on SQLite in
memory (the README's test command) those threads share the test's one connection, and the
skills client fetches a token's archives all at once: two requests on one connection can
break each other, and the client drops a skill whose download failed without a word. One
request at a time is how the client's run is read here; PostgreSQL runs (CI's second pass)
are served the same way."""

from __future__ import annotations

import pytest
from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.core.servers.basehttp import WSGIServer
from django.db import connections
from django.test.testcases import LiveServerThread
from django.test.utils import modify_settings


class _OneAtATime(WSGIServer):
    """Django's development server without threads (it then closes each connection)."""

    def __init__(self, *args, connections_override=None, **kwargs):
        super().__init__(*args, **kwargs)


class _Thread(LiveServerThread):
    server_class = _OneAtATime


@pytest.fixture
def serial_live_server(transactional_db):
    """The base URL of a live Pixie on the test's database, one request at a time."""
    shared = {
        conn.alias: conn
        for conn in connections.all()
        if conn.vendor == "sqlite" and conn.is_in_memory_db()
    }
    thread = _Thread("localhost", StaticFilesHandler, connections_override=shared, port=0)
    thread.daemon = True
    for conn in shared.values():
        conn.inc_thread_sharing()
    try:
        with modify_settings(ALLOWED_HOSTS={"append": "localhost"}):
            thread.start()
            thread.is_ready.wait()
            if thread.error:
                raise thread.error
            yield f"http://localhost:{thread.port}"
            thread.terminate()
    finally:
        for conn in shared.values():
            conn.dec_thread_sharing()
