"""What happens to received messages after they arrive: kept, deleted, expired, or their
sender blocked. Owners decide; a periodic task expires what nobody reviewed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

import reversion
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from pixie.core.audit.records import audited
from pixie.core.errors import ErrorCode, ValidationFailed
from pixie.core.models import Workspace
from pixie.core.people.permissions import require_owner
from pixie.sharing.models import BlockedSender, Message

from .inbox import OpenedMessage, Sender

log = logging.getLogger(__name__)

EXPIRY_BATCH = 1000


def _received(messages) -> list[Message]:
    return [m for m in messages if m.direction == Message.Direction.INCOMING]


def messages_keep(*, workspace: Workspace, messages: list[Message], actor) -> int:
    """Mark received messages reviewed: they stop counting as pending and never expire.

    One UPDATE for them all; history gets a version of each (written in one insert).
    """
    require_owner(user=actor, workspace=workspace)
    ids = [m.pk for m in _received(messages) if m.workspace_id == workspace.pk]
    now = timezone.now()
    with audited(actor=actor, comment=f"Kept {len(ids)} received message(s)"):
        # The envelopes are not read: history does not hold them.
        kept = list(
            Message.objects.filter(pk__in=ids, reviewed_at__isnull=True)
            .defer("envelope", "own_copy")
            .select_for_update()
        )
        Message.objects.filter(pk__in=[m.pk for m in kept]).update(reviewed_at=now)
        for message in kept:
            message.reviewed_at = now
            reversion.add_to_revision(message)
    return len(kept)


def messages_delete(*, workspace: Workspace, messages: list[Message], actor) -> int:
    """Delete received messages (sent ones stay: they are the outbox's record)."""
    require_owner(user=actor, workspace=workspace)
    ids = [m.pk for m in _received(messages) if m.workspace_id == workspace.pk]
    with audited(actor=actor, comment=f"Deleted {len(ids)} received message(s)"):
        Message.objects.filter(pk__in=ids).delete()
        # Deleted rows have no version of their own: the workspace's history records it.
        reversion.add_to_revision(workspace)
    log.info("%s deleted received messages %s of %s", actor, ids, workspace.slug)
    return len(ids)


def message_reviewed(*, message: Message) -> None:
    """Inside the caller's audited block: an import reviews the message it came in.

    One UPDATE and no version of its own: the ShareImport that the same
    revision records is the history of this review.
    """
    if message.reviewed_at is None:
        message.reviewed_at = timezone.now()
        Message.objects.filter(pk=message.pk).update(reviewed_at=message.reviewed_at)


@dataclass(frozen=True)
class BlockResult:
    blocked: BlockedSender
    deleted: int


def sender_block(
    *, workspace: Workspace, opened: OpenedMessage, delete_pending: bool, actor
) -> BlockResult:
    """Block the sender of a received message: its later envelopes are dropped unstored.

    With ``delete_pending``, that sender's messages not yet reviewed go too.
    """
    require_owner(user=actor, workspace=workspace)
    message = opened.message
    if message.workspace_id != workspace.pk or message.direction != Message.Direction.INCOMING:
        raise ValidationFailed("Only the sender of a message you received can be blocked.")
    if opened.problem or not message.sender_tag:
        raise ValidationFailed("This message could not be opened, so its sender is not known.")
    name = opened.claimed_name[:80]
    with audited(actor=actor, comment=f"Blocked sender “{name}”"):
        blocked, created = BlockedSender.objects.get_or_create(
            workspace=workspace,
            sender_tag=message.sender_tag,
            defaults={
                "claimed_name": name,
                "fingerprint": opened.fingerprint,
                "blocked_by": actor,
            },
        )
        deleted = 0
        if delete_pending:
            deleted, _ = pending_from(workspace=workspace, sender_tag=message.sender_tag).delete()
    if not created and not deleted:
        raise ValidationFailed(
            f"“{blocked.claimed_name}” is already blocked.", code=ErrorCode.DUPLICATE
        )
    return BlockResult(blocked=blocked, deleted=deleted)


def sender_unblock(*, blocked: BlockedSender, actor) -> None:
    require_owner(user=actor, workspace=blocked.workspace)
    with audited(actor=actor, comment=f"Unblocked sender “{blocked.claimed_name}”"):
        BlockedSender.objects.filter(pk=blocked.pk).delete()
        # A deleted row has no version of its own: the workspace's history records it.
        reversion.add_to_revision(blocked.workspace)


def pending_from(*, workspace: Workspace, sender_tag: str):
    return Message.objects.filter(
        workspace=workspace,
        direction=Message.Direction.INCOMING,
        reviewed_at__isnull=True,
        sender_tag=sender_tag,
    )


def may_block(opened: OpenedMessage) -> bool:
    """A received message that opened; a contact's too (an owner may block anyone)."""
    return (
        not opened.outgoing
        and not opened.problem
        and bool(opened.message.sender_tag)
        and opened.sender != Sender.SELF
    )


def messages_expire(*, now=None) -> int:
    """Delete unknown senders' messages nobody reviewed within the expiry, in batches.

    Safe to run twice, or in two workers at once: each batch deletes what is
    still there.
    """
    cutoff = (now or timezone.now()) - timedelta(days=settings.PIXIE_INBOX_UNKNOWN_EXPIRY_DAYS)
    expired = Message.objects.filter(
        direction=Message.Direction.INCOMING,
        from_contact=False,
        reviewed_at__isnull=True,
        created_at__lt=cutoff,
    )
    total = 0
    days = settings.PIXIE_INBOX_UNKNOWN_EXPIRY_DAYS
    while True:
        batch = list(expired.order_by("pk").values_list("pk", "workspace_id")[:EXPIRY_BATCH])
        if not batch:
            break
        by_workspace: dict[int, list[int]] = {}
        for pk, workspace_id in batch:
            by_workspace.setdefault(workspace_id, []).append(pk)
        workspaces = Workspace.objects.in_bulk(list(by_workspace))
        for workspace_id, ids in by_workspace.items():
            with transaction.atomic():
                doomed = Message.objects.filter(pk__in=ids, reviewed_at__isnull=True)
                deleted, _ = doomed.delete()
                if deleted:  # none when another worker's run took them first: no entry
                    comment = (
                        f"Expired {deleted} unreviewed message(s) from unknown senders "
                        f"after {days} days"
                    )
                    with audited(actor=None, comment=comment):
                        # Deleted rows have no version: the workspace's history records it.
                        reversion.add_to_revision(workspaces[workspace_id])
            total += deleted
    if total:
        log.info("Expired %d unreviewed message(s) from unknown senders", total)
    return total
