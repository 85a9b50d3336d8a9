"""Notifications: what a workspace's owners are told, in its home and by email.

A writer calls ``notify`` inside its own transaction, so a change rolled back tells
nobody. Each person is told an event once: (user, event) is unique and the rows are
written with ``ignore_conflicts``, so a hook that runs twice adds nothing. Emails go
after commit, from a task that claims each row (``emailed_at`` from NULL to now) before
sending it, so a task run twice, or two workers at once, never send one twice.

Each person chooses per kind (NotificationChoice; no row means both on): in the home,
by email, both or neither. A kind with both off creates nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import (
    BooleanField,
    Exists,
    ExpressionWrapper,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from pixie.core.errors import ErrorCode, ValidationFailed
from pixie.core.models import Membership, Notification, NotificationChoice
from pixie.core.people.permissions import OPERATORS_GROUP
from pixie.core.tasks import send_notification_emails

log = logging.getLogger(__name__)

Kind = Notification.Kind
TITLE_MAX = Notification._meta.get_field("title").max_length
EVENT_MAX = Notification._meta.get_field("event").max_length
# Ordered on: unread (false) before read.
READ = ExpressionWrapper(Q(read_at__isnull=False), output_field=BooleanField())


@dataclass(frozen=True)
class Notice:
    """One event in one workspace: its owners are told (all but ``asker_id``)."""

    workspace_id: int
    event: str  # unique per person: the same event is never told twice
    title: str
    url: str = ""
    asker_id: int | None = None  # for a plan waiting: the owner who asked is not told


def notify(*, kind: str, notices: Iterable[Notice]) -> int:
    """Tell each notice's workspace's owners, as each chose; returns the rows written
    (a conflict with an earlier row of the same event writes none). One query for any
    number of notices: the owners of all their workspaces, each with their choice."""
    notices = [n for n in notices]
    if not notices:
        return 0
    choice = NotificationChoice.objects.filter(user_id=OuterRef("user_id"), kind=kind)
    owners = (
        Membership.objects.filter(
            workspace_id__in={n.workspace_id for n in notices},
            role=Membership.Role.OWNER,
            user__is_active=True,
        )
        .annotate(
            in_home=Coalesce(Subquery(choice.values("in_home")[:1]), Value(True)),
            by_email=Coalesce(Subquery(choice.values("by_email")[:1]), Value(True)),
        )
        .values_list("workspace_id", "user_id", "user__email", "in_home", "by_email")
        .order_by("workspace_id", "user_id")
    )
    by_workspace: dict[int, list[tuple[int, str]]] = {}
    chosen: dict[int, tuple[bool, bool]] = {}
    for workspace_id, user_id, email, in_home, by_email in owners:
        by_workspace.setdefault(workspace_id, []).append((user_id, email))
        chosen[user_id] = (bool(in_home), bool(by_email))
    if not chosen:
        return 0
    rows = []
    for notice in notices:
        for user_id, email in by_workspace.get(notice.workspace_id, []):
            in_home, by_email = chosen.get(user_id, (True, True))
            if user_id == notice.asker_id or not (in_home or by_email):
                continue
            rows.append(
                Notification(
                    user_id=user_id,
                    workspace_id=notice.workspace_id,
                    kind=kind,
                    event=notice.event[:EVENT_MAX],
                    title=_clip(notice.title),
                    url=notice.url,
                    email_wanted=by_email and bool(email),
                )
            )
    if not rows:
        return 0
    Notification.objects.bulk_create(rows, ignore_conflicts=True)
    if any(row.email_wanted for row in rows):
        transaction.on_commit(_queue_emails)
    return len(rows)


def notify_operators(*, kind: str, event: str, title: str, url: str = "") -> int:
    """Tell every active operator (a superuser, or in the group ``operators``) of an event
    that is the catalog's, not a workspace's: a notification belongs to a workspace, so
    each is told in the first workspace they are a member of (an operator in none is not
    told here). As each chose; an event is told once."""
    operators = (
        Membership.objects.filter(user__is_active=True)
        .filter(Q(user__is_superuser=True) | Q(user__groups__name=OPERATORS_GROUP))
        .order_by("user_id", "pk")
        .values_list("user_id", "workspace_id", "user__email")
    )
    first: dict[int, tuple[int, str]] = {}
    for user_id, workspace_id, email in operators:
        first.setdefault(user_id, (workspace_id, email))
    if not first:
        return 0
    chosen = {
        user_id: (in_home, by_email)
        for user_id, in_home, by_email in NotificationChoice.objects.filter(
            user_id__in=first, kind=kind
        ).values_list("user_id", "in_home", "by_email")
    }
    rows = []
    for user_id, (workspace_id, email) in first.items():
        in_home, by_email = chosen.get(user_id, (True, True))
        if not (in_home or by_email):
            continue
        rows.append(
            Notification(
                user_id=user_id,
                workspace_id=workspace_id,
                kind=kind,
                event=event[:EVENT_MAX],
                title=_clip(title),
                url=url,
                email_wanted=by_email and bool(email),
            )
        )
    if not rows:
        return 0
    Notification.objects.bulk_create(rows, ignore_conflicts=True)
    if any(row.email_wanted for row in rows):
        transaction.on_commit(_queue_emails)
    return len(rows)


def _clip(title: str) -> str:
    return title if len(title) <= TITLE_MAX else title[: TITLE_MAX - 1] + "…"


def _queue_emails() -> None:
    send_notification_emails.delay()


# --- what a person reads, and marks read -------------------------------------------------


def notifications_shown(*, user, workspace) -> QuerySet[Notification]:
    """The person's notifications in the workspace, unread first, newest first; a kind
    they chose to keep out of the home is left out (one query, the choice inside it)."""
    hidden = NotificationChoice.objects.filter(user=user, kind=OuterRef("kind"), in_home=False)
    return (
        Notification.objects.filter(user=user, workspace=workspace)
        .filter(~Exists(hidden))
        .order_by(READ.asc(), "-created_at", "-pk")
    )


def notifications_mark_read(*, user, workspace, ids: Iterable[int] | None = None) -> int:
    """Mark the person's unread notifications in the workspace read (only ``ids``, when
    given); their own record, so no history entry. Returns how many."""
    unread = Notification.objects.filter(user=user, workspace=workspace, read_at__isnull=True)
    if ids is not None:
        unread = unread.filter(pk__in=list(ids))
    return unread.update(read_at=timezone.now())


# --- each person's choices ---------------------------------------------------------------


def notification_choices(*, user) -> dict[str, dict[str, bool]]:
    """Every kind, in its order, with the person's choice (both on without a row)."""
    saved = {
        kind: {"in_home": in_home, "by_email": by_email}
        for kind, in_home, by_email in NotificationChoice.objects.filter(user=user).values_list(
            "kind", "in_home", "by_email"
        )
    }
    return {kind: saved.get(kind, {"in_home": True, "by_email": True}) for kind in Kind.values}


def notification_choices_set(*, user, choices: dict[str, dict[str, bool]]) -> dict:
    """Save the person's choice for each kind named (the others stay as they were)."""
    unknown = sorted(set(choices) - set(Kind.values))
    if unknown:
        raise ValidationFailed(
            f"No kind of notification {', '.join(unknown)}; the kinds are {', '.join(Kind.values)}",
            code=ErrorCode.UNKNOWN_KIND,
        )
    with transaction.atomic():
        for kind, choice in choices.items():
            NotificationChoice.objects.update_or_create(
                user=user,
                kind=kind,
                defaults={
                    "in_home": bool(choice.get("in_home", True)),
                    "by_email": bool(choice.get("by_email", True)),
                },
            )
    return notification_choices(user=user)
