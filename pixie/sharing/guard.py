"""What the public inbox lets in: rate limits, quotas, blocked senders, and their tallies.

Anyone may post to the inbox (a contact card names it and its key), so what a
stranger can make this server keep is bounded:

- *Rate limits* on envelopes from unknown senders (signing keys that are not
  one of the recipient's contacts): per recipient workspace, per client
  address and per sender key, fixed windows counted in the "ratelimit" cache
  (Redis when REDIS_URL is set) by django-ratelimit.
- *Quotas* on what is pending (received, and not yet imported, kept or
  deleted by an owner): a count and a byte total per recipient workspace,
  one pair for unknown senders (small) and one for contacts (larger). Checked
  under a lock on the workspace's identity row, in the transaction that
  stores the envelope, so simultaneous posts cannot overshoot.
- *Blocked* senders' envelopes are dropped unstored.

Contacts are exempt from the unknown senders' quota and from the rate limits.
Every refusal adds one to the workspace's tally for the day (InboxRefusals).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q, Sum
from django.utils import timezone
from django_ratelimit.core import get_usage

from pixie.core.errors import ErrorCode, PixieError
from pixie.core.models import Workspace
from pixie.core.web.addresses import client_address  # noqa: F401 (sharing's services name it)
from pixie.sharing.models import Identity, InboxRefusals, Message

log = logging.getLogger(__name__)

OVER_QUOTA = "over_quota"
RATE_LIMITED = "rate_limited"
BLOCKED = "blocked"
REASONS = (OVER_QUOTA, RATE_LIMITED, BLOCKED)


class InboxBusy(PixieError):
    """Refused for now; the sender may try again after ``retry_after`` seconds."""

    code = ErrorCode.TRY_LATER
    status = 429

    def __init__(self, *, reason: str, retry_after: int):
        super().__init__("The inbox cannot take this envelope now; try again later.")
        self.reason = reason
        self.retry_after = max(1, int(retry_after))


# --- pure rules -------------------------------------------------------------------


@dataclass(frozen=True)
class Quota:
    messages: int
    bytes: int


@dataclass(frozen=True)
class Pending:
    messages: int = 0
    bytes: int = 0

    def fits(self, size: int, quota: Quota) -> bool:
        return self.messages + 1 <= quota.messages and self.bytes + size <= quota.bytes


def quota_for(*, from_contact: bool) -> Quota:
    if from_contact:
        return Quota(
            settings.PIXIE_INBOX_CONTACT_MAX_PENDING, settings.PIXIE_INBOX_CONTACT_MAX_PENDING_BYTES
        )
    return Quota(
        settings.PIXIE_INBOX_UNKNOWN_MAX_PENDING, settings.PIXIE_INBOX_UNKNOWN_MAX_PENDING_BYTES
    )


# --- checks on arrival --------------------------------------------------------------


def rate_limits_check(*, workspace: Workspace, sender_tag: str, address: str | None) -> None:
    """Count one envelope from an unknown sender against each limit; InboxBusy past one."""
    buckets = [
        ("inbox-workspace", str(workspace.pk), settings.PIXIE_INBOX_UNKNOWN_RATE_PER_WORKSPACE),
        ("inbox-sender", sender_tag, settings.PIXIE_INBOX_UNKNOWN_RATE_PER_SENDER),
    ]
    if address:  # a delivery from this same server has no address
        buckets.append(("inbox-address", address, settings.PIXIE_INBOX_UNKNOWN_RATE_PER_ADDRESS))
    wait = 0
    for group, value, rate in buckets:
        if not rate:
            continue
        usage = _usage(group, value, rate, increment=True)
        if usage and usage["should_limit"]:
            wait = max(wait, usage["time_left"] if usage["time_left"] > 0 else 60)
    if wait:
        raise InboxBusy(reason=RATE_LIMITED, retry_after=wait)


def refused_envelopes_check(*, address: str | None) -> None:
    """Before an envelope is read: InboxBusy when its address sent too many refused ones.

    Opening an envelope costs a little work whoever sent it; an address that keeps
    sending ones that cannot be opened stops being read for a while (its good
    envelopes too: before opening, they cannot be told apart).
    """
    rate = settings.PIXIE_INBOX_REFUSED_RATE_PER_ADDRESS
    if not address or not rate:
        return
    # With the cache down this check lets envelopes through: the limits after opening
    # still hold strangers back, and contacts keep getting in.
    usage = _usage("inbox-refused", address, rate, increment=False, fail_closed=False)
    # Not counting this one: the address is held once it has used up the window.
    if usage and (usage["should_limit"] or usage.get("count", 0) >= usage.get("limit", 1)):
        raise InboxBusy(reason=RATE_LIMITED, retry_after=usage["time_left"] or 60)


def refused_envelope_count(*, address: str | None) -> None:
    """Count one envelope from ``address`` that was refused as unreadable or not for here."""
    rate = settings.PIXIE_INBOX_REFUSED_RATE_PER_ADDRESS
    if address and rate:
        _usage("inbox-refused", address, rate, increment=True, fail_closed=False)


def _usage(
    group: str, value: str, rate: str, *, increment: bool, fail_closed: bool = True
) -> dict | None:
    try:
        return get_usage(None, group=group, key=_constant(value), rate=rate, increment=increment)
    except Exception:  # the cache is down
        log.exception("Inbox rate limit %s could not be counted", group)
        return {"should_limit": True, "time_left": 60} if fail_closed else None


def _constant(value: str):
    """A django-ratelimit key function for a key we already know (there is no request)."""
    return lambda _group, _request: value


def quota_check(*, identity: Identity, from_contact: bool, size: int) -> None:
    """Inside the storing transaction: lock the recipient, count, refuse past the quota.

    The identity row is the recipient's lock: two envelopes for one workspace
    are counted one after the other, so together they cannot pass the quota.
    """
    Identity.objects.select_for_update().filter(pk=identity.pk).values_list("pk").first()
    counted = _pending(Q(workspace_id=identity.workspace_id, from_contact=from_contact))
    pending = Pending(counted["messages"], counted["bytes"] or 0)
    if not pending.fits(size, quota_for(from_contact=from_contact)):
        raise InboxBusy(reason=OVER_QUOTA, retry_after=settings.PIXIE_INBOX_FULL_RETRY_AFTER)


def _pending(where: Q) -> dict:
    return Message.objects.filter(
        where, direction=Message.Direction.INCOMING, reviewed_at__isnull=True
    ).aggregate(messages=Count("pk"), bytes=Sum("size"))


# --- the tally of refusals ------------------------------------------------------------


def refusal_count(*, workspace: Workspace, reason: str) -> None:
    """Add one to today's tally. Runs in its own short transaction, after the refusal."""
    if reason not in REASONS:
        raise ValueError(f"No such refusal reason: {reason!r}")
    day = timezone.localdate()
    bump = {reason: F(reason) + 1}
    with transaction.atomic():
        if InboxRefusals.objects.filter(workspace=workspace, day=day).update(**bump):
            return
        try:
            with transaction.atomic():
                InboxRefusals.objects.create(workspace=workspace, day=day, **{reason: 1})
        except IntegrityError:  # another refusal made today's row first
            InboxRefusals.objects.filter(workspace=workspace, day=day).update(**bump)


