"""Which inbox URLs and addresses this server will connect to (pure rules, no database)."""

import ipaddress

import pytest

from pixie.core.web.addresses import address_problem
from pixie.sharing.destinations import (
    DestinationRefused,
    Inbox,
    destination_resolve,
    inbox_parse,
    inbox_url_problems,
)

INTERNAL = [
    "127.0.0.1",
    "127.255.255.254",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",  # a cloud's metadata service
    "100.64.0.1",  # carrier-grade NAT
    "0.0.0.0",  # noqa: S104 (an address to refuse, not to bind)
    "0.1.2.3",
    "224.0.0.1",
    "239.255.255.250",
    "255.255.255.255",
    "240.0.0.1",
    "198.18.0.1",
    "192.0.2.1",
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "fd00:ec2::254",  # a cloud's metadata service, over IPv6
    "fec0::1",
    "ff02::1",
    "2001:db8::1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
    "::127.0.0.1",  # IPv4-compatible
    "::ffff:127.0.0.1",
    "::ffff:169.254.169.254",
    "::ffff:10.0.0.1",
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b::a9fe:a9fe",
    "64:ff9b:1::a00:1",
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:a9fe:a9fe::1",
]
PUBLIC = [
    "93.184.215.14",
    "8.8.8.8",
    "1.1.1.1",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
]


@pytest.mark.parametrize("address", INTERNAL)
def test_an_internal_address_is_refused(address):
    assert address_problem(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", PUBLIC)
def test_a_public_unicast_address_is_allowed(address):
    assert address_problem(ipaddress.ip_address(address)) is None


GOOD_URLS = [
    "https://pixie.example.com/api/inbox/",
    "https://pixie.example.com:8443/team/api/inbox/",
    "https://PIXIE.Example.com/api/inbox/",
    "https://93.184.215.14/api/inbox/",
    "https://[2606:4700:4700::1111]:443/api/inbox/",
]
BAD_URLS = {
    "ftp://pixie.example.com/api/inbox/": "must be an https:// URL",
    "http://pixie.example.com/api/inbox/": "must be an https:// URL",
    "https://ann@pixie.example.com/api/inbox/": "no user, query or fragment",
    "https://ann:pw@pixie.example.com/api/inbox/": "no user, query or fragment",
    "https://pixie.example.com/api/inbox/?": "no user, query or fragment",
    "https://pixie.example.com/api/inbox/?next=/": "no user, query or fragment",
    "https://pixie.example.com/api/inbox/#top": "no user, query or fragment",
    "https://pixie.example.com/internal/../../api/inbox/": "'.', '..' or %-escapes",
    "https://pixie.example.com/./api/inbox/": "'.', '..' or %-escapes",
    "https://pixie.example.com/x/%2e%2e/api/inbox/": "'.', '..' or %-escapes",
    "https://pixie.example.com/x%2f..%2f/api/inbox/": "'.', '..' or %-escapes",
    "https://pixie.example.com//api/inbox/": "ending in /api/inbox/",
    "https://pixie.example.com/api/inbox": "ending in /api/inbox/",
    "https://pixie.example.com/x\\..\\api/inbox/": "plain ASCII",
    "https://pixie.example.com/api/in\tbox/": "plain ASCII",
    "https://pixie.exämple.com/api/inbox/": "plain ASCII",
    "https://2130706433/api/inbox/": "a DNS name or an IP address",
    "https://0x7f000001/api/inbox/": "a DNS name or an IP address",
    "https://127.1/api/inbox/": "a DNS name or an IP address",
    "https://0177.0.0.1/api/inbox/": "a DNS name or an IP address",
    "https://0x7f.1/api/inbox/": "a DNS name or an IP address",
    "https://[127.0.0.1]/api/inbox/": "is not a URL",
    "https://[fe80::1%25eth0]/api/inbox/": "a DNS name or an IP address",
    "https://-pixie.example.com/api/inbox/": "a DNS name or an IP address",
    "https://pixie_example.com/api/inbox/": "a DNS name or an IP address",
    "https:///api/inbox/": "a DNS name or an IP address",
    "https://pixie.example.com:0/api/inbox/": "port 0",
    "https://pixie.example.com:99999/api/inbox/": "is not a URL",
    "https://pixie.example.com/" + "a/" * 150 + "api/inbox/": "at most 300 characters",
}


@pytest.mark.parametrize("url", GOOD_URLS)
def test_a_plain_inbox_url_passes(url):
    assert inbox_url_problems(url, allow_http=False) == []


@pytest.mark.parametrize("url", BAD_URLS)
def test_a_crooked_inbox_url_is_refused_naming_what_is_wrong(url):
    (problem,) = inbox_url_problems(url, allow_http=False)
    assert BAD_URLS[url] in problem


def test_plain_http_is_a_setting():
    url = "http://pixie.example.com/api/inbox/"
    assert inbox_url_problems(url, allow_http=True) == []
    with pytest.raises(DestinationRefused) as refused:
        inbox_parse(url, allow_http=False)
    assert refused.value.reason == "plain http:// is turned off on this server"


def test_a_parsed_inbox_keeps_the_host_and_port_it_names():
    assert inbox_parse("https://[::1]/api/inbox/", allow_http=False) == Inbox(
        scheme="https", host="::1", port=443, path="/api/inbox/"
    )
    assert inbox_parse("http://Pixie.Example.com:8000/p/api/inbox/", allow_http=True) == Inbox(
        scheme="http", host="pixie.example.com", port=8000, path="/p/api/inbox/"
    )


def test_an_ip_literal_is_refused_without_asking_any_resolver_for_more():
    inbox = inbox_parse("https://169.254.169.254/api/inbox/", allow_http=False)
    with pytest.raises(DestinationRefused, match="is a link-local address"):
        destination_resolve(inbox, allow_private=False)
    assert destination_resolve(inbox, allow_private=True) == (
        ipaddress.ip_address("169.254.169.254"),
    )
