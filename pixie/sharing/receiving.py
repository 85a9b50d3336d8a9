"""Receiving: an envelope from anywhere is checked whole before it is kept.

Only the sealed bytes are stored, under the recipient's workspace; the letter
is opened again each time it is shown. Whatever is wrong, the sender learns
only that the envelope was refused (the reason goes to the log).
"""

from __future__ import annotations

import logging

from django.db import IntegrityError

from pixie import crypto
from pixie.audit import audited
from pixie.errors import PixieError
from pixie.models import Identity, Message

from .envelopes import envelope_parse
from .identities import private_keys
from .letters import letter_problems

log = logging.getLogger(__name__)


class EnvelopeRefusedError(PixieError):
    code = "refused"
    status = 400

    def __init__(self):
        super().__init__("The envelope was refused.")


class AlreadyReceived(PixieError):
    code = "duplicate"
    status = 409

    def __init__(self):
        super().__init__("This envelope was already received.")


def envelope_receive(*, raw: bytes) -> Message:
    """Keep an envelope for its recipient, or refuse it (bad shape, seal, signature,
    recipient, id, or a message id already received)."""
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
    try:
        with audited(actor=None, comment=f"Received message {message_id}"):
            return Message.objects.create(
                workspace=identity.workspace,
                direction=Message.Direction.INCOMING,
                message_id=message_id,
                envelope=sealed,
            )
    except IntegrityError:
        raise AlreadyReceived from None
