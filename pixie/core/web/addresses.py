"""Where a request came from: one address a rate-limit bucket, and the network a delivery
client is counted at (an address is personal data: a network is kept, not the address).
And where this server may connect to: a host named plainly, and only public addresses
(the rule sharing's inboxes and sources' repositories both keep)."""

import ipaddress
import re
import socket


def client_address(meta: dict, *, behind_proxy: bool) -> str:
    """The address a request came from, as one rate-limit bucket.

    Behind the TLS proxy, the last X-Forwarded-For hop is the one the proxy
    appended (the address it saw); hops before it are whatever the client
    wrote. IPv6 addresses count per /64, the block one host is usually given.
    """
    address = meta.get("REMOTE_ADDR") or ""
    if behind_proxy:
        hops = [hop.strip() for hop in meta.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        if hops and hops[-1]:
            address = hops[-1]
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address[:64]
    if parsed.version == 6:
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


def network_of(address: str) -> str:
    """The /24 (IPv4) or /48 (IPv6) an address is in: what a delivery client's record keeps."""
    try:
        parsed = ipaddress.ip_network(address, strict=False)
    except ValueError:
        return "unknown"
    prefix = 24 if parsed.version == 4 else 48
    return str(parsed.supernet(new_prefix=prefix)) if parsed.prefixlen > prefix else str(parsed)


# Where this server may connect to. A URL from outside (a contact's inbox, a source's
# repository) must name its host plainly and reach only public addresses.

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_HOST_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")
_IPV4_MAPPED = ipaddress.ip_network("::ffff:0:0/96")
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))


def host_is_plain(hostname: str, *, netloc: str) -> bool:
    """Whether a URL's host (urlsplit's lower-cased ``hostname``) is a DNS name, an IPv4
    address in dotted decimal, or a bracketed IPv6 address without a zone."""
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


def resolved_addresses(host: str, port: int) -> tuple[IPAddress, ...]:
    """Every address the system resolver gives for ``host``, in its order, each once.
    OSError when the name does not resolve now."""
    answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    addresses: list[IPAddress] = []
    for family, _, _, _, sockaddr in answers:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        address = ipaddress.ip_address(str(sockaddr[0]).partition("%")[0])
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise OSError(f"{host} has no IP address")
    return tuple(addresses)


def first_internal(addresses) -> tuple[IPAddress, str] | None:
    """The first internal address and what kind it is, or None when all are public. One
    internal answer refuses the whole name: a resolver that mixes a public and an
    internal address would otherwise pick the target."""
    for address in addresses:
        problem = address_problem(address)
        if problem is not None:
            return address, problem
    return None


def is_literal(host: str, address: IPAddress) -> bool:
    """Whether ``host`` was written as that very address (not a name resolving to it)."""
    try:
        return ipaddress.ip_address(host) == address
    except ValueError:
        return False


def connect_to_one_of(addresses, port: int, timeout: float):
    """A TCP connection to the first of the checked ``addresses`` that answers; the host
    name is never looked up again (so a second DNS answer cannot send it elsewhere)."""
    import socket

    last_error: OSError = OSError("no address to connect to")
    for address in addresses:
        family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            sock.connect((str(address), port))
        except OSError as exc:
            sock.close()
            last_error = exc
            continue
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock
    raise last_error
