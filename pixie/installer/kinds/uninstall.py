"""An uninstall: the bundle's skills leave the workspace and its agents (a local edit is
kept as the workspace's own), with its hosts and credential requirements."""

from __future__ import annotations

from catalog.models import BundleVersion, Plan
from pixie.core.errors import ErrorCode, ValidationFailed

from ..plan_kinds import Effect, PlanRequest, register
from ..plans import installed
from .bundle import BundleKind


@register
class Uninstall(BundleKind):
    value = Plan.Kind.UNINSTALL
    a = "an uninstall"
    effect = Effect.REMOVES
    planner = "uninstall"

    def version(self, request: PlanRequest) -> BundleVersion:
        """The version installed, whatever version the request names."""
        return installed(request.workspace, request.bundle, doing="uninstall").bundle_version

    def check(self, *, workspace, bundle_version, installation, generation) -> None:
        if installation is None:
            raise ValidationFailed(
                f"The bundle is not installed in {workspace.name}; plan an install",
                code=ErrorCode.NOT_INSTALLED,
            )

    def words(self, plan: Plan) -> str:
        return f"the uninstall of {plan.installation.bundle.name}" if plan.installation_id else ""
