"""Django's PostgreSQL backend with a health check that costs no round trip while the
connection is quiet ("Subclassing the built-in database backends", Django's docs).

scripts/prod keeps each web process's connection open, and Django checks it before
each request reuses it (CONN_HEALTH_CHECKS): its check is a ``SELECT 1``, a third round
trip on a catalog read answered from its stamp (the token, the stamp). A connection
the server has closed (a restart, pg_terminate_backend, an idle timeout) has something
to read on its socket: the server's last message, or the end of the stream. So a quiet
socket is a connection that still works, and only a socket with something on it gets
Django's own check, which then finds it dead and has it replaced. What the socket
cannot show (a peer gone without a word, as behind a dead network link) the SELECT 1
would not have shown quickly either: it would wait for TCP to give up.
"""

import select

from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self):
        connection = self.connection
        if connection is None or connection.closed or connection.broken:
            return False
        try:
            poller = select.poll()
            poller.register(connection.fileno(), select.POLLIN | select.POLLPRI)
            quiet = not poller.poll(0)
        except (AttributeError, OSError, ValueError):  # no poll() here, or no socket
            quiet = False
        return quiet or super().is_usable()
