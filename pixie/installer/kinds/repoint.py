"""A repoint: agents' pins move to the latest revisions of their skills, applied in
chunks (pixie.installer.repoint is its engine); the installation stays as it is."""

from __future__ import annotations

from catalog.models import Plan

from ..plan_kinds import Effect, PlanKind, PlanRequest, register
from ..plans import installed
from ..repoint import progress_of, repoint_apply, repoint_create


@register
class Repoint(PlanKind):
    value = Plan.Kind.REPOINT
    a = "a repoint"
    effect = Effect.NONE
    needs_bundle = False  # a bundle, when named, limits it to that installation's pins

    def create(self, request: PlanRequest) -> Plan:
        installation = None
        if request.bundle:
            installation = installed(request.workspace, request.bundle, doing="repoint")
        return repoint_create(
            workspace=request.workspace,
            actor=request.actor,
            agents=request.agents,
            installation=installation,
        )

    def apply(self, *, plan_id: int) -> str:
        return repoint_apply(plan_id=plan_id)

    def words(self, plan: Plan) -> str:
        return "the repoint of pinned agents"

    def target(self, plan: Plan) -> str:
        return "of pinned skills"

    def progress(self, plan: Plan) -> dict | None:
        return progress_of(plan)
