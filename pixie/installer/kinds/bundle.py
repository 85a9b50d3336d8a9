"""What the kinds that bring or remove a bundle version share: the bundle planner
(``plan_create``, told how to plan by ``planner``) and the bundle apply (``plan_apply``).
Not a kind itself: install, upgrade, uninstall and rollback build on it."""

from __future__ import annotations

from catalog.models import BundleVersion, Plan

from ..plan_apply import plan_apply
from ..plan_kinds import PlanKind, PlanRequest
from ..plans import plan_create, version_visible


class BundleKind(PlanKind):
    def version(self, request: PlanRequest) -> BundleVersion:
        """The version the plan is computed against: by default the published one named."""
        return version_visible(request.workspace, request.bundle, request.version)

    def create(self, request: PlanRequest) -> Plan:
        return plan_create(
            workspace=request.workspace,
            kind=self.value,
            actor=request.actor,
            bundle_version=self.version(request),
            agents=request.agents,
            fork_choices=request.fork_choices,
            leave_out=request.leave_out,
            following=request.following,
        )

    def apply(self, *, plan_id: int) -> str:
        return plan_apply(plan_id=plan_id)
