"""Celery tasks: thin callers of services, safe to run twice.

Each keeps the name it had in ``catalog.tasks``: plans queued by an earlier release,
and beat's schedule, still reach it. A task new here is named after this module.
(The task that prepares plans after a yank lives with its receiver and its service, in
pixie.installer.after_yank.)"""

from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from .plan_state import TRANSIENT_ERRORS, plan_mark_failed, plans_stuck
from .policy import plans_expire
from .run import plan_run


@shared_task(
    name="catalog.tasks.apply_plan",
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
        return plan_run(plan_id=plan_id)
    except TRANSIENT_ERRORS:
        if self.request.retries >= self.max_retries:
            # The raw error is in the worker's log (Celery logs the task's exception).
            plan_mark_failed(
                plan_id=plan_id,
                error=f"Plan #{plan_id} could not be applied: the database stayed unreachable "
                f"after {self.max_retries + 1} attempts. Nothing was changed; create a new plan.",
            )
        raise


@shared_task(name="catalog.tasks.recover_stuck_plans")
def recover_stuck_plans() -> list[int]:
    """Periodic (beat): queue again the applies a lost broker message left behind."""
    older_than = timezone.now() - timedelta(seconds=settings.PIXIE_PLAN_STUCK_AFTER)
    stuck = plans_stuck(older_than=older_than)
    for plan_id in stuck:
        apply_plan.delay(plan_id)
    return stuck


@shared_task(name="pixie.installer.tasks.expire_plans", acks_late=True)
def expire_plans() -> list[int]:
    """Periodic (beat): proposed plans past their workspace's required expiry become
    stale, a bounded batch a run (pixie.installer.policy.plans_expire)."""
    return plans_expire()
