"""An uninstall: the bundle's skills leave the workspace and its agents (a local edit is
kept as the workspace's own), with its hosts and credential requirements."""

from __future__ import annotations

from catalog.models import Plan
from pixie.core.errors import ErrorCode, ValidationFailed

from ..plan_apply import plan_apply
from ..plan_kinds import Effect, PlanKind, PlanRequest, register
from ..plans import installed, plan_create


@register
class Uninstall(PlanKind):
    value = Plan.Kind.UNINSTALL
    a = "an uninstall"
    effect = Effect.REMOVES
    planner = "uninstall"

    def check(self, *, workspace, bundle_version, installation, generation) -> None:
        if installation is None:
            raise ValidationFailed(
                f"The bundle is not installed in {workspace.name}; plan an install",
                code=ErrorCode.NOT_INSTALLED,
            )

    def create(self, request: PlanRequest) -> Plan:
        installation = installed(request.workspace, request.bundle, doing="uninstall")
        return plan_create(
            workspace=request.workspace,
            kind=self.value,
            actor=request.actor,
            bundle_version=installation.bundle_version,
            agents=request.agents,
            fork_choices=request.fork_choices,
            leave_out=request.leave_out,
        )

    def apply(self, *, plan_id: int) -> str:
        return plan_apply(plan_id=plan_id)

    def words(self, plan: Plan) -> str:
        return f"the uninstall of {plan.installation.bundle.name}" if plan.installation_id else ""
