"""Where a source's repository may be fetched from.

An operator types a source's URL, and it names a server this server will connect to, so
it is checked as a contact's inbox is (pixie.core.web.addresses): an https:// URL, its
host named plainly, no user or password in it (a private repository's token is given by
the name of an environment variable, never in a URL that is stored and shown), and every
address the host resolves to a public one: one internal answer refuses the name, so a
resolver that mixes them cannot choose the target. PIXIE_SOURCES_ALLOW_PRIVATE (off by
default) also allows plain http://, file:// and local paths, and loopback and private
addresses: an air-gapped site's own mirror, a test's server on 127.0.0.1.

The addresses checked are the ones git connects to: ``Destination.pin`` is curl's
``host:port:address,...`` entry for git's ``http.curloptResolve``, so the name is not
looked up again between the check and the fetch (DNS rebinding). Redirects are off
(pixie.sources.git_command), so no other host is reached either.

``source_url_problems`` is pure; ``destination_check`` asks the system resolver.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from pixie.core.errors import DestinationRefused
from pixie.core.web.addresses import (
    IPAddress,
    first_internal,
    host_is_plain,
    is_literal,
    resolved_addresses,
)

__all__ = ["Destination", "DestinationRefused", "destination_check", "source_url_problems"]

MAX_URL = 500
DEFAULT_PORTS = {"https": 443, "http": 80}
SETTING = "PIXIE_SOURCES_ALLOW_PRIVATE"

# Printable ASCII without space, backslash, quotes, '%' or the characters that start a
# query or a fragment: a repository's URL needs none of them, and urlsplit would quietly
# drop tabs and newlines.
_URL_CHARACTERS = re.compile(r"[A-Za-z0-9\-._~:/\[\]@!$&()*+,;=]+")
_PATH_CHARACTERS = re.compile(r"[A-Za-z0-9\-._~/@!$&()*+,;=]*")


@dataclass(frozen=True)
class Destination:
    """A repository's URL after its check: what git is given, and where it connects."""

    url: str  # rebuilt from the checked parts (the host in lower case)
    scheme: str  # "https", "http", or "file" (a file:// URL or a local path)
    host: str = ""  # an IPv6 address without its brackets; "" for a local repository
    port: int = 0
    addresses: tuple[IPAddress, ...] = ()  # every address checked, in the resolver's order

    @property
    def pin(self) -> str | None:
        """curl's resolve entry, ``host:port:address[,address]``; None for a local one."""
        if not self.addresses:
            return None
        listed = ",".join(f"[{a}]" if a.version == 6 else str(a) for a in self.addresses)
        return f"{self.host}:{self.port}:{listed}"


def source_url_problems(url: object, *, allow_private: bool) -> list[str]:
    """Everything wrong with a repository's URL as text (no lookups); empty when fine."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL:
        return [f"The repository's URL must be a URL of at most {MAX_URL} characters"]
    if not _URL_CHARACTERS.fullmatch(url):
        return [
            "The repository's URL must be plain ASCII with no spaces, control characters, "
            "'%'-escapes, query or fragment"
        ]
    local = url.startswith("/") or url.startswith("file://")
    if local or url.startswith("http://"):
        if not allow_private:
            kind = "a local repository" if local else "plain http://"
            return [
                f"{kind[0].upper()}{kind[1:]} is turned off on this server; a source is an "
                f"https:// repository ({SETTING} allows {kind})"
            ]
        if local:
            return _local_problems(url)
    elif not url.startswith("https://"):
        return ["The repository's URL must be an https:// URL"]
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return ["The repository's URL is not a URL"]
    if "@" in parts.netloc:
        return [
            "The repository's URL must not hold a user or a password: a private "
            "repository's token is given by the name of an environment variable"
        ]
    hostname = parts.hostname or ""
    if not hostname or hostname.endswith(".") or not host_is_plain(hostname, netloc=parts.netloc):
        return ["The repository's URL must name its host as a DNS name or an IP address"]
    if port == 0:
        return ["The repository's URL must not name port 0"]
    return _path_problems(parts.path)


def _local_problems(url: str) -> list[str]:
    path = url.removeprefix("file://")
    if not path.startswith("/"):
        return ["A local repository is named by its absolute path (file:///srv/git/skills.git)"]
    return _path_problems(path)


def _path_problems(path: str) -> list[str]:
    if not path.startswith("/") or not path.strip("/") or not _PATH_CHARACTERS.fullmatch(path):
        return ["The repository's URL must name a repository (https://host/owner/name.git)"]
    # Compared as written: "/../" would land somewhere the URL does not say.
    if any(segment in {".", ".."} for segment in path.split("/")):
        return ["The repository's path must not contain '.' or '..' folders"]
    return []


def destination_check(url: str, *, allow_private: bool) -> Destination:
    """The checked destination of a repository's URL. Raises DestinationRefused, or
    OSError when the host's name does not resolve now."""
    problems = source_url_problems(url, allow_private=allow_private)
    if problems:
        plain = url.startswith(("http://", "file://", "/")) if isinstance(url, str) else False
        reason = f"turned off by {SETTING}" if plain and not allow_private else "not a git URL"
        raise DestinationRefused(problems[0], reason=reason)
    if not url.startswith(("http://", "https://")):
        return Destination(url=url.removeprefix("file://"), scheme="file")
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or DEFAULT_PORTS[parts.scheme]
    addresses = resolved_addresses(host, port)
    internal = None if allow_private else first_internal(addresses)
    if internal is not None:
        raise DestinationRefused(
            _not_public(host, *internal), reason="a private or internal address"
        )
    shown_host = f"[{host}]" if ":" in host else host
    shown_port = f":{parts.port}" if parts.port else ""
    return Destination(
        url=f"{parts.scheme}://{shown_host}{shown_port}{parts.path}",
        scheme=parts.scheme,
        host=host,
        port=port,
        addresses=addresses,
    )


def _not_public(host: str, address: IPAddress, problem: str) -> str:
    # Sources are an operator's: naming the address an internal name resolves to tells
    # them nothing they cannot ask their own resolver (a contact's card, a stranger's,
    # is answered without it: pixie.sharing.destinations).
    where = (
        f"{host} is {problem}"
        if is_literal(host, address)
        else f"{host} resolves to {address}, {problem}"
    )
    return (
        f"The repository's host {where}; a source must be on a public address "
        f"({SETTING} allows loopback and private ones)"
    )
