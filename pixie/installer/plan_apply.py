"""Applying an approved plan: one transaction under the workspace's lock, or nothing."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

import reversion
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from agents.models import Agent, AgentSkill
from agents.services import Attachment, agent_skills_attach_bulk, agent_skills_detach_everywhere
from catalog.models import (
    Generation,
    Installation,
    Plan,
    SkillRevision,
    SkillVersion,
    WorkspaceSkill,
)
from catalog.services.installed_skills import (
    REVISION_TAKES,
    NewSkill,
    SkillChange,
    installed_skills_archive,
    installed_skills_create,
    installed_skills_readopt,
    installed_skills_revise,
)
from catalog.services.signing import ContentNotAsSigned, Verified, bundle_version_verify
from egress.models import CredentialRequirement, EgressRule
from egress.services import (
    CredentialWanted,
    HostWanted,
    credential_requirements_apply,
    egress_rules_apply,
)
from pixie.core.audit.records import add_all_to_revision, audited
from pixie.core.errors import PixieError
from pixie.core.faults import InjectedFault, checkpoint
from pixie.core.models import Workspace

from .plan_core import cascade
from .plan_inputs import fingerprint, staleness_reads
from .plan_kinds import Effect, kind_of
from .plan_notices import notify_plan_ended
from .plan_state import APPLICABLE, TRANSIENT_ERRORS, plan_mark_failed
from .steps import Step

logger = logging.getLogger(__name__)


def failure_words(plan_id: int, exc: Exception) -> str:
    """What an owner reads when an apply fails: never the raw exception (that is logged)."""
    if isinstance(exc, ContentNotAsSigned | InjectedFault):
        why = str(exc)
    elif isinstance(exc, PixieError):  # a lower app's refusal, as a skill already attached
        why = exc.message
    elif isinstance(exc, IntegrityError):
        why = "something it would add is already in the workspace"
    else:
        why = "an unexpected error stopped it (the details are in the server log)"
    return f"Plan #{plan_id} could not be applied: {why}. Nothing was changed; create a new plan."


def plan_apply(*, plan_id: int) -> str:
    """Apply the install, upgrade or uninstall plan if it is approved; return its status.
    Running it twice changes nothing. (plan_run picks the apply for a plan's kind.)"""
    Plan.objects.filter(pk=plan_id, status=Plan.State.APPROVED).update(status=Plan.State.APPLYING)
    try:
        with transaction.atomic():
            # Only what finding the lock needs: the plan's steps are read once, locked.
            workspace_id, status = Plan.objects.values_list("workspace_id", "status").get(
                pk=plan_id
            )
            if status not in APPLICABLE:
                return status
            # The workspace row is the lock that serialises every writer of it.
            Workspace.objects.select_for_update().get(pk=workspace_id)
            # With what the apply reads of it (approver, version and what checks its
            # signature, installation): one query.
            plan = (
                Plan.objects.select_for_update(of=("self",))
                .select_related(
                    "workspace",
                    "decided_by",
                    "bundle_version__bundle__publisher",
                    "bundle_version__signing_key",
                    "installation",
                )
                .get(pk=plan_id)
            )
            if plan.status not in APPLICABLE:
                return plan.status
            why_stale = staleness(plan)
            if why_stale:
                _finish(plan, Plan.State.STALE, why_stale)
                notify_plan_ended([plan])
                return Plan.State.STALE
            if kind_of(plan).signed:
                # What is applied must be what the publisher signed, read inside this
                # transaction: a row changed behind Pixie's back stops the apply here.
                verified = bundle_version_verify(bundle_version=plan.bundle_version, fresh=True)
                _check_signed(plan, verified)
            with audited(actor=plan.decided_by, comment=f"Applied plan #{plan.pk}", plan=plan):
                _apply_steps(plan)
                checkpoint("plan.apply.finish")
                _finish(plan, Plan.State.APPLIED, "")
        return Plan.State.APPLIED
    except TRANSIENT_ERRORS:
        raise
    except Exception as exc:
        logger.exception("Plan #%s failed to apply", plan_id)
        plan_mark_failed(plan_id=plan_id, error=failure_words(plan_id, exc))
        return Plan.State.FAILED


def _check_signed(plan: Plan, verified: Verified) -> None:
    """The plan's steps bring only what the verified version holds: its skill versions with
    their bodies (a merge's body is the plan's own), its hosts and its credential names."""
    signer = verified.bundle_version.bundle.publisher.name
    bodies = verified.bodies
    # Where each catalog skill lands here: a body's mentions follow a skill that lands
    # under another slug (a re-slug, or a local rename), as the plan computed them.
    landing = {s["catalog_slug"]: s["slug"] for s in plan.steps if "catalog_slug" in s}
    for step in (s for s in plan.steps if "skill_version_id" in s):
        slug = step.get("catalog_slug") or step.get("slug", "")
        if step["skill_version_id"] not in bodies:
            raise ContentNotAsSigned(f"@{slug} is not among the skills {signer} signed")
        brings_catalog_body = step["type"] == "skill.create" or (
            step["type"] in ("skill.update", "skill.fork") and step.get("choice", "take") == "take"
        )
        signed = cascade(bodies.get(step["skill_version_id"], ""), landing)
        if brings_catalog_body and step.get("body") != signed:
            raise ContentNotAsSigned(
                f"the content of @{slug} does not match what {signer} signed (SKILL.md)"
            )
    for step in _of(plan, "egress.add"):
        if (step["host"], step["port"]) not in verified.hosts:
            raise ContentNotAsSigned(
                f"the host {step['host']}:{step['port']} is not among the hosts {signer} signed"
            )
    for step in _of(plan, "credential.require"):
        if step["name"] not in verified.credentials:
            raise ContentNotAsSigned(
                f"the credential {step['name']} is not among the credentials {signer} signed"
            )


def _finish(plan: Plan, status: str, error: str) -> None:
    finished_at = timezone.now()
    made = {}
    if kind_of(plan).effect == Effect.CREATES and status == Plan.State.APPLIED:
        # The installation the install made (_next_generation): one UPDATE of the plan.
        made["installation"] = plan.installation_id
    Plan.objects.filter(pk=plan.pk).update(
        status=status, error=error, finished_at=finished_at, **made
    )
    # The plan's row is locked since it was read (plan_apply): it now holds what it held
    # then with these three fields, so it is not read again for its history.
    plan.status, plan.error, plan.finished_at = status, error, finished_at
    if reversion.is_active():
        reversion.add_to_revision(plan)


def staleness(plan: Plan) -> str:
    """Why the plan no longer matches the workspace, or '' if it still does."""
    bundle_id = _bundle_id(plan)
    installation = (
        None
        if bundle_id is None
        else _bundle_installation(workspace_id=plan.workspace_id, bundle_id=bundle_id)
    )
    creates = kind_of(plan).effect == Effect.CREATES
    if creates and installation is not None:
        return f"Plan #{plan.pk} is stale: the bundle was installed after it was computed."
    if not creates and (installation is None or installation.pk != plan.installation_id):
        return f"Plan #{plan.pk} is stale: the installation changed after it was computed."
    # Only what the fingerprint covers (the slugs the plan depends on, not the whole
    # namespace; no contents, files or findings), as the plan read it.
    reads = staleness_reads(
        workspace=plan.workspace,
        kind=kind_of(plan).planner,
        bundle_version=plan.bundle_version_id,
        installation=installation,
        agent_ids=plan.options.get("agents", []),
        steps=plan.steps,
    )
    if fingerprint(reads) == plan.fingerprint:
        return ""
    before = plan.reads
    for slug, value in reads["skills"].items():
        if before.get("skills", {}).get(slug) != value:
            return (
                f"Plan #{plan.pk} is stale: skill @{slug} changed after it was computed. "
                "Create a new plan."
            )
    for part, label in [
        ("installation", "the installed version"),
        ("installed", "the bundle's skills"),
        ("egress", "the egress rules"),
        ("credentials", "the credentials"),
        ("agents", "the agents' skills"),
    ]:
        if before.get(part) != reads.get(part):
            return (
                f"Plan #{plan.pk} is stale: {label} changed after it was computed. "
                "Create a new plan."
            )
    return f"Plan #{plan.pk} is stale: the workspace changed after it was computed."


def _bundle_installation(*, workspace_id: int, bundle_id: int) -> Installation | None:
    """The workspace's installation of a bundle, if any."""
    return (
        Installation.objects.filter(workspace_id=workspace_id, bundle_id=bundle_id)
        .order_by("pk")
        .first()
    )


def _bundle_id(plan: Plan) -> int | None:
    if plan.bundle_version_id:
        return plan.bundle_version.bundle_id
    return plan.installation.bundle_id if plan.installation_id else None


def _of(plan: Plan, *types: str) -> list[Step]:
    return [step for step in plan.steps if step["type"] in types]


@dataclass
class _Applying:
    """One apply's state: what it writes, phase by phase, and what history then records."""

    plan: Plan
    installation: Installation
    versions: dict[int, SkillVersion]
    now: datetime = field(default_factory=timezone.now)
    touched: set[int] = field(default_factory=set)  # skills written
    created: dict[int, WorkspaceSkill] = field(default_factory=dict)  # as written, by pk
    revisions: list[SkillRevision] = field(default_factory=list)
    rules: list[EgressRule] = field(default_factory=list)
    requirements: list[CredentialRequirement] = field(default_factory=list)
    attachments: list[AgentSkill] = field(default_factory=list)
    generation: Generation | None = None

    @property
    def comment(self) -> str:
        return f"Plan #{self.plan.pk}"


def _apply_steps(plan: Plan) -> None:
    """The apply's phases in order, each after its fault checkpoint, then its history."""
    checkpoint("plan.apply.installation")
    applying = _Applying(
        plan=plan,
        installation=_installation(plan),
        # What a revision takes from its catalog version (its body is the plan's own):
        # not the version's body and SKILL.md, a skill's largest columns, twice over.
        versions=SkillVersion.objects.only(*REVISION_TAKES).in_bulk(
            [s["skill_version_id"] for s in plan.steps if "skill_version_id" in s]
        ),
    )
    for failpoint, phase in PHASES:
        checkpoint(failpoint)
        phase(applying)
    if kind_of(plan).effect == Effect.REMOVES:
        Installation.objects.filter(pk=applying.installation.pk).delete()
    else:
        applying.generation = _next_generation(applying)
    _record(applying)


def _next_generation(applying: _Applying) -> Generation:
    """The installation's next generation: this plan, the version it leaves installed."""
    plan, installation = applying.plan, applying.installation
    last = 0  # an install made the installation: it has no generation yet
    if plan.installation_id is None:  # an install: the plan names what it made (_finish)
        plan.installation = installation
    else:
        last = installation.generations.aggregate(last=Max("number"))["last"] or 0
    return Generation.objects.create(
        installation=installation,
        number=last + 1,
        plan=plan,
        bundle_version=plan.bundle_version,
        summary=plan.summary,
        applied_at=applying.now,
    )


def _create_skills(applying: _Applying) -> None:
    plan = applying.plan
    new_skills, revisions = installed_skills_create(
        workspace=plan.workspace,
        installation=applying.installation,
        skills=[
            NewSkill(
                slug=s["slug"], version=applying.versions[s["skill_version_id"]], body=s["body"]
            )
            for s in _of(plan, "skill.create")
        ],
        author=plan.decided_by,
        comment=applying.comment,
    )
    applying.touched |= {skill.pk for skill in new_skills}
    applying.created.update((skill.pk, skill) for skill in new_skills)
    applying.revisions += revisions


def _update_skills(applying: _Applying) -> None:
    plan = applying.plan
    kept = _of(plan, "skill.update", "skill.fork", "skill.unchanged")
    if kind_of(plan).effect == Effect.CREATES and kept:
        # An earlier install's archived skills come back instead of being duplicated.
        installed_skills_readopt(
            skill_ids=[s["skill_id"] for s in kept], installation=applying.installation
        )
        applying.touched |= {s["skill_id"] for s in kept}
    changes = [
        SkillChange(
            skill_id=s["skill_id"],
            version=applying.versions[s["skill_version_id"]],
            body=s["body"],
            origin="merge" if s.get("choice") == "merge" else "catalog",
            merged=s.get("merged"),
            merged_body=s.get("merged_body"),
        )
        for s in _of(plan, "skill.update", "skill.fork")
        if s.get("choice", "take") != "keep"
    ]
    if not changes:
        return
    updated = installed_skills_revise(
        changes=changes, author=plan.decided_by, comment=applying.comment
    )
    applying.touched |= {r.skill_id for r in updated}
    applying.revisions += updated


def _remove_skills(applying: _Applying) -> None:
    removed = [s["skill_id"] for s in _of(applying.plan, "skill.remove")]
    if removed:
        agent_skills_detach_everywhere(skill_ids=removed)
        installed_skills_archive(skill_ids=removed, now=applying.now)
        applying.touched |= set(removed)


def _apply_egress(applying: _Applying) -> None:
    plan = applying.plan
    applying.rules = egress_rules_apply(
        workspace=plan.workspace,
        plan=plan,
        approver=plan.decided_by,
        now=applying.now,
        add=[
            HostWanted(s["host"], s["port"], s["purpose"], s["credential_name"])
            for s in _of(plan, "egress.add")
        ],
        remove=[(s["host"], s["port"]) for s in _of(plan, "egress.remove")],
    )


def _apply_credentials(applying: _Applying) -> None:
    plan = applying.plan
    applying.requirements = credential_requirements_apply(
        workspace=plan.workspace,
        add=[
            CredentialWanted(s["name"], s["host"], s["purpose"])
            for s in _of(plan, "credential.require")
            if s["new"]
        ],
        remove=[s["name"] for s in _of(plan, "credential.remove")],
    )


def _attach_agents(applying: _Applying) -> None:
    plan = applying.plan
    # An install's chosen agents, and the agents an upgrade's new skills are added to.
    applying.attachments = agent_skills_attach_bulk(
        workspace=plan.workspace,
        attachments=[
            Attachment(s["agent_id"], tuple(s["skills"]), follows=bool(s.get("follows")))
            for s in _of(plan, "agent.attach") + _of(plan, "agent.gains")
        ],
    )


# The apply's phases, each behind the fault checkpoint the reliability tests fail it at.
PHASES = (
    ("plan.apply.skills.create", _create_skills),
    ("plan.apply.skills.update", _update_skills),
    ("plan.apply.skills.remove", _remove_skills),
    ("plan.apply.egress", _apply_egress),
    ("plan.apply.credentials", _apply_credentials),
    ("plan.apply.agents", _attach_agents),
)
APPLY_FAILPOINTS = (
    "plan.apply.installation",
    *(failpoint for failpoint, _ in PHASES),
    "plan.apply.finish",
)


def _record(applying: _Applying) -> None:
    """History names each row by its skill and agent: read those once, not once per row,
    and not the skills this apply created (it holds them as it wrote them)."""
    attachments = applying.attachments
    skills = WorkspaceSkill.objects.in_bulk(
        (applying.touched | {a.skill_id for a in attachments}) - applying.created.keys()
    )
    skills.update(applying.created)
    agents = Agent.objects.in_bulk({a.agent_id for a in attachments})
    for revision in applying.revisions:
        revision.skill = skills[revision.skill_id]
    for attachment in attachments:
        attachment.skill = skills[attachment.skill_id]
        attachment.agent = agents[attachment.agent_id]
    kept_installation = kind_of(applying.plan).effect != Effect.REMOVES
    add_all_to_revision(
        [
            *(skills[pk] for pk in applying.touched),
            *applying.revisions,
            *applying.rules,
            *applying.requirements,
            *attachments,
            *([applying.installation] if kept_installation else []),
            *([applying.generation] if applying.generation else []),
        ]
    )


def _installation(plan: Plan) -> Installation:
    effect = kind_of(plan).effect
    if effect == Effect.CREATES:
        return Installation.objects.create(
            workspace=plan.workspace,
            bundle=plan.bundle_version.bundle,
            bundle_version=plan.bundle_version,
            installed_by=plan.decided_by,
        )
    installation = plan.installation
    if effect == Effect.MOVES:
        installation.bundle_version = plan.bundle_version
        installation.installed_by = plan.decided_by
        installation.save(update_fields=["bundle_version", "installed_by"])
    return installation
