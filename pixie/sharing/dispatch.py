"""Dispatch: handing a sent message to its contact's inbox, one attempt per call.

(Called delivery until pixie/delivery/ took that word for serving skills to agent
clients. A message's state keeps its name, ``Message.delivery``, and so does the API's
``delivery`` field: history is recorded under it, and clients read it.)

A contact whose identity lives on this server gets the envelope through the
same receiving service the public inbox uses; any other gets an HTTP POST.
The receiving side deduplicates by message id, so a retry never lands twice.

Before each POST the inbox URL is checked again against the current settings
(scheme, shape, and every address its host resolves to), and the connection
goes to the address that was checked, so a name cannot resolve to a public
address for the check and an internal one for the connection. Redirects are
never followed. Owners see what kind of failure it was, never the socket's own
words, which would make dispatch a way to probe the network; those go to the
log.
"""

from __future__ import annotations

import http.client
import logging
import re
import ssl

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from pixie.core.audit.records import audited
from pixie.core.errors import PixieError
from pixie.core.web.addresses import connect_to_one_of
from pixie.sharing.models import Identity, Message

from .destinations import (
    DestinationRefused,
    Inbox,
    IPAddress,
    destination_resolve,
    inbox_parse,
)
from .envelopes import envelope_dump
from .guard import InboxBusy
from .receiving import AlreadyReceived, envelope_receive

log = logging.getLogger(__name__)

DELIVERED_STATUSES = {200, 201, 202, 409}  # 409: it was already there
TRANSIENT_STATUSES = {408, 425, 429, 500, 502, 503, 504}


class Problem:
    """What an owner is told about a delivery that did not happen: the kind of
    failure only. ``dispatch_problem`` recognises exactly these."""

    NOT_ALLOWED = "The destination is not allowed ({reason})."
    REFUSED = "The other server refused the message (HTTP {status})."
    BUSY = "The other server is busy (HTTP {status}); will try again."
    COULD_NOT_CONNECT = "Could not connect to the other server."
    TIMED_OUT = "Timed out waiting for the other server."
    REFUSED_HERE = "The recipient refused the message."
    CONTACT_REMOVED = "The contact was removed before delivery."
    OTHER = "The message could not be delivered."


class DispatchDeferred(Exception):
    """The recipient could not be reached this time; try again later."""


class _Refused(Exception):
    """The recipient answered and will not take the envelope, or this server will not
    send it there; retrying won't help."""


def message_dispatch(*, message_pk: int, final_attempt: bool) -> str:
    """Make one delivery attempt; raise DispatchDeferred when a later one may succeed."""
    message = Message.objects.select_related("contact").get(
        pk=message_pk, direction=Message.Direction.OUTGOING
    )
    if message.delivery == Message.Delivery.DELIVERED:
        return "already delivered"
    contact = message.contact
    if contact is None:
        _record(message, failed=True, error=Problem.CONTACT_REMOVED)
        return "failed"
    raw = envelope_dump(
        message_id=message.message_id, to=contact.box_public_key, sealed=message.envelope
    )
    try:
        if Identity.objects.filter(box_public_key=contact.box_public_key).exists():
            _deliver_here(raw, message_pk=message.pk)
        else:
            _post(contact.inbox_url, raw, message_pk=message.pk)
    except _Refused as exc:
        _record(message, failed=True, error=str(exc))
        return "failed"
    except DispatchDeferred as exc:
        _record(message, failed=final_attempt, error=str(exc))
        if final_attempt:
            return "failed"
        raise
    _record(message, failed=False, error="")
    return "delivered"


def _deliver_here(raw: bytes, *, message_pk: int) -> None:
    try:
        envelope_receive(raw=raw)
    except AlreadyReceived:
        pass
    except InboxBusy as exc:
        raise DispatchDeferred(f"The recipient's inbox is full or busy: {exc.message}") from None
    except PixieError as exc:
        log.warning("Message %s refused on this server: %s", message_pk, exc.message)
        raise _Refused(Problem.REFUSED_HERE) from None


