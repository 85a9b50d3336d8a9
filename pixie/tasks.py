"""Celery tasks of the kernel: thin callers of services, safe to run twice.

(Sharing's tasks keep the ``pixie.tasks.*`` names they were first queued under; they
live in pixie.sharing.tasks.)"""

from celery import shared_task

from .notifications import notification_emails_send


@shared_task(
    name="pixie.notifications.send_emails",
    acks_late=True,
    autoretry_for=(OSError,),  # the mail server away: each failed row was given back
    retry_backoff=30,
    retry_backoff_max=900,
    retry_jitter=True,
    max_retries=8,
)
def send_notification_emails() -> int:
    """Send the notification emails still owed; each row is claimed before it is sent."""
    return notification_emails_send()
