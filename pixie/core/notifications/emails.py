"""Notification emails: sent after commit by a task (pixie.core.tasks) that claims each
row (``emailed_at`` from NULL to now) before sending it, so a task run twice, or two
workers at once, never send one twice; one that fails is tried again later, on its own.
pixie.core.notifications.service writes the rows and queues the task."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.core.mail import send_mail
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from pixie.core.models import Notification
from pixie.core.names import one_line

log = logging.getLogger(__name__)

EMAIL_BATCH = 200
# A failed email is tried again after 60 s, then 120 s, 240 s ... at most EMAIL_ATTEMPTS
# times in all (about half an hour); beat looks for emails owed every
# minute (settings.CELERY_BEAT_SCHEDULE, PIXIE_EMAIL_EVERY).
EMAIL_ATTEMPTS = 6
EMAIL_RETRY_AFTER = 60


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
