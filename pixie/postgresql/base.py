"""Django's PostgreSQL backend, with a health check that costs no round trip when there is
nothing wrong, and a cursor whose statements PostgreSQL prepares (settings.py puts it in
place of django.db.backends.postgresql).

Django checks a kept connection (CONN_HEALTH_CHECKS) at the start of every request by
sending ``SELECT 1``: on the catalog API's reads that was one round trip in three. An
idle connection has nothing to read unless the server wrote to it, and the server writes
to an idle connection only to close it (a restart, pg_terminate_backend, an idle
timeout: a FATAL message, then end of file). So the socket is asked first, without
waiting; only if it has something to say is ``SELECT 1`` sent, and a dead connection
is replaced before the request uses it, as before.
"""

import select

import psycopg
from django.db.backends.postgresql import base, operations
from django.db.backends.postgresql.psycopg_any import register_tzloader
from django.utils.asyncio import async_unsafe
from psycopg.pq import Format


class DatabaseOperations(operations.DatabaseOperations):
    def last_executed_query(self, cursor, sql, params):
        # prepared_cursor's statements are bound on the server, and Django, binding on the
        # client, would show them with $1 for their values (in connection.queries, the
        # SQL log, benchmarks/explain.py): shown with their values, as Django shows every
        # statement when all are bound on the server.
        raw = getattr(cursor, "cursor", cursor)  # Django's wrapper, or psycopg's own
        if params and not isinstance(raw, psycopg.ClientCursor):
            try:
                return self.compose_sql(sql, params)
            except (psycopg.Error, TypeError, ValueError):  # e.g. a %b (binary) value
                pass
        return super().last_executed_query(cursor, sql, params)


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations

    def is_usable(self):
        if self.connection is None or self.connection.closed:
            return False
        try:
            readable, _, _ = select.select([self.connection.fileno()], [], [], 0)
        except (OSError, ValueError):
            return False
        if not readable:
            return True
        return super().is_usable()

    @async_unsafe
    def prepared_cursor(self):
        """A cursor that sends the values apart from the SQL: pixie.core.db.prepared's queries, and
        statements whose values are large bytes (catalog.services.bundle_load stores file
        bytes as binary parameters rather than as hex in the SQL text).

        Django binds values into the SQL text on the client, so PostgreSQL parses and
        plans every statement afresh; for the catalog API's hot reads, planning cost as
        much as running them. Sent apart, a statement this connection has run
        ``prepare_threshold`` times (psycopg's default, 5) is prepared and planned once.
        Only statements of a few values go this way: one bound on the server takes at
        most 65,535 values, which Django's bulk work can exceed. The cursor is
        Django's wrapper as ``cursor()`` gives it, so queries are logged and counted.
        """
        self.close_if_health_check_failed()
        self.ensure_connection()
        with self.wrap_database_errors:
            cursor = base.ServerBindingCursor(self.connection)
            # As create_cursor does: the connection's time zone, if its loader has another.
            tzloader = self.connection.adapters.get_loader(base.TIMESTAMPTZ_OID, Format.TEXT)
            if self.timezone != tzloader.timezone:
                register_tzloader(self.timezone, cursor)
            return self._prepare_cursor(cursor)
