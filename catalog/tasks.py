"""Celery tasks: thin callers of services, safe to run twice."""

from celery import shared_task

from catalog.services.plan_apply import TRANSIENT_ERRORS, plan_apply, plan_mark_failed


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=TRANSIENT_ERRORS,
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=8,
)
def apply_plan(self, plan_id: int) -> str:
    try:
        return plan_apply(plan_id=plan_id)
    except TRANSIENT_ERRORS as exc:
        if self.request.retries >= self.max_retries:
            plan_mark_failed(plan_id=plan_id, error=f"The database stayed unreachable: {exc}")
        raise
