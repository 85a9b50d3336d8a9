"""Sending: a letter signed by the workspace, sealed to the contact, delivered by a task."""

from __future__ import annotations

import uuid

import reversion
from django.utils import timezone

from pixie.core.audit.records import audited
from pixie.core.errors import ValidationFailed
from pixie.core.models import Workspace
from pixie.core.people.permissions import require_owner
from pixie.sharing import crypto
from pixie.sharing.models import Contact, Message
from pixie.sharing.tasks import dispatch_message

from .identities import card_fields, identity_ensure, private_keys
from .letters import MAX_TEXT, body_problems


def text_send(*, workspace: Workspace, contact: Contact, text: object, actor) -> Message:
    """A plain message a person typed."""
    if isinstance(text, str) and len(text) > MAX_TEXT:
        raise ValidationFailed(f"the message is {len(text)} characters; the limit is {MAX_TEXT}")
    return message_send(
        workspace=workspace,
        contact=contact,
        body=text,
        actor=actor,
        comment=f"Sent a message to {contact.name}",
    )


def message_send(
    *, workspace: Workspace, contact: Contact, body: object, actor, comment: str
) -> Message:
    """Seal ``body`` to ``contact`` and queue its delivery once this transaction commits."""
    # Imported here: the task module imports the delivery service, which
    # imports the receiving side, and none of them need this one.

    require_owner(user=actor, workspace=workspace)
    if contact.workspace_id != workspace.pk:
        raise ValidationFailed(f"{contact.name} is not one of {workspace.name}'s contacts.")
    problems = body_problems(body)
    if problems:
        raise ValidationFailed(problems)
    identity = identity_ensure(workspace=workspace)
    keys = private_keys(identity)
    message_id = uuid.uuid4()
    letter = {
        "message_id": str(message_id),
        "recipient_box_public": crypto.key_from_b64(contact.box_public_key),
        "sender": card_fields(workspace=workspace, identity=identity),
        "signing_seed": keys.signing_seed,
        "sent_at": timezone.now().isoformat(),
        "body": body,
    }
    with audited(actor=actor, comment=comment):
        message = Message.objects.create(
            workspace=workspace,
            direction=Message.Direction.OUTGOING,
            message_id=message_id,
            envelope=crypto.seal(**letter),
            own_copy=crypto.seal(**letter, seal_to=keys.box_public),
            contact=contact,
            delivery=Message.Delivery.PENDING,
        )
        dispatch_message.delay_on_commit(message.pk)
    return message


def message_retry(*, message: Message, actor) -> Message:
    """Try again to deliver a message that could not be delivered."""

    require_owner(user=actor, workspace=message.workspace)
    if message.direction != Message.Direction.OUTGOING:
        raise ValidationFailed("Only a message you sent can be delivered again.")
    with audited(actor=actor, comment=f"Retried delivery of message {message.pk}"):
        updated = Message.objects.filter(pk=message.pk, delivery=Message.Delivery.FAILED).update(
            delivery=Message.Delivery.PENDING, last_error=""
        )
        if updated:
            message.refresh_from_db()
            reversion.add_to_revision(message)  # an update() saves no version of its own
            dispatch_message.delay_on_commit(message.pk)
    message.refresh_from_db()
    return message
