"""Receiving: an envelope from anywhere is checked whole before it is kept.

Only the sealed bytes are stored, under the recipient's workspace; the letter
is opened again each time it is shown. Whatever is wrong, the sender learns
only that the envelope was refused (the reason goes to the log). The letter is
opened in memory on arrival so the limits of pixie.sharing.guard know whether
its signing key is a contact's before anything is stored.
"""

from __future__ import annotations

import logging

from django.db import IntegrityError
from django.urls import reverse

from pixie.core.audit.records import audited
from pixie.core.errors import ErrorCode, PixieError
from pixie.core.notifications.service import Kind, Notice, notify
from pixie.core.skillshare import SENTINEL
from pixie.sharing import crypto
from pixie.sharing.models import BlockedSender, Contact, Identity, Message

from . import guard
from .envelopes import envelope_parse
from .identities import private_keys
from .letters import letter_problems

log = logging.getLogger(__name__)


class EnvelopeRefusedError(PixieError):
    code = ErrorCode.REFUSED
    status = 400

    def __init__(self):
        super().__init__("The envelope was refused.")


class AlreadyReceived(PixieError):
    code = ErrorCode.DUPLICATE
    status = 409

    def __init__(self):
        super().__init__("This envelope was already received.")


def envelope_receive(*, raw: bytes, address: str | None = None) -> Message | None:
    """Keep an envelope for its recipient, or refuse it.

    Refused with EnvelopeRefusedError: bad shape, seal, signature, recipient or
    id; AlreadyReceived: a message id already here; InboxBusy (429): an
    unknown sender past a rate limit, or a quota full (pixie.sharing.guard).
    A blocked sender's envelope is dropped unstored and None returned: the
    sender is answered as if it had been taken, and learns nothing.
    ``address`` is the client's (None for a delivery from this same server); an
    address that sent too many refused envelopes is not read at all for a while.
    """
    guard.refused_envelopes_check(address=address)
    try:
        message_id, sealed, identity, letter = _opened(raw)
    except PixieError:  # unreadable, too large, or for no workspace here
        guard.refused_envelope_count(address=address)
        raise
    workspace = identity.workspace
    tag = crypto.sender_tag(letter.signing_key)
    contact_name = (
        Contact.objects.filter(
            workspace=workspace, signing_public_key=crypto.b64(letter.signing_key)
        )
        .values_list("name", flat=True)
        .first()
    )
    from_contact = contact_name is not None
    try:
        if not from_contact:
            # Before the blocked check: a blocked sender is slowed down like any stranger
            # (which tells it nothing a stranger would not learn).
            guard.rate_limits_check(workspace=workspace, sender_tag=tag, address=address)
        if BlockedSender.objects.filter(workspace=workspace, sender_tag=tag).exists():
            log.info("Dropped envelope %s: its sender is blocked", message_id)
            guard.refusal_count(workspace=workspace, reason=guard.BLOCKED)
            return None
        received = Message.objects.filter(workspace=workspace, direction=Message.Direction.INCOMING)
        if received.filter(message_id=message_id).exists():
            raise AlreadyReceived
        with audited(actor=None, comment=f"Received message {message_id}"):
            guard.quota_check(identity=identity, from_contact=from_contact, size=len(sealed))
            message = Message.objects.create(
                workspace=workspace,
                direction=Message.Direction.INCOMING,
                message_id=message_id,
                envelope=sealed,
                size=len(sealed),
                from_contact=from_contact,
                sender_tag=tag,
            )
            if SENTINEL in letter.body:  # the cheap test, as the inbox makes it
                _share_arrived(message, contact_name)
            return message
    except guard.InboxBusy as exc:
        log.info("Refused envelope %s for %s: %s", message_id, workspace.slug, exc.reason)
        guard.refusal_count(workspace=workspace, reason=exc.reason)
        raise
    except IntegrityError:
        raise AlreadyReceived from None


def _share_arrived(message: Message, contact_name: str | None) -> None:
    """The recipient workspace's owners are told. A stranger's claimed name is not
    repeated: it is theirs to choose, and an email is no place to trust it."""
    sender = contact_name or "someone who is not one of your contacts"
    notify(
        kind=Kind.SHARE_ARRIVED,
        notices=[
            Notice(
                workspace_id=message.workspace_id,
                event=f"message:{message.pk}:share",
                title=f"A skill share arrived from {sender}: review it before importing",
                url=reverse("admin:pixie_message_review", args=[message.pk]),
            )
        ],
    )


def _opened(raw: bytes):
    """(message id, sealed bytes, recipient identity, letter), or a PixieError."""
    message_id, to, sealed = envelope_parse(raw)
    identity = (
        Identity.objects.select_related("workspace").filter(box_public_key=crypto.b64(to)).first()
    )
    if identity is None:
        log.info("Refused envelope %s: no workspace here holds its recipient key", message_id)
        raise EnvelopeRefusedError
    keys = private_keys(identity)
    try:
        letter = crypto.open_sealed(
            sealed=sealed,
            box_private=keys.box_private,
            message_id=str(message_id),
            addressed_to=keys.box_public,
        )
    except crypto.EnvelopeRefused as exc:
        log.info("Refused envelope %s: %s", message_id, exc)
        raise EnvelopeRefusedError from None
    problems = letter_problems(letter)
    if problems:
        log.info("Refused envelope %s: %s", message_id, "; ".join(problems))
        raise EnvelopeRefusedError
    return message_id, sealed, identity, letter
