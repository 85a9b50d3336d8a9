"""Celery tasks of the kernel: thin callers of services, safe to run twice.

(Sharing's tasks keep the ``pixie.tasks.*`` names they were first queued under; they
live in pixie.sharing.tasks.)"""

from celery import shared_task

# *Verify now*'s walk of the audit chains, kept beside the service that queues it; imported
# here so that a worker (which imports each app's tasks) knows it.
from pixie.core.audit.checks import verify_chains  # noqa: F401
from pixie.core.notifications.emails import notification_emails_send


@shared_task(name="pixie.notifications.send_emails", acks_late=True)
def send_notification_emails() -> int:
    """Send the notification emails owed now; each row is claimed before it is sent, and
    one that fails is tried again on a later run (beat), never holding up the others."""
    return notification_emails_send()
