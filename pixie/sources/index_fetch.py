"""Reading a discovery index and its entries over HTTP, fenced as a contact's inbox is.

Every URL (the index's, each entry's, each redirect's) is checked before a connection:
https:// (plain http:// only with PIXIE_SOURCES_ALLOW_PRIVATE), its host named plainly,
no user or password, and every address the host resolves to a public one (one internal
answer refuses the name; the setting allows loopback and private ones). The connection
then goes to exactly the addresses checked, never a second lookup (DNS rebinding), with
the certificate checked against the name.

Same host only: an entry's URL and every redirect must stay on the index's own origin
(scheme, host and port). A site's index names its own skills; one that points elsewhere
would have Pixie fetch from a server the operator never named, so it is refused in
words that say where to point the source instead. Redirects are followed by hand, at
most MAX_REDIRECTS, each hop checked again as above.

One check is bounded: a deadline for everything it reads (PIXIE_SOURCES_FETCH_SECONDS; a
watchdog cuts the socket at it, so a server that trickles bytes cannot hold the check),
a limit for each answer's body (enforced while it streams, whatever Content-Length says)
and a budget of bytes for all of them together (PIXIE_SOURCES_MAX_BYTES).

The standard library's http.client, as pixie.sharing.dispatch uses it: it never follows
a redirect or reads a proxy from the environment by itself, and needs no dependency.
"""

from __future__ import annotations

import hashlib
import http.client
import re
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import BinaryIO
from urllib.parse import urljoin, urlsplit

from pixie.core.errors import DestinationRefused
from pixie.core.web.addresses import (
    IPAddress,
    connect_to_one_of,
    first_internal,
    host_is_plain,
    is_literal,
    resolved_addresses,
)

from .destinations import DEFAULT_PORTS, SETTING, Destination
from .git_mirror import FetchFailed, FetchLimitExceeded
from .upstream_text import upstream_line

MAX_URL = 2000
MAX_REDIRECTS = 5
REDIRECTS = {301, 302, 303, 307, 308}
CHUNK = 64 * 1024
SHOWN_URL = 300
USER_AGENT = "Pixie (sources: a discovery index)"

# Printable ASCII without space, backslash, quotes or '#': a query and %-escapes are a
# site's own business (the host is what is checked); a fragment is never sent.
_URL_CHARACTERS = re.compile(r"[A-Za-z0-9\-._~:/?\[\]@!$&()*+,;=%]+")

Origin = tuple[str, str, int]


def shown_url(url: object) -> str:
    return upstream_line(str(url), limit=SHOWN_URL)


