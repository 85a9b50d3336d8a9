"""A waiting plan whose asker left (pixie.installer.offboarding marked it): another owner takes it
over, and is its asker from then on (for the approval policy's second-owner rule too).
Who asked is never rewritten."""

import reversion

from catalog.models import Plan
from pixie.core.audit.records import audited
from pixie.core.errors import ErrorCode, StateError
from pixie.core.people.permissions import require_owner


def plan_take_over(*, plan: Plan, actor) -> Plan:
    """An owner takes over a waiting plan whose asker left: they are its asker now (for
    the approval policy's second-owner rule too)."""
    require_owner(user=actor, workspace=plan.workspace)
    with audited(actor=actor, comment=f"Took over plan #{plan.pk}", plan=plan):
        moved = Plan.objects.filter(
            pk=plan.pk, status=Plan.State.PROPOSED, asker_left_at__isnull=False
        ).update(taken_over_by=actor, asker_left_at=None)
        if moved != 1:
            raise StateError(
                f"Plan #{plan.pk} is not waiting for a new asker; only a proposed plan whose "
                "asker left can be taken over.",
                code=ErrorCode.NOT_ORPHANED,
            )
        plan.refresh_from_db()
        reversion.add_to_revision(plan)
    return plan