# --- what owners see -------------------------------------------------------------------

REFUSALS_SHOWN_DAYS = 30


@dataclass(frozen=True)
class InboxState:
    workspace: Workspace
    unknown: Pending
    contacts: Pending
    unknown_quota: Quota
    contact_quota: Quota
    refused: dict[str, int]  # reason -> count over the last REFUSALS_SHOWN_DAYS days

    @property
    def refused_total(self) -> int:
        return sum(self.refused.values())


def inbox_states(*, workspaces: list[Workspace]) -> list[InboxState]:
    """Pending counts and recent refusals of each workspace, in two queries whatever the count."""
    ids = [workspace.pk for workspace in workspaces]
    pending: dict[tuple[int, bool], Pending] = {}
    rows = (
        Message.objects.filter(
            workspace_id__in=ids, direction=Message.Direction.INCOMING, reviewed_at__isnull=True
        )
        .values("workspace_id", "from_contact")
        .annotate(messages=Count("pk"), bytes=Sum("size"))
    )
    for row in rows:
        pending[(row["workspace_id"], row["from_contact"])] = Pending(
            row["messages"], row["bytes"] or 0
        )
    since = timezone.localdate() - timedelta(days=REFUSALS_SHOWN_DAYS - 1)
    refused = {
        row["workspace_id"]: row
        for row in InboxRefusals.objects.filter(workspace_id__in=ids, day__gte=since)
        .values("workspace_id")
        .annotate(**{reason: Sum(reason) for reason in REASONS})
    }
    return [
        InboxState(
            workspace=workspace,
            unknown=pending.get((workspace.pk, False), Pending()),
            contacts=pending.get((workspace.pk, True), Pending()),
            unknown_quota=quota_for(from_contact=False),
            contact_quota=quota_for(from_contact=True),
            refused={reason: refused.get(workspace.pk, {}).get(reason) or 0 for reason in REASONS},
        )
        for workspace in workspaces
    ]
