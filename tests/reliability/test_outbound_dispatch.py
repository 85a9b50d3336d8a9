"""10. Outbound delivery: a contact card cannot point this server at an internal address.

Every destination here is a real server this test starts on a loopback address,
counting each TCP connection it accepts. A card naming it is refused when it is
added; a contact already stored with it (added before the check existed, or
while PIXIE_DISPATCH_ALLOW_PRIVATE was on) is refused at delivery and again on
*Retry delivery*; and none of the servers sees a single connection. Where a
test must let this server reach loopback to make its point (a redirect, the
address pinning), it turns the setting on and says so.

The resolver is the system's, patched only to play a hostile DNS server.
"""

import base64
import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from pixie.core.errors import ValidationFailed
from pixie.sharing import services as sharing
from pixie.sharing.models import Contact, Message
from tests.factories import make_user, make_workspace
from tests.sharing.pages import browser_for, text_of
from tests.sharing.remote_stub import loopback_listener

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
NOT_ALLOWED_PRIVATE = "The destination is not allowed (a private or internal address)."
NOT_ALLOWED_HTTP = "The destination is not allowed (plain http:// is turned off on this server)."
NOT_ALLOWED_SHAPE = "The destination is not allowed (not a Pixie inbox)."
COULD_NOT_CONNECT = "Could not connect to the other server."
PUBLIC_ADDRESS = "93.184.215.14"  # what a hostile name answers when it is checked

# (what the card says, the loopback address its server listens on)
LOOPBACK_FORMS = [
    ("http://127.0.0.1:{port}/api/inbox/", "127.0.0.1"),
    ("http://localhost:{port}/api/inbox/", "127.0.0.1"),
    ("http://2130706433:{port}/api/inbox/", "127.0.0.1"),
    ("http://0x7f000001:{port}/api/inbox/", "127.0.0.1"),
    ("http://127.1:{port}/api/inbox/", "127.0.0.1"),
    ("http://0177.0.0.1:{port}/api/inbox/", "127.0.0.1"),
    ("http://0x7f.1:{port}/api/inbox/", "127.0.0.1"),
    ("http://127.0.0.2:{port}/api/inbox/", "127.0.0.2"),
    ("http://[::1]:{port}/api/inbox/", "::1"),
    ("http://[::ffff:127.0.0.1]:{port}/api/inbox/", "127.0.0.1"),
    ("http://[::ffff:7f00:1]:{port}/api/inbox/", "127.0.0.1"),
    ("http://127.0.0.1:{port}/internal/../../api/inbox/", "127.0.0.1"),
]


@pytest.fixture
def owner():
    return make_user("ann", is_staff=True)


@pytest.fixture
def alpha(owner):
    return make_workspace("alpha", owner=owner)


@pytest.fixture
def developer_schemes(settings):
    """http:// allowed, as DEBUG allows it, so that only the address can refuse a card."""
    settings.PIXIE_ALLOW_HTTP_INBOX = True


@pytest.fixture
def production(settings):
    """The settings DEBUG=0 gives (test_debug_off_turns_both_allowances_off shows it)."""
    settings.DEBUG = False
    settings.PIXIE_ALLOW_HTTP_INBOX = False
    settings.PIXIE_DISPATCH_ALLOW_PRIVATE = False


def card_for(inbox_url: str) -> dict:
    """Another server's card: its keys made here and then forgotten here."""
    far_away = make_workspace(f"far-{uuid.uuid4().hex[:6]}", owner=make_user())
    card = sharing.contact_card_export(workspace=far_away)
    far_away.delete()
    card["pixie_contact_card"]["inboxUrl"] = inbox_url
    return card


def stored_contact(workspace, actor, inbox_url: str) -> Contact:
    """A contact kept from before: added before this check existed, or while a setting
    allowed it. (Written directly: no service would add it now.)"""
    fields = card_for(inbox_url)["pixie_contact_card"]
    return Contact.objects.create(
        workspace=workspace,
        name=f"Stored {uuid.uuid4().hex[:6]}",
        remote_workspace=fields["workspace"],
        box_public_key=fields["boxKey"],
        signing_public_key=fields["signingKey"],
        inbox_url=inbox_url,
        added_by=actor,
    )


def send(workspace, actor, contact, capture) -> Message:
    with capture(execute=True):
        message = sharing.text_send(workspace=workspace, contact=contact, text="Hi.", actor=actor)
    message.refresh_from_db()
    return message