def _post(url: str, raw: bytes, *, message_pk: int) -> None:
    try:
        inbox = inbox_parse(url, allow_http=settings.PIXIE_ALLOW_HTTP_INBOX)
        addresses = destination_resolve(inbox, allow_private=settings.PIXIE_DISPATCH_ALLOW_PRIVATE)
    except DestinationRefused as exc:
        log.warning("Message %s not sent to %r: %s", message_pk, url, exc.message)
        raise _Refused(Problem.NOT_ALLOWED.format(reason=exc.reason)) from None
    except OSError as exc:  # the name does not resolve now
        log.warning("Message %s: could not resolve %r: %r", message_pk, url, exc)
        raise DispatchDeferred(Problem.COULD_NOT_CONNECT) from None
    connection = _connection(inbox, addresses, timeout=settings.PIXIE_DISPATCH_TIMEOUT)
    try:
        connection.request(
            "POST",
            inbox.path,
            body=raw,
            headers={"Content-Type": "application/json", "User-Agent": "Pixie"},
        )
        status = connection.getresponse().status
    except TimeoutError as exc:
        log.warning("Message %s: %s timed out: %r", message_pk, url, exc)
        raise DispatchDeferred(Problem.TIMED_OUT) from None
    except (OSError, http.client.HTTPException) as exc:
        log.warning("Message %s: could not deliver to %s: %r", message_pk, url, exc)
        raise DispatchDeferred(Problem.COULD_NOT_CONNECT) from None
    finally:
        connection.close()
    if status in DELIVERED_STATUSES:
        return
    log.warning("Message %s: %s answered HTTP %s", message_pk, url, status)
    if status in TRANSIENT_STATUSES:
        raise DispatchDeferred(Problem.BUSY.format(status=status))
    # A redirect (3xx) lands here too: it would send the envelope somewhere the
    # card never named, and http.client does not follow one.
    raise _Refused(Problem.REFUSED.format(status=status))


def _connection(
    inbox: Inbox, addresses: tuple[IPAddress, ...], *, timeout: float
) -> http.client.HTTPConnection:
    if inbox.scheme == "https":
        return _PinnedHTTPSConnection(
            inbox.host,
            inbox.port,
            timeout=timeout,
            addresses=addresses,
            context=ssl.create_default_context(),
        )
    return _PinnedHTTPConnection(inbox.host, inbox.port, timeout=timeout, addresses=addresses)




class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, *, addresses: tuple[IPAddress, ...], **kwargs):
        super().__init__(host, port, **kwargs)
        self.addresses = addresses

    def connect(self) -> None:
        self.sock = connect_to_one_of(self.addresses, self.port, self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, *, addresses: tuple[IPAddress, ...], **kwargs):
        super().__init__(host, port, **kwargs)
        self.addresses = addresses

    def connect(self) -> None:
        sock = connect_to_one_of(self.addresses, self.port, self.timeout)
        # The certificate is checked against the name in the card (SNI too), not
        # against the address we pinned.
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def _record(message: Message, *, failed: bool, error: str) -> None:
    if not error:
        state = Message.Delivery.DELIVERED
    else:
        state = Message.Delivery.FAILED if failed else Message.Delivery.PENDING
    with audited(actor=None, comment=f"Delivery of message {message.pk}: {state}"):
        Message.objects.filter(pk=message.pk).exclude(delivery=Message.Delivery.DELIVERED).update(
            delivery=state,
            attempts=F("attempts") + 1,
            last_error=error[:400],
            delivered_at=timezone.now() if state == Message.Delivery.DELIVERED else None,
        )
    if failed:
        log.warning("Message %s not delivered: %s", message.pk, error)


# Rows written before delivery problems were kinds of failure held the socket's
# own words; they are shown as the kind they were.
_EARLIER_WORDING = [
    (re.compile(r"The recipient's server could not be reached"), Problem.COULD_NOT_CONNECT),
    (re.compile(r"The recipient's server answered HTTP (\d{3}); will try again\.$"), Problem.BUSY),
    (
        re.compile(r"The recipient's server refused the envelope \(HTTP (\d{3})\)\.$"),
        Problem.REFUSED,
    ),
    (re.compile(r"The recipient refused the envelope"), Problem.REFUSED_HERE),
]


def _pattern(template: str) -> re.Pattern:
    escaped = re.escape(template)
    escaped = escaped.replace(re.escape("{status}"), r"\d{3}")
    escaped = escaped.replace(re.escape("{reason}"), r"[a-z/:.,' -]+")
    return re.compile(escaped)


_PROBLEMS = [
    _pattern(value)
    for name, value in vars(Problem).items()
    if not name.startswith("_") and isinstance(value, str)
]


def dispatch_problem(last_error: str) -> str:
    """What an owner is shown for a delivery's last problem ("" when there is none)."""
    if not last_error or any(pattern.fullmatch(last_error) for pattern in _PROBLEMS):
        return last_error
    for earlier, problem in _EARLIER_WORDING:
        match = earlier.match(last_error)
        if match:
            return problem.format(status=match.group(1)) if match.groups() else problem
    return Problem.OTHER
