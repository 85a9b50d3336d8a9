"""Where this server may send a request: a contact's inbox, and nowhere else.

A contact card comes from outside, and its inboxUrl is the one place a card can
make this server connect to. So the URL is parsed strictly, its host resolved,
and every address it resolves to must be a public (global unicast) one, unless
PIXIE_DISPATCH_ALLOW_PRIVATE says otherwise (two servers on a developer's
machine). This is checked when a card is added and again at each delivery,
where the connection is then made to exactly the address that was checked.

``inbox_url_problems`` and ``address_problem`` are pure; ``destination_resolve``
asks the system resolver.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from pixie.core.errors import ErrorCode, PixieError

INBOX_PATH_END = "/api/inbox/"
MAX_URL = 300

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Printable ASCII without space, backslash or the characters a URL escapes; a
# card's URL has no reason to carry anything else, and urlsplit would quietly
# drop tabs and newlines.
_URL_CHARACTERS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")
_HOST_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")
_PATH_SEGMENT = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@]*")

_IPV4_MAPPED = ipaddress.ip_network("::ffff:0:0/96")
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))


class DestinationRefused(PixieError):
    """This server will not connect there; ``reason`` says why, in a few words."""

    code = ErrorCode.DESTINATION_REFUSED

    def __init__(self, message: str, *, reason: str):
        super().__init__(message)
        self.reason = reason


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
    if not parts.hostname or not _host_is_plain(parts.hostname, netloc=parts.netloc):
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


def _host_is_plain(hostname: str, *, netloc: str) -> bool:
    if "[" in netloc:  # an IPv6 literal, and nothing else may be bracketed
        try:
            return ipaddress.ip_address(hostname).version == 6 and "%" not in hostname
        except ValueError:
            return False
    try:
        ipaddress.IPv4Address(hostname)
        return True
    except ValueError:
        pass
    try:
        # 2130706433, 0x7f.1, 0177.0.0.1, 127.1: the resolver reads these as IPv4
        # addresses, and no DNS name looks like one.
        socket.inet_aton(hostname)
        return False
    except OSError:
        pass
    labels = hostname.removesuffix(".").split(".")
    return all(_HOST_LABEL.fullmatch(label) for label in labels)


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


def address_problem(address: IPAddress) -> str | None:
    """What kind of internal address this is, or None for a public unicast one."""
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        return address_problem(embedded)
    for kind in ("loopback", "unspecified", "link_local", "multicast", "private", "reserved"):
        if getattr(address, f"is_{kind}"):
            return f"a {kind.replace('_', '-')} address"
    if getattr(address, "is_site_local", False) or not address.is_global:
        return "not a public address"
    return None


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for (mapped, NAT64, 6to4), which is where
    a connection to it really goes."""
    if address.version != 6:
        return None
    if address in _IPV4_MAPPED or any(address in prefix for prefix in _NAT64):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour  # Teredo (2001::/32) is already private


def destination_resolve(inbox: Inbox, *, allow_private: bool) -> tuple[IPAddress, ...]:
    """Every address the inbox's host resolves to, all of them allowed, in the
    resolver's order. Raises DestinationRefused, or OSError when the name does not
    resolve now."""
    answers = socket.getaddrinfo(
        inbox.host, inbox.port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )
    addresses: list[IPAddress] = []
    for family, _, _, _, sockaddr in answers:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        address = ipaddress.ip_address(str(sockaddr[0]).partition("%")[0])
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise OSError(f"{inbox.host} has no IP address")
    if allow_private:
        return tuple(addresses)
    # One internal answer refuses the whole name: a resolver that mixes a public
    # and an internal address would otherwise pick the target for us.
    for address in addresses:
        problem = address_problem(address)
        if problem is not None:
            raise DestinationRefused(
                _not_public(inbox.host, address, problem), reason="a private or internal address"
            )
    return tuple(addresses)


def _not_public(host: str, address: IPAddress, problem: str) -> str:
    try:
        literal = ipaddress.ip_address(host) == address
    except ValueError:
        literal = False
    if literal:
        return f"inboxUrl's host {host} is {problem}; only public servers can be contacts"
    # The same words whether the name resolved to an internal address or not at
    # all would tell apart internal names; neither says which.
    return f"inboxUrl's host {host} does not resolve to a public address"