def retry_from_the_admin(actor, message, capture) -> str:
    """The owner ticks the message in *Messages* and picks "Try again to deliver"."""
    browser = Client()
    browser.force_login(actor)
    with capture(execute=True):
        page = browser.post(
            reverse("admin:pixie_message_changelist"),
            {"action": "retry_dispatch", "_selected_action": [message.pk]},
            follow=True,
        )
    return text_of(page)


class HostileResolver:
    """A DNS server the attacker runs. ``answer(name, first, second, ...)``: each
    lookup of the name gets the next answer, the last one from then on. Other names
    go to the system resolver."""

    def __init__(self, monkeypatch):
        self.rounds: dict[str, list[list[str]]] = {}
        self.lookups: list[str] = []
        self._system = socket.getaddrinfo
        monkeypatch.setattr(socket, "getaddrinfo", self.getaddrinfo)

    def answer(self, name: str, *rounds: list[str]) -> None:
        self.rounds[name] = list(rounds)

    def getaddrinfo(self, host, port, *args, **kwargs):
        if host not in self.rounds:
            return self._system(host, port, *args, **kwargs)
        self.lookups.append(host)
        rounds = self.rounds[host]
        addresses = rounds.pop(0) if len(rounds) > 1 else rounds[0]
        port = int(port or 0)
        return [
            (
                socket.AF_INET6 if ":" in address else socket.AF_INET,
                socket.SOCK_STREAM,
                socket.IPPROTO_TCP,
                "",
                (address, port, 0, 0) if ":" in address else (address, port),
            )
            for address in addresses
        ]


def test_no_loopback_form_of_an_inbox_gets_a_connection(
    owner, alpha, developer_schemes, django_capture_on_commit_callbacks, record_property
):
    connections: dict[str, int] = {}
    refused_cards: dict[str, str] = {}
    shown: dict[str, str] = {}
    for template, host in LOOPBACK_FORMS:
        with loopback_listener(host) as listener:
            url = template.format(port=listener.port)
            try:
                sharing.contact_card_import(workspace=alpha, card=card_for(url), actor=owner)
            except ValidationFailed as refusal:
                refused_cards[url] = refusal.message
            contact = stored_contact(alpha, owner, url)
            message = send(alpha, owner, contact, django_capture_on_commit_callbacks)
            retry_from_the_admin(owner, message, django_capture_on_commit_callbacks)
            message.refresh_from_db()
            shown[url] = message.last_error
            connections[url] = listener.connections

    assert connections == dict.fromkeys(connections, 0)
    assert set(refused_cards) == set(connections), "every card is refused when it is added"
    assert all("contact card: inboxUrl" in reason for reason in refused_cards.values())
    assert Contact.objects.count() == len(LOOPBACK_FORMS)  # only the stored ones
    assert set(shown.values()) <= {NOT_ALLOWED_PRIVATE, NOT_ALLOWED_SHAPE}
    assert Message.objects.filter(delivery="failed", attempts=2).count() == len(LOOPBACK_FORMS)
    record_property(
        "figure",
        f"{len(LOOPBACK_FORMS)} loopback forms x card add, delivery and retry: "
        f"{sum(connections.values())} connections received",
    )


def test_the_card_names_what_is_wrong_and_nothing_is_stored(owner, alpha, developer_schemes):
    api = APIClient()
    api.force_login(owner)
    with loopback_listener() as listener, loopback_listener("::1") as listener6:
        cases = {
            f"http://127.0.0.1:{listener.port}/api/inbox/": (
                "contact card: inboxUrl's host 127.0.0.1 is a loopback address; "
                "only public servers can be contacts"
            ),
            f"http://[::1]:{listener6.port}/api/inbox/": (
                "contact card: inboxUrl's host ::1 is a loopback address; "
                "only public servers can be contacts"
            ),
            f"http://localhost:{listener.port}/api/inbox/": (
                "contact card: inboxUrl's host localhost does not resolve to a public address"
            ),
            f"http://2130706433:{listener.port}/api/inbox/": (
                "contact card: inboxUrl must name its host as a DNS name or an IP address"
            ),
            f"http://127.0.0.1:{listener.port}/internal/../../api/inbox/": (
                "contact card: inboxUrl's path must not contain '.', '..' or %-escapes"
            ),
            f"http://127.0.0.1:{listener.port}/x/%2e%2e/api/inbox/": (
                "contact card: inboxUrl's path must not contain '.', '..' or %-escapes"
            ),
        }
        for url, problem in cases.items():
            response = api.post(
                "/api/workspaces/alpha/contacts/", {"card": card_for(url)}, format="json"
            )
            assert (response.status_code, response.json()["problems"]) == (400, [problem])
    assert not Contact.objects.exists()
    assert listener.connections == listener6.connections == 0


