"""What every kind of plan's apply shares: which states can be applied, which errors
are worth a retry, and how a failure is recorded. Below both applies, so neither
imports the other."""

from __future__ import annotations

from django.db import InterfaceError, OperationalError, transaction
from django.utils import timezone

from catalog.models import Plan

from .plan_notices import notify_plan_ended

# Errors worth a retry: the database went away, not the plan being wrong.
TRANSIENT_ERRORS = (OperationalError, InterfaceError)
APPLICABLE = (Plan.State.APPROVED, Plan.State.APPLYING)


def plan_mark_failed(*, plan_id: int, error: str) -> None:
    with transaction.atomic():
        failed = Plan.objects.filter(pk=plan_id, status__in=APPLICABLE).update(
            status=Plan.State.FAILED, error=error[:4000], finished_at=timezone.now()
        )
        if failed:  # its owners are told once, whoever marks it
            notify_plan_ended([plan_id])


def plans_stuck(*, older_than) -> list[int]:
    """Approved plans whose apply never finished, e.g. because the broker lost the task
    (Redis restarted without persistence). Re-queueing them is safe: applying is
    idempotent and serialised by the workspace lock."""
    return list(
        Plan.objects.filter(status__in=APPLICABLE, decided_at__lt=older_than)
        .order_by("decided_at")
        .values_list("pk", flat=True)[:500]
    )
