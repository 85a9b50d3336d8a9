"""Helpers that walk a plan through approval the way an owner does."""

from catalog.models import Plan
from pixie.installer.plans import plan_approve, plan_create


def approve_and_apply(plan, owner, capture):
    """Approve; the apply task runs when the approval commits (eager in tests)."""
    with capture(execute=True):
        plan_approve(plan=plan, actor=owner)
    plan.refresh_from_db()
    return plan


def install(workspace, bundle_version, owner, capture, agents=()):
    plan = plan_create(
        workspace=workspace, kind=Plan.Kind.INSTALL, bundle_version=bundle_version,
        actor=owner, agents=agents,
    )  # fmt: skip
    return approve_and_apply(plan, owner, capture)
