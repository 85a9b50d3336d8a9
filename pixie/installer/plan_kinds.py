"""The kinds of plan, one registry: what each kind needs asked, how it is checked, said
and shown, and which engine creates and applies it.

Each kind is one module of ``pixie/installer/kinds/`` that registers a ``PlanKind`` here;
``kinds/__init__.py`` names the modules, and the installer app imports it when Django
starts. This module sits below everything that reads a kind (the words of a notice, the
apply, the API, the pages), and imports none of them, so no import goes in a circle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from catalog.models import BundleVersion, Plan, Status
from pixie.core.errors import ErrorCode, ValidationFailed


class Effect(StrEnum):
    """What a kind does to the workspace's installation of its bundle."""

    CREATES = "creates"  # an install: the installation is new
    MOVES = "moves"  # an upgrade, a rollback: it moves to the plan's version
    REMOVES = "removes"  # an uninstall
    NONE = "none"  # a repoint: pins move, the installation stays


@dataclass(frozen=True)
class PlanRequest:
    """What an owner asks for, from the API or the admin's form, its shape checked
    already (each kind checks it against the workspace)."""

    workspace: object
    actor: object
    bundle: str | None = None  # a slug
    version: str | None = None
    generation: int | None = None
    agents: list = field(default_factory=list)
    leave_out: list = field(default_factory=list)
    following: list = field(default_factory=list)  # among ``agents``: follow the latest
    fork_choices: dict = field(default_factory=dict)


class PlanKind:
    """A kind of plan. A subclass sets ``value`` (a ``Plan.Kind``), ``a`` (its name with
    its article: "an upgrade"), ``effect`` and what it asks for, and writes ``create``,
    ``apply`` and ``words``; the rest has a default."""

    value: str
    a: str
    effect: Effect
    # What the bundle planner (plan_core) does for it: "install", "upgrade" or
    # "uninstall"; empty for a kind that does not bring a bundle version.
    planner: str = ""
    needs_bundle = True
    needs_version = False
    names_generation = False
    # Said when a version is given to a kind that does not take one.
    no_version = ""

    @property
    def noun(self) -> str:
        """Its name without its article: "upgrade", "rollback"."""
        return self.a.split(" ", 1)[1]

    @property
    def signed(self) -> bool:
        """It brings a bundle version's content: the apply checks its signature first."""
        return self.effect in (Effect.CREATES, Effect.MOVES)

    def request_problems(self, *, bundle, version, generation) -> dict[str, str]:
        """Fields the request lacks or should not have, each with why."""
        problems = {}
        if self.needs_bundle and not bundle:
            problems["bundle"] = f"Required for {self.a}."
        if self.needs_version and not version:
            problems["version"] = f"Required for {self.a}."
        if version and self.no_version:
            problems["version"] = self.no_version
        if self.names_generation and generation is None:
            problems["generation"] = f"Required for {self.a}."
        if not self.names_generation and generation is not None:
            named = " or ".join(kind.a for kind in KINDS.values() if kind.names_generation)
            problems["generation"] = f"Only {named} names one."
        return problems

    def check(self, *, workspace, bundle_version, installation, generation) -> None:
        """Refuse, naming why, what this kind cannot plan in the workspace as it is."""

    def create(self, request: PlanRequest) -> Plan:
        raise NotImplementedError

    def apply(self, *, plan_id: int) -> str:
        """Apply the approved plan; its status after."""
        raise NotImplementedError

    def words(self, plan: Plan) -> str:
        """The plan's subject in a few words ("the upgrade to Ledger 2.0.0"), or ''."""
        raise NotImplementedError

    def subject(self, bundle_version, generation) -> str:
        """What the history's comment names: "Planned upgrade of <subject>"."""
        return str(bundle_version)

    def target(self, plan: Plan) -> str:
        """What the review page's title names after the kind."""
        if plan.bundle_version_id:
            return str(plan.bundle_version)
        return (
            str(plan.installation.bundle_version) if plan.installation_id else "a removed install"
        )

    def generation(self, plan: Plan) -> int | None:
        """The generation it returns to, for a kind that names one."""
        return None

    def progress(self, plan: Plan) -> dict | None:
        """How far its apply has gone, for a kind applied in steps."""
        return None


def check_plannable(bundle_version: BundleVersion | None, kind: PlanKind) -> None:
    """A version a plan of ``kind`` may bring: one the workspace sees (the version is read
    with ``visible_to_workspace``), published, not yanked."""
    if bundle_version is None:
        raise ValidationFailed(f"{kind.a.capitalize()} plan needs a bundle version")
    if not bundle_version.visible_to_workspace:
        # The words of an unknown version: another workspace's bundle is not there.
        raise ValidationFailed(
            f"No published version {bundle_version.version} of {bundle_version.bundle.slug}",
            code=ErrorCode.NOT_VISIBLE,
        )
    if bundle_version.status == Status.YANKED:
        raise ValidationFailed(
            f"{bundle_version} was yanked ({bundle_version.yank_reason}); it cannot be planned",
            code=ErrorCode.YANKED,
        )
    if bundle_version.status != Status.PUBLISHED:
        raise ValidationFailed(f"{bundle_version} is not published", code=ErrorCode.NOT_PUBLISHED)


KINDS: dict[str, PlanKind] = {}


def register(kind: type[PlanKind]) -> type[PlanKind]:
    """Class decorator: the kind joins the registry (its value must be a Plan.Kind)."""
    if kind.value not in Plan.Kind.values:
        raise ValueError(f"{kind.value!r} is not a Plan.Kind: add it there first")
    KINDS[kind.value] = kind()
    return kind


def plan_kind(value: str) -> PlanKind:
    """The kind named ``value``, or a refusal listing the kinds there are."""
    try:
        return KINDS[value]
    except (KeyError, TypeError):
        raise ValidationFailed(
            f"kind must be one of {', '.join(v for v in Plan.Kind.values if v in KINDS)}; "
            f"got {value!r}",
            code=ErrorCode.INVALID,
        ) from None


def kind_of(plan: Plan) -> PlanKind:
    return KINDS[plan.kind]