def index_url_problems(url: object, *, allow_private: bool, what: str = "The index's URL"):
    """Everything wrong with an index's (or an entry's) URL as text, no lookups: empty
    when fine."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL:
        return [f"{what} must be a URL of at most {MAX_URL:,} characters"]
    if not _URL_CHARACTERS.fullmatch(url):
        return [f"{what} must be plain ASCII with no spaces, control characters or fragment"]
    if url.startswith("http://"):
        if not allow_private:
            return [
                f"{what} is plain http://, turned off on this server; an index is read over "
                f"https:// ({SETTING} allows plain http://)"
            ]
    elif not url.startswith("https://"):
        return [f"{what} must be an https:// URL"]
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return [f"{what} is not a URL"]
    if "@" in parts.netloc:
        return [f"{what} must not hold a user or a password"]
    hostname = parts.hostname or ""
    if not hostname or hostname.endswith(".") or not host_is_plain(hostname, netloc=parts.netloc):
        return [f"{what} must name its host as a DNS name or an IP address"]
    if port == 0:
        return [f"{what} must not name port 0"]
    if any(segment in {".", ".."} for segment in parts.path.split("/")):
        return [f"{what} must not contain '.' or '..' folders"]
    return []


def origin_of(url: str) -> Origin:
    parts = urlsplit(url)
    return parts.scheme, parts.hostname or "", parts.port or DEFAULT_PORTS[parts.scheme]


def shown_origin(origin: Origin) -> str:
    scheme, host, port = origin
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}" + ("" if port == DEFAULT_PORTS[scheme] else f":{port}")


def destination_of(url: str, *, allow_private: bool, what: str) -> Destination:
    """The checked destination of an http(s) URL: DestinationRefused when it may not be
    reached, FetchFailed when its host does not resolve now."""
    problems = index_url_problems(url, allow_private=allow_private, what=what)
    if problems:
        plain = url.startswith("http://") and not allow_private
        raise DestinationRefused(
            problems[0], reason=f"turned off by {SETTING}" if plain else "not an index URL"
        )
    scheme, host, port = origin_of(url)
    try:
        addresses = resolved_addresses(host, port)
    except OSError:
        raise FetchFailed(f"{what}'s host {host} does not resolve", reason="unreachable") from None
    internal = None if allow_private else first_internal(addresses)
    if internal is not None:
        address, problem = internal
        where = (
            f"{host} is {problem}"
            if is_literal(host, address)
            else f"{host} resolves to {address}, {problem}"
        )
        raise DestinationRefused(
            f"{what}'s host {where}; a source must be on a public address ({SETTING} allows "
            "loopback and private ones)",
            reason="a private or internal address",
        )
    return Destination(url=url, scheme=scheme, host=host, port=port, addresses=addresses)


@dataclass(frozen=True)
class Fetched:
    url: str  # where the body came from, after the redirects followed
    size: int
    sha256: str  # of the body's bytes, in hex


class HttpReader:
    """The reads of one check: one deadline and one byte budget for all of them."""

    def __init__(self, *, allow_private: bool, seconds: float, budget: int):
        self.allow_private = allow_private
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.limit = self.budget = budget  # bytes: all the reads' bodies together

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def get(
        self, url: str, out: BinaryIO, *, limit: int, setting: str, what: str,
        origin: Origin | None = None,
    ) -> Fetched:  # fmt: skip
        """GET ``url`` into ``out``: at most ``limit`` bytes (``setting`` names the limit),
        redirects followed on ``origin`` (the URL's own when None)."""
        redirected_from = ""
        for _ in range(MAX_REDIRECTS + 1):
            # Another host is refused before its name is looked up.
            well_formed = not index_url_problems(url, allow_private=True)
            if well_formed and origin is not None and origin_of(url) != origin:
                where = (
                    f"{what} {shown_url(redirected_from)} redirects to {shown_url(url)}"
                    if redirected_from
                    else f"{what} {shown_url(url)} is"
                )
                raise DestinationRefused(
                    f"{where} on another host than the index ({shown_origin(origin)}); a "
                    "source reads an index's entries and follows its redirects on the index's "
                    "own host only: point the source at the index on that host",
                    reason="another host",
                )
            destination = destination_of(url, allow_private=self.allow_private, what=what)
            origin = origin or origin_of(url)
            with self._response(destination, what) as response:
                if response.status in REDIRECTS:
                    location = (response.getheader("Location") or "").strip()
                    if not location:
                        raise FetchFailed(
                            f"{what} {shown_url(url)} answered HTTP {response.status} without "
                            "a Location",
                            reason="a redirect",
                        )
                    redirected_from, url = url, urljoin(url, location)
                    continue
                if response.status != 200:
                    raise FetchFailed(
                        f"{what} {shown_url(url)} answered HTTP {response.status}",
                        reason=f"HTTP {response.status}",
                    )
                return self._body(response, out, url, limit=limit, setting=setting, what=what)
        raise FetchFailed(
            f"{what} redirects more than {MAX_REDIRECTS} times (last to {shown_url(url)})",
            reason="too many redirects",
        )

    @contextmanager
    def _response(self, destination: Destination, what: str) -> Iterator:
        if self.left() <= 0:
            raise self._late(what)
        connection = _connection(destination, timeout=self.left())
        # The watchdog: the deadline holds even for a server that sends a byte a second.
        watchdog = threading.Timer(max(self.left(), 0), connection.cut)
        watchdog.daemon = True
        watchdog.start()
        parts = urlsplit(destination.url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        try:
            connection.request("GET", target, headers={
                "User-Agent": USER_AGENT, "Accept": "*/*", "Accept-Encoding": "identity",
            })  # fmt: skip
            yield connection.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            if connection.cut_off or self.left() <= 0:
                raise self._late(what) from None
            raise FetchFailed(
                f"{what} {shown_url(destination.url)} could not be read "
                f"({exc.__class__.__name__}{': ' if str(exc) else ''}{shown_url(exc)[:120]})",
                reason="unreachable",
            ) from None
        finally:
            watchdog.cancel()
            connection.close()

    def _body(self, response, out: BinaryIO, url: str, *, limit: int, setting: str,
              what: str) -> Fetched:  # fmt: skip
        encoding = (response.getheader("Content-Encoding") or "identity").strip().lower()
        if encoding != "identity":
            raise FetchFailed(
                f"{what} {shown_url(url)} came {shown_url(encoding)[:40]}-encoded; its digest "
                "is of the bytes as served, and Pixie asked for them as they are",
                reason="encoded",
            )
        declared = response.getheader("Content-Length") or ""
        if declared.isdigit() and int(declared) > limit:
            raise self._too_big(what, url, int(declared), limit, setting)
        digest, size = hashlib.sha256(), 0
        while chunk := response.read(CHUNK):
            size += len(chunk)
            self.budget -= len(chunk)
            if size > limit:
                raise self._too_big(what, url, size, limit, setting, more=True)
            if self.budget < 0:
                raise FetchLimitExceeded(
                    f"{what} {shown_url(url)}: the check has read more than {self.limit:,} "
                    "bytes, the limit for one check (PIXIE_SOURCES_MAX_BYTES)",
                    setting="PIXIE_SOURCES_MAX_BYTES",
                )
            if self.left() <= 0:
                raise self._late(what)
            digest.update(chunk)
            out.write(chunk)
        return Fetched(url=url, size=size, sha256=digest.hexdigest())

    def _too_big(self, what, url, size, limit, setting, *, more=False) -> FetchLimitExceeded:
        said = f"more than {limit:,}" if more else f"{size:,}"
        return FetchLimitExceeded(
            f"{what} {shown_url(url)} is {said} bytes; the limit is {limit:,} ({setting})",
            setting=setting,
        )

    def _late(self, what: str) -> FetchLimitExceeded:
        return FetchLimitExceeded(
            f"{what}: the check took longer than {self.seconds:g} seconds, its limit "
            "(PIXIE_SOURCES_FETCH_SECONDS)",
            setting="PIXIE_SOURCES_FETCH_SECONDS",
            reason="timed out",
        )


# Connections to the addresses checked, and nowhere else


def _connection(destination: Destination, *, timeout: float) -> _Pinned:
    kind = _PinnedTLS if destination.scheme == "https" else _Pinned
    return kind(destination, timeout=max(timeout, 0.01))


class _Pinned(http.client.HTTPConnection):
    def __init__(self, destination: Destination, *, timeout: float):
        super().__init__(destination.host, destination.port, timeout=timeout)
        self.addresses: tuple[IPAddress, ...] = destination.addresses
        self.raw: socket.socket | None = None
        self.cut_off = False

    def connect(self) -> None:
        self.raw = connect_to_one_of(self.addresses, self.port, self.timeout)
        if self.cut_off:  # the deadline passed while connecting
            self.raw.close()
            raise TimeoutError("the deadline passed")
        self.sock = self.wrap(self.raw)

    def wrap(self, raw: socket.socket) -> socket.socket:
        return raw

    def cut(self) -> None:
        """From the watchdog's thread: end a read blocked on the socket now."""
        self.cut_off = True
        if self.raw is not None:
            with suppress(OSError):
                self.raw.shutdown(socket.SHUT_RDWR)


class _PinnedTLS(_Pinned):
    default_port = 443  # the Host header names no port for 443

    def wrap(self, raw: socket.socket) -> socket.socket:
        # The certificate is checked against the URL's name (SNI too), not the address.
        return ssl.create_default_context().wrap_socket(raw, server_hostname=self.host)