def test_https_to_loopback_is_refused_with_debug_off(
    owner, alpha, production, django_capture_on_commit_callbacks
):
    with loopback_listener() as listener:
        url = f"https://127.0.0.1:{listener.port}/api/inbox/"
        with pytest.raises(ValidationFailed, match="127.0.0.1 is a loopback address"):
            sharing.contact_card_import(workspace=alpha, card=card_for(url), actor=owner)
        message = send(
            alpha, owner, stored_contact(alpha, owner, url), django_capture_on_commit_callbacks
        )
    assert (message.delivery, message.last_error) == ("failed", NOT_ALLOWED_PRIVATE)
    assert listener.connections == 0


def test_debug_off_turns_both_allowances_off():
    env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "x" * 50,
        "PIXIE_KEY_ENCRYPTION_KEY": base64.b64encode(os.urandom(32)).decode(),
    }
    for name in ("PIXIE_ALLOW_HTTP_INBOX", "PIXIE_DISPATCH_ALLOW_PRIVATE"):
        env.pop(name, None)
    read = (
        "import pixie.settings as s; "
        "print(s.PIXIE_ALLOW_HTTP_INBOX, s.PIXIE_DISPATCH_ALLOW_PRIVATE)"
    )
    out = subprocess.run(
        [sys.executable, "-c", read], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "False"]


def test_an_http_contact_stored_before_http_was_turned_off_is_not_sent_plain_http(
    owner, alpha, settings, loopback_inboxes, django_capture_on_commit_callbacks
):
    # Loopback is allowed here, so only the scheme can stop the POST.
    with loopback_listener() as listener:
        settings.PIXIE_ALLOW_HTTP_INBOX = True
        contact = sharing.contact_card_import(
            workspace=alpha,
            card=card_for(f"http://127.0.0.1:{listener.port}/api/inbox/"),
            actor=owner,
        )
        settings.PIXIE_ALLOW_HTTP_INBOX = False
        message = send(alpha, owner, contact, django_capture_on_commit_callbacks)
    assert (message.delivery, message.last_error) == ("failed", NOT_ALLOWED_HTTP)
    assert listener.connections == 0


def test_a_dot_segment_path_is_refused_even_where_loopback_is_allowed(
    owner, alpha, developer_schemes, loopback_inboxes, django_capture_on_commit_callbacks
):
    with loopback_listener() as listener:
        stored = []
        for path in ("/internal/../../api/inbox/", "/admin/%2e%2e/api/inbox/", "/./api/inbox/"):
            url = f"http://127.0.0.1:{listener.port}{path}"
            with pytest.raises(ValidationFailed, match="must not contain '.', '..' or %-escapes"):
                sharing.contact_card_import(workspace=alpha, card=card_for(url), actor=owner)
            contact = stored_contact(alpha, owner, url)
            stored.append(send(alpha, owner, contact, django_capture_on_commit_callbacks))
    assert {(message.delivery, message.last_error) for message in stored} == {
        ("failed", NOT_ALLOWED_SHAPE)
    }
    assert listener.requests == []


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_loopback_is_not_followed(
    owner, alpha, developer_schemes, loopback_inboxes, status, django_capture_on_commit_callbacks
):
    # The first hop must be allowed for there to be a redirect at all, and the only
    # servers a test can start are on loopback, so loopback is allowed here; the
    # redirect is refused as a redirect, wherever it points.
    with (
        loopback_listener("127.0.0.2") as target,
        loopback_listener(
            status=status, location=f"http://127.0.0.2:{target.port}/api/inbox/"
        ) as first_hop,
    ):
        url = f"http://127.0.0.1:{first_hop.port}/api/inbox/"
        contact = sharing.contact_card_import(workspace=alpha, card=card_for(url), actor=owner)
        message = send(alpha, owner, contact, django_capture_on_commit_callbacks)
    assert len(first_hop.requests) == 1
    assert target.connections == 0
    assert message.last_error == f"The other server refused the message (HTTP {status})."


def test_a_name_that_rebinds_to_loopback_after_the_card_was_added_gets_nothing(
    owner, alpha, developer_schemes, monkeypatch, django_capture_on_commit_callbacks
):
    resolver = HostileResolver(monkeypatch)
    with loopback_listener() as listener:
        url = f"http://inbox.rebind.example:{listener.port}/api/inbox/"
        resolver.answer("inbox.rebind.example", [PUBLIC_ADDRESS], ["127.0.0.1"])
        contact = sharing.contact_card_import(workspace=alpha, card=card_for(url), actor=owner)
        message = send(alpha, owner, contact, django_capture_on_commit_callbacks)
        retry_from_the_admin(owner, message, django_capture_on_commit_callbacks)
        message.refresh_from_db()
    assert (message.delivery, message.attempts, message.last_error) == (
        "failed",
        2,
        NOT_ALLOWED_PRIVATE,
    )
    assert resolver.lookups == ["inbox.rebind.example"] * 3  # card, delivery, retry
    assert listener.connections == 0


