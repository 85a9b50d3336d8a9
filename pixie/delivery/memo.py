"""What a web process keeps in memory between delivery requests, bounded.

Everything here is keyed by what makes it true, so nothing is ever stale: an index by its
token's key hash and the state of every row it was computed from (index.py). A process
that restarts, or another process, recomputes: only the time differs.

Also the moments a client was last recorded, so a client that reads again within a
minute costs no write (clients.py)."""

from __future__ import annotations

import threading
from collections import OrderedDict


class Memo:
    """A least-recently-used mapping bounded by entries and by bytes (of ``size(value)``)."""

    def __init__(self, *, entries: int, max_bytes: int | None = None, size=None):
        self.entries, self.max_bytes, self.size = entries, max_bytes, size
        self._items: OrderedDict = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()  # runserver and the test server answer in threads

    def get(self, key):
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key, value) -> None:
        weight = self.size(value) if self.size else 0
        if self.max_bytes is not None and weight > self.max_bytes:
            return
        with self._lock:
            if key in self._items:
                self._bytes -= self.size(self._items.pop(key)) if self.size else 0
            self._items[key] = value
            self._bytes += weight
            while len(self._items) > self.entries or (
                self.max_bytes is not None and self._bytes > self.max_bytes
            ):
                _, dropped = self._items.popitem(last=False)
                self._bytes -= self.size(dropped) if self.size else 0

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0
