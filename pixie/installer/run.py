"""Apply a plan of any kind: the one entry point the task calls."""

from __future__ import annotations

from catalog.models import Plan

from .plan_apply import plan_apply
from .repoint import repoint_apply

# Each kind's apply; the ones not named here are bundle plans (install, upgrade, uninstall).
APPLIES = {Plan.Kind.REPOINT: repoint_apply}


def plan_run(*, plan_id: int) -> str:
    """Apply the plan if it is approved, whatever its kind; return its status."""
    kind = Plan.objects.filter(pk=plan_id).values_list("kind", flat=True).first()
    return APPLIES.get(kind, plan_apply)(plan_id=plan_id)
