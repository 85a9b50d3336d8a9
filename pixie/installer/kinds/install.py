"""An install: a bundle version's skills, hosts and credentials into a workspace that
does not have the bundle, its skills added to the agents the owner chose."""

from __future__ import annotations

from catalog.models import Plan
from pixie.core.errors import ErrorCode, ValidationFailed

from ..plan_apply import plan_apply
from ..plan_kinds import Effect, PlanKind, PlanRequest, check_plannable, register
from ..plans import plan_create, version_visible


@register
class Install(PlanKind):
    value = Plan.Kind.INSTALL
    a = "an install"
    effect = Effect.CREATES
    planner = "install"
    needs_version = True

    def check(self, *, workspace, bundle_version, installation, generation) -> None:
        check_plannable(bundle_version, self)
        if installation is not None:
            raise ValidationFailed(
                f"{installation.bundle.name} is already installed at "
                f"{installation.bundle_version.version}; plan an upgrade instead",
                code=ErrorCode.ALREADY_INSTALLED,
            )

    def create(self, request: PlanRequest) -> Plan:
        return plan_create(
            workspace=request.workspace,
            kind=self.value,
            actor=request.actor,
            bundle_version=version_visible(request.workspace, request.bundle, request.version),
            agents=request.agents,
            fork_choices=request.fork_choices,
            leave_out=request.leave_out,
            following=request.following,
        )

    def apply(self, *, plan_id: int) -> str:
        return plan_apply(plan_id=plan_id)

    def words(self, plan: Plan) -> str:
        return f"the install of {plan.bundle_version}" if plan.bundle_version_id else ""
