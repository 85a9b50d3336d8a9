"""An upgrade: the workspace's installation of a bundle moves to another version; local
edits the catalog also changed are forks, with the owner's choice for each."""

from __future__ import annotations

from catalog.models import Plan
from pixie.core.errors import ErrorCode, ValidationFailed

from ..plan_kinds import Effect, check_plannable, register
from .bundle import BundleKind


@register
class Upgrade(BundleKind):
    value = Plan.Kind.UPGRADE
    a = "an upgrade"
    effect = Effect.MOVES
    planner = "upgrade"
    needs_version = True

    def check(self, *, workspace, bundle_version, installation, generation) -> None:
        check_plannable(bundle_version, self)
        if installation is None:
            raise ValidationFailed(
                f"The bundle is not installed in {workspace.name}; plan an install",
                code=ErrorCode.NOT_INSTALLED,
            )
        if installation.bundle_version_id == bundle_version.pk:
            raise ValidationFailed(
                f"{bundle_version} is already installed; choose another version",
                code=ErrorCode.SAME_VERSION,
            )

    def words(self, plan: Plan) -> str:
        return f"the upgrade to {plan.bundle_version}" if plan.bundle_version_id else ""
