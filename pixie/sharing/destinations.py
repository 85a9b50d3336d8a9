"""Where this server may send a request: a contact's inbox, and nowhere else.

A contact card comes from outside, and its inboxUrl is the one place a card can
make this server connect to. So the URL is parsed strictly, its host resolved,
and every address it resolves to must be a public (global unicast) one, unless
PIXIE_DISPATCH_ALLOW_PRIVATE says otherwise (two servers on a developer's
machine). This is checked when a card is added and again at each delivery,
where the connection is then made to exactly the address that was checked.

``inbox_url_problems`` is pure (the address rule, ``address_problem``, is the kernel's:
pixie.core.web.addresses, which sources keep too); ``destination_resolve`` asks the
system resolver.
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

__all__ = [
    "DestinationRefused",
    "IPAddress",
    "Inbox",
    "destination_resolve",
    "inbox_parse",
    "inbox_url_problems",
]

INBOX_PATH_END = "/api/inbox/"
MAX_URL = 300

# Printable ASCII without space, backslash or the characters a URL escapes; a
# card's URL has no reason to carry anything else, and urlsplit would quietly
# drop tabs and newlines.
_URL_CHARACTERS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")
_PATH_SEGMENT = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@]*")


@dataclass(frozen=True)
class Inbox:
    """A contact's inbox URL, taken apart after it passed ``inbox_url_problems``."""

    scheme: str
    host: str  # lower case; an IPv6 literal without its brackets
    port: int
    path: str


def inbox_url_problems(url: object, *, allow_http: bool) -> list[str]:
    """Everything wrong with an inbox URL as text (no lookups); empty when it is fine."""
    if not isinstance(url, str) or len(url) > MAX_URL:
        return [f"inboxUrl must be a URL of at most {MAX_URL} characters"]
    if not _URL_CHARACTERS.fullmatch(url):
        return ["inboxUrl must be plain ASCII with no spaces or control characters"]
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return ["inboxUrl is not a URL"]
    schemes = {"https", "http"} if allow_http else {"https"}
    if parts.scheme not in schemes:
        allowed = " or ".join(f"{scheme}://" for scheme in sorted(schemes))
        return [f"inboxUrl must be an {allowed} URL"]
    if "@" in parts.netloc or parts.query or parts.fragment or "?" in url or "#" in url:
        return ["inboxUrl must be a plain URL with a host and no user, query or fragment"]
    if not parts.hostname or not host_is_plain(parts.hostname, netloc=parts.netloc):
        return ["inboxUrl must name its host as a DNS name or an IP address"]
    if port == 0:
        return ["inboxUrl must not name port 0"]
    # The path is compared as written: a server would undo "%2e" or "/../" and
    # land somewhere the suffix check never saw.
    segments = parts.path.split("/")
    if "%" in parts.path or any(
        segment in {".", ".."} or not _PATH_SEGMENT.fullmatch(segment) for segment in segments
    ):
        return ["inboxUrl's path must not contain '.', '..' or %-escapes"]
    if not parts.path.endswith(INBOX_PATH_END) or "//" in parts.path:
        return [f"inboxUrl must be a Pixie inbox, ending in {INBOX_PATH_END}"]
    return []


def inbox_parse(url: str, *, allow_http: bool) -> Inbox:
    """The parts of an inbox URL that passes ``inbox_url_problems``; raises DestinationRefused."""
    problems = inbox_url_problems(url, allow_http=allow_http)
    if problems:
        plain_http = url.startswith("http://") and not allow_http
        reason = "plain http:// is turned off on this server" if plain_http else "not a Pixie inbox"
        raise DestinationRefused(problems[0], reason=reason)
    parts = urlsplit(url)
    default_port = 443 if parts.scheme == "https" else 80
    return Inbox(
        scheme=parts.scheme,
        host=parts.hostname or "",
        port=parts.port or default_port,
        path=parts.path,
    )


def destination_resolve(inbox: Inbox, *, allow_private: bool) -> tuple[IPAddress, ...]:
    """Every address the inbox's host resolves to, all of them allowed, in the
    resolver's order. Raises DestinationRefused, or OSError when the name does not
    resolve now."""
    addresses = resolved_addresses(inbox.host, inbox.port)
    internal = None if allow_private else first_internal(addresses)
    if internal is not None:
        raise DestinationRefused(
            _not_public(inbox.host, *internal), reason="a private or internal address"
        )
    return addresses


def _not_public(host: str, address: IPAddress, problem: str) -> str:
    if is_literal(host, address):
        return f"inboxUrl's host {host} is {problem}; only public servers can be contacts"
    # The same words whether the name resolved to an internal address or not at
    # all would tell apart internal names; neither says which.
    return f"inboxUrl's host {host} does not resolve to a public address"
