"""A rollback: the installation returns to what one of its generations left (that
version's skills, hosts and credentials), computed and applied like an upgrade to it."""

from __future__ import annotations

from catalog.models import Plan, Status
from pixie.core.errors import ErrorCode, ValidationFailed

from ..plan_kinds import Effect, PlanRequest, check_plannable, register
from ..plans import plan_rollback
from .bundle import BundleKind


@register
class Rollback(BundleKind):
    value = Plan.Kind.ROLLBACK
    a = "a rollback"
    effect = Effect.MOVES
    planner = "upgrade"
    names_generation = True
    no_version = "A rollback names a generation, not a version."

    def check(self, *, workspace, bundle_version, installation, generation) -> None:
        # What a rollback cannot do, named before anything else is checked.
        if installation is None:
            raise ValidationFailed(
                f"The bundle is not installed in {workspace.name}: there is nothing to roll back",
                code=ErrorCode.NOT_INSTALLED,
            )
        if generation is None:
            raise ValidationFailed(
                "A rollback names the generation to return to", code=ErrorCode.INVALID
            )
        if installation.bundle_version_id == bundle_version.pk:
            raise ValidationFailed(
                f"Generation {generation} left {bundle_version} installed, which is installed "
                "now: there is nothing to roll back (to undo a local edit, restore the skill's "
                "revision)",
                code=ErrorCode.SAME_VERSION,
            )
        if bundle_version.status == Status.YANKED:
            raise ValidationFailed(
                f"Generation {generation} left {bundle_version} installed, which was yanked "
                f"since ({bundle_version.yank_reason}): it can no longer be restored; roll back "
                "to another generation, or upgrade",
                code=ErrorCode.YANKED,
            )
        check_plannable(bundle_version, self)

    def create(self, request: PlanRequest) -> Plan:
        # The version is the generation's, found by plan_rollback.
        return plan_rollback(
            workspace=request.workspace,
            bundle=request.bundle,
            generation=request.generation,
            actor=request.actor,
            agents=request.agents,
            fork_choices=request.fork_choices,
            leave_out=request.leave_out,
        )

    def words(self, plan: Plan) -> str:
        return f"the rollback to {plan.bundle_version}" if plan.bundle_version_id else ""

    def target(self, plan: Plan) -> str:
        return self.subject(plan.bundle_version, plan.options["generation"])

    def subject(self, bundle_version, generation) -> str:
        return f"{bundle_version.bundle.name} to generation {generation} ({bundle_version.version})"

    def generation(self, plan: Plan) -> int | None:
        return plan.options.get("generation")
