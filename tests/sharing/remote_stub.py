"""A stand-in for another server's inbox that answers with the statuses it is given.

Used only where the point is how *our* delivery reacts to a remote's answers
(errors, retries); real server-to-server delivery is tested against a second
Pixie process in test_two_servers.py.
"""

import json
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def remote_inbox(*statuses: int, then: int = 202):
    received: list[dict] = []
    answers = list(statuses)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (the stdlib's name)
            length = int(self.headers["Content-Length"])
            received.append(json.loads(self.rfile.read(length)))
            status = answers.pop(0) if answers else then
            self.send_response(status)
            if status in (301, 302, 307, 308):
                self.send_header("Location", "http://127.0.0.1:9/api/inbox/")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/api/inbox/", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
