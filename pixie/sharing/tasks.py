"""Celery tasks for sharing: thin callers of services, safe to run twice.

Each keeps the name it had when it lived in ``pixie.tasks``: messages queued by an
earlier release, and beat's schedule, still reach it.
"""

from celery import shared_task
from django.conf import settings

from pixie.sharing.dispatch import DispatchDeferred, message_dispatch
from pixie.sharing.triage import messages_expire


@shared_task(
    name="pixie.tasks.deliver_message",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(DispatchDeferred,),
    retry_backoff=5,
    retry_backoff_max=600,
    retry_jitter=True,
    max_retries=settings.PIXIE_DISPATCH_MAX_RETRIES,
)
def dispatch_message(self, message_pk: int) -> str:
    # In-process (eager) runs retry with no wait in between, which would only
    # hammer the recipient; one attempt, then the owner can retry from the outbox.
    final_attempt = self.request.is_eager or self.request.retries >= self.max_retries
    return message_dispatch(message_pk=message_pk, final_attempt=final_attempt)


@shared_task(name="pixie.tasks.expire_unknown_messages", acks_late=True)
def expire_unknown_messages() -> int:
    """Beat runs this (settings.CELERY_BEAT_SCHEDULE); deleting what is gone is a no-op."""
    return messages_expire()
