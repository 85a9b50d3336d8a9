"""Delivery of a sent message to its contact's inbox: one attempt per call.

A contact whose identity lives on this server gets the envelope through the
same receiving service the public inbox uses; any other gets an HTTP POST.
The receiving side deduplicates by message id, so a retry never lands twice.
"""

from __future__ import annotations

import logging
import urllib.error
import urllib.request

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from pixie.audit import audited
from pixie.errors import PixieError
from pixie.models import Identity, Message

from .envelopes import envelope_dump
from .guard import InboxBusy
from .receiving import AlreadyReceived, envelope_receive

log = logging.getLogger(__name__)

DELIVERED_STATUSES = {200, 201, 202, 409}  # 409: it was already there
TRANSIENT_STATUSES = {408, 425, 429, 500, 502, 503, 504}


class DeliveryDeferred(Exception):
    """The recipient could not be reached this time; try again later."""


class _Refused(Exception):
    """The recipient answered and will not take the envelope; retrying won't help."""


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    # A redirect would turn the POST into a request somewhere the card never named.
    def redirect_request(self, *args, **kwargs):
        return None


_opener = urllib.request.build_opener(_NoRedirects)


def message_deliver(*, message_pk: int, final_attempt: bool) -> str:
    """Make one delivery attempt; raise DeliveryDeferred when a later one may succeed."""
    message = Message.objects.select_related("contact").get(
        pk=message_pk, direction=Message.Direction.OUTGOING
    )
    if message.delivery == Message.Delivery.DELIVERED:
        return "already delivered"
    contact = message.contact
    if contact is None:
        _record(message, failed=True, error="The contact was removed before delivery.")
        return "failed"
    raw = envelope_dump(
        message_id=message.message_id, to=contact.box_public_key, sealed=message.envelope
    )
    try:
        if Identity.objects.filter(box_public_key=contact.box_public_key).exists():
            _deliver_here(raw)
        else:
            _post(contact.inbox_url, raw)
    except _Refused as exc:
        _record(message, failed=True, error=str(exc))
        return "failed"
    except DeliveryDeferred as exc:
        _record(message, failed=final_attempt, error=str(exc))
        if final_attempt:
            return "failed"
        raise
    _record(message, failed=False, error="")
    return "delivered"


def _deliver_here(raw: bytes) -> None:
    try:
        envelope_receive(raw=raw)
    except AlreadyReceived:
        pass
    except InboxBusy as exc:
        raise DeliveryDeferred(f"The recipient's inbox is full or busy: {exc.message}") from None
    except PixieError as exc:
        raise _Refused(f"The recipient refused the envelope: {exc.message}") from None


def _post(url: str, raw: bytes) -> None:
    request = urllib.request.Request(  # noqa: S310 (the scheme is checked when the card is added)
        url,
        data=raw,
        method="POST",
        headers={"Content-Type": "application/json", "User-Agent": "Pixie"},
    )
    try:
        with _opener.open(request, timeout=settings.PIXIE_DELIVERY_TIMEOUT) as response:
            status = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DeliveryDeferred(f"The recipient's server could not be reached: {reason}") from None
    if status in DELIVERED_STATUSES:
        return
    if status in TRANSIENT_STATUSES:
        raise DeliveryDeferred(f"The recipient's server answered HTTP {status}; will try again.")
    raise _Refused(f"The recipient's server refused the envelope (HTTP {status}).")


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
