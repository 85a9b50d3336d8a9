"""Where a request came from: one address a rate-limit bucket, and the network a delivery
client is counted at (an address is personal data: a network is kept, not the address)."""

import ipaddress


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
