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
from datetime import timedelta

from django.conf import settings
from django.core.mail import send_mail
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
from django.urls import reverse
from django.utils import timezone

from pixie.core.errors import ErrorCode, ValidationFailed
from pixie.core.models import Membership, Notification, NotificationChoice
from pixie.core.names import one_line

log = logging.getLogger(__name__)

Kind = Notification.Kind
TITLE_MAX = Notification._meta.get_field("title").max_length
EVENT_MAX = Notification._meta.get_field("event").max_length
EMAIL_BATCH = 200
# A failed email is tried again after 60 s, then 120 s, 240 s ... at most EMAIL_ATTEMPTS
# times in all (about half an hour); beat looks for emails owed every
# minute (settings.CELERY_BEAT_SCHEDULE, PIXIE_EMAIL_EVERY).
EMAIL_ATTEMPTS = 6
EMAIL_RETRY_AFTER = 60
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


def _clip(title: str) -> str:
    return title if len(title) <= TITLE_MAX else title[: TITLE_MAX - 1] + "…"


def _queue_emails() -> None:
    from pixie.core.tasks import send_notification_emails

    send_notification_emails.delay()


# --- email -----------------------------------------------------------------------------


def _pending(now):
    return (
        Notification.objects.filter(
            email_wanted=True,
            emailed_at__isnull=True,
            user__is_active=True,
            email_attempts__lt=EMAIL_ATTEMPTS,
        )
        .filter(Q(email_next_try__isnull=True) | Q(email_next_try__lte=now))
        .exclude(user__email="")
    )


def notification_emails_send(*, limit: int = EMAIL_BATCH) -> int:
    """Send the emails owed now, oldest first, at most ``limit``; returns how many were
    sent. Each row is claimed before its email goes: whoever claims it sends it, once.

    Each email succeeds or fails on its own: one that fails (a mail server away, a row
    Django will not put in a header) gives its claim back with the error and a later
    time to try again, and the others still go. After EMAIL_ATTEMPTS tries it is given
    up, the error kept on the row; beat runs this every minute."""
    sent = 0
    now = timezone.now()
    owed = _pending(now).select_related("user", "workspace").order_by("pk")[:limit]
    for notification in owed:
        claimed = Notification.objects.filter(pk=notification.pk, emailed_at__isnull=True).update(
            emailed_at=timezone.now()
        )
        if not claimed:  # another run sent it meanwhile
            continue
        try:
            send_mail(
                subject=one_line(f"[Pixie] {notification.title}")[:200],
                message=email_text(notification),
                from_email=settings.DEFAULT_FROM_EMAIL,
                recipient_list=[notification.user.email],
            )
        except Exception as error:  # noqa: BLE001 - whatever it is, the next email goes
            _failed(notification, error)
            continue
        sent += 1
    return sent


def _failed(notification: Notification, error: Exception) -> None:
    attempts = notification.email_attempts + 1
    wait = EMAIL_RETRY_AFTER * 2 ** (attempts - 1)
    given_up = attempts >= EMAIL_ATTEMPTS
    Notification.objects.filter(pk=notification.pk).update(
        emailed_at=None,
        email_attempts=attempts,
        email_next_try=None if given_up else timezone.now() + timedelta(seconds=wait),
        email_error=f"{type(error).__name__}: {error}"[:300],
    )
    log.warning(
        "notification email %s to user %s failed (try %s of %s; %s): %s",
        notification.pk, notification.user_id, attempts, EMAIL_ATTEMPTS,
        "given up" if given_up else f"next in {wait} s", error,
    )  # fmt: skip


def email_text(notification: Notification) -> str:
    """The email's words: what happened, where, a link, and how to choose otherwise."""
    site = settings.PIXIE_SITE_URL
    lines = [
        f"Hello {notification.user.get_username()},",
        "",
        notification.title,
        "",
        f"Workspace: {notification.workspace.name}",
    ]
    if notification.url:
        lines.append(f"Open it: {site}{notification.url}")
    lines += [
        "",
        "You get this email because you are an owner of the workspace. To choose which "
        f"notifications you receive, and how: {site}{reverse('admin:pixie_notification_choices')}",
    ]
    return "\n".join(lines)


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
