"""An install: a bundle version's skills, hosts and credentials into a workspace that
does not have the bundle, its skills added to the agents the owner chose (each pinned to
this version or following the latest)."""

from __future__ import annotations

from catalog.models import Plan
from pixie.core.errors import ErrorCode, ValidationFailed

from ..plan_kinds import Effect, check_plannable, register
from .bundle import BundleKind


@register
class Install(BundleKind):
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

    def words(self, plan: Plan) -> str:
        return f"the install of {plan.bundle_version}" if plan.bundle_version_id else ""