def test_a_name_answering_a_public_and_a_loopback_address_is_refused(
    owner, alpha, developer_schemes, monkeypatch, django_capture_on_commit_callbacks
):
    resolver = HostileResolver(monkeypatch)
    with loopback_listener() as listener:
        url = f"http://inbox.mixed.example:{listener.port}/api/inbox/"
        resolver.answer("inbox.mixed.example", ["127.0.0.1", PUBLIC_ADDRESS])
        with pytest.raises(ValidationFailed, match="does not resolve to a public address"):
            sharing.contact_card_import(workspace=alpha, card=card_for(url), actor=owner)
        contact = stored_contact(alpha, owner, url)
        message = send(alpha, owner, contact, django_capture_on_commit_callbacks)
    assert message.last_error == NOT_ALLOWED_PRIVATE
    assert listener.connections == 0


def test_the_connection_goes_to_the_address_that_was_checked(
    owner,
    alpha,
    developer_schemes,
    loopback_inboxes,
    monkeypatch,
    django_capture_on_commit_callbacks,
):
    # Loopback is allowed so that both answers are servers this test can watch: the
    # name is looked up once at the card and once for the attempt, and any lookup
    # after that (a connection asking again) would get the other server.
    resolver = HostileResolver(monkeypatch)
    with (
        loopback_listener("127.0.0.1") as checked,
        loopback_listener("127.0.0.2") as elsewhere,
    ):
        url = f"http://inbox.pinned.example:{checked.port}/api/inbox/"
        resolver.answer("inbox.pinned.example", ["127.0.0.1"], ["127.0.0.1"], ["127.0.0.2"])
        contact = sharing.contact_card_import(workspace=alpha, card=card_for(url), actor=owner)
        message = send(alpha, owner, contact, django_capture_on_commit_callbacks)
    assert message.delivery == "delivered"
    assert len(checked.requests) == 1 and elsewhere.connections == 0
    assert len(resolver.lookups) == 2


def test_retrying_a_refused_delivery_probes_nothing(
    owner, alpha, developer_schemes, django_capture_on_commit_callbacks
):
    with loopback_listener() as listener:
        contact = stored_contact(alpha, owner, f"http://127.0.0.1:{listener.port}/api/inbox/")
        message = send(alpha, owner, contact, django_capture_on_commit_callbacks)
        pages = [
            retry_from_the_admin(owner, message, django_capture_on_commit_callbacks)
            for _ in range(3)
        ]
    message.refresh_from_db()
    assert (message.delivery, message.attempts) == ("failed", 4)
    assert "Delivery tried again for 1 message(s)." in pages[-1]
    outbox = text_of(browser_for(owner).get(reverse("admin:pixie_message_changelist")))
    assert f"Not delivered: {NOT_ALLOWED_PRIVATE}" in outbox
    assert listener.connections == 0


def test_owners_see_the_kind_of_failure_never_the_socket_error(
    owner, alpha, settings, developer_schemes, loopback_inboxes, django_capture_on_commit_callbacks
):
    # Loopback is allowed so that each kind of failure really happens; what the
    # owner is told must not tell a closed port from a server that hung up or one
    # that speaks plain HTTP to TLS.
    settings.PIXIE_DISPATCH_TIMEOUT = 0.5
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    with (
        loopback_listener(behaviour="close") as hangs_up,
        loopback_listener(behaviour="silent") as never_answers,
        loopback_listener() as plain_http,
        loopback_listener(status=404) as not_an_inbox,
    ):
        destinations = {
            f"http://127.0.0.1:{closed_port}/api/inbox/": COULD_NOT_CONNECT,
            f"http://127.0.0.1:{hangs_up.port}/api/inbox/": COULD_NOT_CONNECT,
            f"https://127.0.0.1:{plain_http.port}/api/inbox/": COULD_NOT_CONNECT,
            f"http://127.0.0.1:{never_answers.port}/api/inbox/": (
                "Timed out waiting for the other server."
            ),
            f"http://127.0.0.1:{not_an_inbox.port}/api/inbox/": (
                "The other server refused the message (HTTP 404)."
            ),
        }
        sent = {
            url: send(
                alpha, owner, stored_contact(alpha, owner, url), django_capture_on_commit_callbacks
            )
            for url in destinations
        }
    assert {url: message.last_error for url, message in sent.items()} == destinations

    api = APIClient()
    api.force_login(owner)
    listed = api.get("/api/workspaces/alpha/messages/").json()["results"]
    outbox = text_of(browser_for(owner).get(reverse("admin:pixie_message_changelist")))
    assert {item["delivery_error"] for item in listed} == set(destinations.values())
    for words in ("Connection refused", "Errno", "closed", "WRONG_VERSION", "SSL", "timed out"):
        assert words not in outbox
        assert not any(words in (item["delivery_error"] or "") for item in listed)


