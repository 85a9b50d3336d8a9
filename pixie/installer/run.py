"""Apply a plan of any kind: the one entry point the task calls."""

from __future__ import annotations

from catalog.models import Plan

from .plan_apply import plan_apply
from .plan_kinds import KINDS


def plan_run(*, plan_id: int) -> str:
    """Apply the plan if it is approved, whatever its kind; return its status."""
    kind = Plan.objects.filter(pk=plan_id).values_list("kind", flat=True).first()
    if kind is None:  # gone: the bundle apply says so as it always has
        return plan_apply(plan_id=plan_id)
    return KINDS[kind].apply(plan_id=plan_id)
