"""What a plan's owners are told (pixie.core.notifications.service): a plan waits for their
approval, an apply failed, a plan went stale. Called inside the transaction that changed the plan,
so a change rolled back tells nobody."""

from __future__ import annotations

from collections.abc import Iterable

from django.urls import reverse

from catalog.models import Plan
from pixie.core.notifications.service import Kind, Notice, notify

from .plan_kinds import kind_of

ENDED = (Plan.State.FAILED, Plan.State.STALE)


def plan_words(plan: Plan) -> str:
    """The plan in a few words: "plan #12, the upgrade to Accounts Receivable 2.2.0"."""
    what = kind_of(plan).words(plan)
    return f"plan #{plan.pk}, {what}" if what else f"plan #{plan.pk}"


def _review(plan: Plan) -> str:
    return reverse("admin:catalog_plan_review", args=[plan.pk])


def notify_plan_waiting(plan: Plan, *, asker) -> int:
    """The workspace's other owners: a plan waits for their approval."""
    who = asker.get_username() if asker is not None else "Pixie"
    words = plan_words(plan)
    return notify(
        kind=Kind.PLAN_WAITING,
        notices=[
            Notice(
                workspace_id=plan.workspace_id,
                event=f"plan:{plan.pk}:waiting",
                title=f"{words[0].upper()}{words[1:]}, waits for your approval (asked by {who})",
                url=_review(plan),
                asker_id=getattr(asker, "pk", None),
            )
        ],
    )


def notify_plan_ended(plans: Iterable[Plan | int]) -> int:
    """Every owner of each plan's workspace: its apply failed, or it went stale (after its
    apply's check, or expired). Plans not failed or stale are skipped; three queries for
    any number of plans. Call it in the transaction that marked them."""
    ids = [plan.pk if isinstance(plan, Plan) else plan for plan in plans]
    ended = Plan.objects.filter(pk__in=ids, status__in=ENDED).select_related(
        "bundle_version__bundle", "installation__bundle"
    )
    notices = []
    for plan in ended:
        words = plan_words(plan)
        went = "failed" if plan.status == Plan.State.FAILED else "went stale"
        why = f": {plan.error}" if plan.error else ""
        notices.append(
            Notice(
                workspace_id=plan.workspace_id,
                event=f"plan:{plan.pk}:{plan.status}",
                title=f"{words[0].upper()}{words[1:]}, {went}{why}",
                url=_review(plan),
            )
        )
    return notify(kind=Kind.PLAN_FAILED, notices=notices)
