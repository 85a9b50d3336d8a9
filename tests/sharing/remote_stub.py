"""A stand-in for another server's inbox that answers with the statuses it is given.

Used only where the point is how *our* delivery reacts to a remote's answers
(errors, retries); real server-to-server delivery is tested against a second
Pixie process in test_two_servers.py.
"""

import json
import socket
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
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
    # shutdown() waits for the loop's next poll: 0.5 s by default, at every listener's end.
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/api/inbox/", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


class _CountingServer(ThreadingHTTPServer):
    """Counts every TCP connection it accepts, whatever comes over it."""

    daemon_threads = True
    connections = 0

    def verify_request(self, request, client_address):
        self.connections += 1
        return True


class _CountingServer6(_CountingServer):
    address_family = socket.AF_INET6


@dataclass
class Listener:
    host: str
    port: int
    server: _CountingServer
    requests: list[str] = field(default_factory=list)  # "METHOD path" of each request

    @property
    def connections(self) -> int:
        return self.server.connections


@contextmanager
def loopback_listener(
    host: str = "127.0.0.1", *, behaviour: str = "answer", status: int = 202, location: str = ""
):
    """A server on a loopback address that records every connection and request.

    ``behaviour``: "answer" replies ``status`` (a 3xx points at ``location``),
    "close" hangs up without a word, "silent" reads the request and never answers.
    """
    requests: list[str] = []
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (the stdlib's name)
            requests.append(f"POST {self.path}")
            if behaviour == "close":
                self.close_connection = True
                return
            if behaviour == "silent":
                stop.wait(30)
                return
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(status)
            if location:
                self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST  # noqa: N815

        def log_message(self, *args):
            pass

    server_class = _CountingServer6 if ":" in host else _CountingServer
    server = server_class((host, 0), Handler)
    # shutdown() waits for the loop's next poll: 0.5 s by default, at every listener's end.
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    listener = Listener(host=host, port=server.server_address[1], server=server, requests=requests)
    try:
        yield listener
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