def test_errors_stored_before_this_change_are_shown_as_their_kind(owner, alpha):
    contact = stored_contact(alpha, owner, "https://inbox.example.com/api/inbox/")
    earlier = {
        "The recipient's server could not be reached: [Errno 111] Connection refused": (
            "Could not connect to the other server."
        ),
        "The recipient's server could not be reached: Remote end closed connection "
        "without response": "Could not connect to the other server.",
        "The recipient's server could not be reached: [SSL: WRONG_VERSION_NUMBER] wrong "
        "version number (_ssl.c:1006)": "Could not connect to the other server.",
        "The recipient's server answered HTTP 503; will try again.": (
            "The other server is busy (HTTP 503); will try again."
        ),
        "The recipient's server refused the envelope (HTTP 400).": (
            "The other server refused the message (HTTP 400)."
        ),
        "The recipient refused the envelope: The envelope was refused.": (
            "The recipient refused the message."
        ),
        "something else entirely": "The message could not be delivered.",
    }
    for error in earlier:
        message = sharing.text_send(workspace=alpha, contact=contact, text="Hi.", actor=owner)
        Message.objects.filter(pk=message.pk).update(delivery="failed", last_error=error)
    api = APIClient()
    api.force_login(owner)
    listed = api.get("/api/workspaces/alpha/messages/").json()["results"]
    assert sorted(item["delivery_error"] for item in listed) == sorted(earlier.values())
    outbox = text_of(browser_for(owner).get(reverse("admin:pixie_message_changelist")))
    for error, shown in earlier.items():
        assert error not in outbox
        assert f"Not delivered: {shown}" in outbox


def _settings_and_checks(**environment) -> list[str]:
    """The dispatch settings and the W003 warnings a server started with ``environment``
    would have, read by a fresh process (settings are read once, at start)."""
    env = {k: v for k, v in os.environ.items() if "DISPATCH" not in k and "DELIVERY" not in k}
    read = (
        "import django; django.setup(); "
        "from django.conf import settings as s; from django.core.checks import run_checks; "
        "print(s.PIXIE_DISPATCH_TIMEOUT, s.PIXIE_DISPATCH_MAX_RETRIES, "
        "s.PIXIE_DISPATCH_ALLOW_PRIVATE); "
        "[print(m.id, m.msg) for m in run_checks() if m.id == 'pixie.W003']"
    )
    out = subprocess.run(
        [sys.executable, "-c", read],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "pixie.settings", **environment},
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip().splitlines()


def test_the_settings_named_delivery_before_the_rename_still_work_and_are_warned_of():
    """An operator who set PIXIE_DELIVERY_* before sharing's delivery became dispatch
    keeps their values, and `manage.py check` names each old variable and its new name."""
    assert _settings_and_checks(DEBUG="1") == ["10.0 8 True"]
    lines = _settings_and_checks(
        DEBUG="1",
        PIXIE_DELIVERY_TIMEOUT="3",
        PIXIE_DELIVERY_MAX_RETRIES="2",
        PIXIE_DELIVERY_ALLOW_PRIVATE="0",
    )
    assert lines[0] == "3.0 2 False"
    assert sorted(lines[1:]) == [
        f"pixie.W003 PIXIE_DELIVERY_{name} is deprecated and will stop working in a later release."
        for name in ("ALLOW_PRIVATE", "MAX_RETRIES", "TIMEOUT")
    ]
    # The new name wins over the old one, which is still warned of.
    lines = _settings_and_checks(PIXIE_DELIVERY_TIMEOUT="3", PIXIE_DISPATCH_TIMEOUT="4")
    assert lines[0].split()[0] == "4.0"
    assert lines[1:] == [
        "pixie.W003 PIXIE_DELIVERY_TIMEOUT is deprecated and will stop working in a later "
        "release; PIXIE_DISPATCH_TIMEOUT is set too, and wins."
    ]
