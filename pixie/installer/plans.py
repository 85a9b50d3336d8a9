"""Plans: computed against the workspace as it is, approved whole, applied by a task."""

from __future__ import annotations

import reversion
from django.db import transaction
from django.utils import timezone

from agents.models import Agent
from catalog.models import BundleVersion, Generation, Installation, Plan, Status
from catalog.selectors import versions_visible_to_workspace, visible_to_workspace
from pixie.core.audit.records import audited
from pixie.core.errors import ErrorCode, StateError, ValidationFailed
from pixie.core.models import Membership, Workspace
from pixie.core.people.permissions import require_owner
from pixie.installer.plan_core import FORK_CHOICES, SlugsUnread, compute_plan
from pixie.installer.tasks import apply_plan

from .plan_inputs import (
    RESLUG_CANDIDATES,
    fingerprint,
    read_more_candidates,
    read_plan_inputs,
    relevant_reads,
)
from .plan_kinds import Effect, plan_kind
from .plan_notices import notify_plan_waiting
from .policy import plan_expire_if_due, policy_checks, refuse_if_blocked


def generation_of(installation: Installation, number) -> Generation:
    """The installation's generation ``number``, or a refusal naming those it has."""
    found = installation.generations.select_related("bundle_version__bundle").filter(number=number)
    generation = found.first() if isinstance(number, int) and 0 < number < 2**31 else None
    if generation is None:
        numbers = list(installation.generations.values_list("number", flat=True))
        have = (
            f"it has generations {numbers[0]} to {numbers[-1]}"
            if len(numbers) > 1
            else f"it has generation {numbers[0]}"
            if numbers
            else "it has none recorded"
        )
        raise ValidationFailed(
            f"{installation.bundle.name} in {installation.workspace.name} has no generation "
            f"{number}: {have}",
            code=ErrorCode.NO_GENERATION,
        )
    return generation


def version_visible(workspace, bundle: str, version: str | None) -> BundleVersion:
    """The published (or yanked) ``version`` of ``bundle`` the workspace may see, or a
    refusal naming what is missing (a yanked one is refused, with why, by its kind)."""
    bundle_version = (
        versions_visible_to_workspace(workspace)
        .select_related("bundle")
        .filter(bundle__slug=bundle, version=version)
        .exclude(status=Status.DRAFT)
        .first()
    )
    if bundle_version is None:
        raise ValidationFailed(f"No published version {version} of {bundle}")
    return bundle_version


def installed(workspace, bundle_slug: str, *, doing: str = "roll back") -> Installation:
    """The workspace's installation of the bundle, or a refusal saying it is not installed
    and so there is nothing to ``doing`` (roll back, uninstall, repoint)."""
    installation = (
        Installation.objects.select_related("bundle", "workspace", "bundle_version__bundle")
        .filter(workspace=workspace, bundle__slug=bundle_slug)
        .first()
    )
    if installation is None:
        raise ValidationFailed(
            f"{bundle_slug} is not installed in {workspace.name}: there is nothing to {doing}",
            code=ErrorCode.NOT_INSTALLED,
        )
    return installation


def plan_rollback(*, workspace, bundle: str, generation, actor, **kwargs) -> Plan:
    """A plan that returns the workspace's installation of ``bundle`` (a slug) to what
    generation ``generation`` left: its version's skills (text and files), egress rules
    and credential requirements. Computed and applied like an upgrade to that version, so
    local edits since are forks with the usual choices, skills it removes leave their
    agents, and pins stay (a repoint is offered after)."""
    found = generation_of(installed(workspace, bundle), generation)
    # A skill edited (or merged) since waits for the owner's choice, restoring the
    # generation's text recommended: a rollback that kept it would not roll it back.
    kwargs.setdefault("recommend", "take")
    return plan_create(
        workspace=workspace,
        kind=Plan.Kind.ROLLBACK,
        actor=actor,
        bundle_version=found.bundle_version,
        generation=found.number,
        **kwargs,
    )


def _check_choices(fork_choices: dict, steps: list[dict]) -> None:
    forks = {s["slug"]: s for s in steps if s["type"] == "skill.fork"}
    problems = []
    for slug, choice in fork_choices.items():
        if choice not in FORK_CHOICES:
            problems.append(f"fork choice for @{slug} must be keep, take or merge; got {choice!r}")
        elif slug not in forks:
            problems.append(f"@{slug} is not a fork in this plan")
        elif choice not in forks[slug]["choices"]:
            conflicts = ", ".join(forks[slug].get("conflicts") or ["the body"])
            problems.append(
                f"merge is not offered for @{slug}: {conflicts} changed both in your copy "
                "and in the catalog"
            )
    if problems:
        raise ValidationFailed(problems, code=ErrorCode.BAD_FORK_CHOICE)


def plan_create(
    *,
    workspace,
    kind: str,
    actor,
    bundle_version: BundleVersion | None = None,
    agents: list | tuple = (),
    fork_choices: dict[str, str] | None = None,
    generation: int | None = None,
    leave_out: list | tuple = (),
    following: list | tuple = (),
    recommend: str = "",
    prepared_because: str = "",
) -> Plan:
    """Compute a plan; nothing in the workspace changes until it is approved and applied.
    A rollback names the generation it returns to (plan_rollback finds its version).
    ``leave_out``: agents (or ids) an upgrade does not add its new skills to.
    ``following``: among an install's ``agents``, those whose new skills follow the latest
    revision instead of being pinned to the new ones.
    ``recommend``: "take" or "merge" (where offered, else take): a fork no choice names
    waits for the owner's choice, with that one recommended, instead of being kept.
    ``prepared_because``: Pixie prepares it itself (actor None, e.g. after a yank), and
    says why; a person asking is an owner, checked as always."""
    if not (actor is None and prepared_because):
        require_owner(user=actor, workspace=workspace)
    the_kind = plan_kind(kind)
    if not the_kind.planner:  # a repoint has an engine of its own (repoint_create)
        raise ValidationFailed(f"{the_kind.a.capitalize()} is not planned from a bundle version")
    fork_choices = dict(fork_choices or {})
    bundle_version, installation = _as_stored(workspace, bundle_version)
    bundle = bundle_version.bundle if bundle_version else None
    the_kind.check(
        workspace=workspace,
        bundle_version=bundle_version,
        installation=installation,
        generation=generation,
    )
    agent_ids = [agent.pk if isinstance(agent, Agent) else agent for agent in agents]
    left_out = _left_out(workspace, leave_out)
    follow = sorted({agent.pk if isinstance(agent, Agent) else agent for agent in following})
    if set(follow) - set(agent_ids):
        raise ValidationFailed(
            "An agent that follows the latest must be one of the agents the skills go to",
            code=ErrorCode.BAD_AGENT,
        )
    inputs, reads = read_plan_inputs(
        workspace=workspace,
        kind=the_kind.planner,
        bundle_version=bundle_version,
        installation=installation,
        agent_ids=agent_ids,
        fork_choices=fork_choices,
        leave_out=left_out,
        following=follow,
        recommend=recommend,
    )
    if len(inputs.agents) != len(set(agent_ids)):
        raise ValidationFailed(
            f"Every agent must belong to {workspace.name}", code=ErrorCode.BAD_AGENT
        )
    draft, inputs, reads = _computed(workspace, inputs, reads)
    _check_choices(fork_choices, draft.steps)
    reads = relevant_reads(reads, draft.steps, inputs)
    comment = f"Planned {kind} of {the_kind.subject(bundle_version, generation)}"
    if prepared_because:
        comment = f"{comment}: {prepared_because}"
    with audited(actor=actor, comment=comment):
        Plan.objects.filter(
            workspace=workspace, bundle_version__bundle=bundle, status=Plan.State.PROPOSED
        ).update(status=Plan.State.SUPERSEDED, finished_at=timezone.now())
        plan = Plan.objects.create(
            workspace=workspace,
            kind=kind,
            bundle_version=bundle_version if the_kind.effect != Effect.REMOVES else None,
            installation=installation,
            summary=draft.summary,
            expands_reach=draft.expands_reach,
            steps=draft.steps,
            options={
                "agents": agent_ids,
                "fork_choices": fork_choices,
                **({"leave_out": left_out} if left_out else {}),
                **({"following": follow} if follow else {}),
                **({"recommend": recommend} if recommend else {}),
                **({"generation": generation} if the_kind.names_generation else {}),
            },
            reads=reads,
            fingerprint=fingerprint(reads),
            created_by=actor,
            prepared_because=prepared_because[:400],
            second_owner_asked=_second_owner_level(workspace),
        )
        if not prepared_because:  # Pixie's own plan is told with its reason (after_yank)
            notify_plan_waiting(plan, asker=actor)
    return plan


def _as_stored(workspace, bundle_version):
    """The version as stored (its status decides, not a caller's copy), with whether the
    workspace sees it; and the workspace's installation of its bundle, if any."""
    if bundle_version is None:
        return None, None
    bundle_version = (
        BundleVersion.objects.select_related("bundle")
        .annotate(visible_to_workspace=visible_to_workspace(workspace))
        .get(pk=bundle_version.pk)
    )
    installation = (
        Installation.objects.select_related("bundle", "bundle_version")
        .filter(workspace=workspace, bundle=bundle_version.bundle)
        .first()
    )
    return bundle_version, installation


def _left_out(workspace, leave_out) -> list[int]:
    """The ids of the agents left out, each one of the workspace's: an id posted from a
    page that is not is refused, not kept."""
    left_out = sorted({agent.pk if isinstance(agent, Agent) else agent for agent in leave_out})
    if left_out and Agent.objects.filter(workspace=workspace, pk__in=left_out).count() != len(
        left_out
    ):
        raise ValidationFailed(
            f"Every agent must belong to {workspace.name}", code=ErrorCode.BAD_AGENT
        )
    return left_out


def _computed(workspace, inputs, reads):
    """The plan's draft, reading more re-slug candidates where a long run of them is taken
    (four times as many each time, one query)."""
    depth: dict[str, int] = {}
    while True:
        try:
            return compute_plan(inputs), inputs, reads
        except SlugsUnread as unread:
            depth[unread.name] = depth.get(unread.name, RESLUG_CANDIDATES) * 4
            inputs, reads = read_more_candidates(
                workspace, inputs, reads, unread.name, depth[unread.name]
            )


def _second_owner_level(workspace) -> str:
    """The second-owner rule's level as it stands, read from the row (not a copy)."""
    return Workspace.objects.values_list("policy_second_owner", flat=True).get(pk=workspace.pk)


def plan_for_installation(*, installation: Installation, kind: str, actor, **kwargs) -> Plan:
    """Upgrade or uninstall plans start from the installation."""
    bundle_version = kwargs.pop("bundle_version", None) or installation.bundle_version
    return plan_create(
        workspace=installation.workspace,
        kind=kind,
        actor=actor,
        bundle_version=bundle_version,
        **kwargs,
    )


def plan_approve(*, plan: Plan, actor) -> Plan:
    """Approve the whole plan; the apply task is queued once the approval commits.
    The workspace's approval policy is checked first (pixie.installer.policy): a required
    rule not satisfied refuses and changes nothing, except that a plan past a required
    expiry becomes stale; the rules as evaluated are kept with the approval."""

    require_owner(user=actor, workspace=plan.workspace)
    why_stale = plan_expire_if_due(plan=plan, actor=actor)  # committed, then refused
    if why_stale:
        raise StateError(
            f"Plan #{plan.pk} cannot be approved: {why_stale}, so it is stale now. "
            "Create a new plan if it is still wanted.",
            code=ErrorCode.POLICY_EXPIRY,
        )
    with audited(actor=actor, comment=f"Approved plan #{plan.pk}", plan=plan):
        # The policy as it stands now, held until the approval commits: the workspace's
        # row, which a change of the policy locks (policy_update), so a change committed
        # meanwhile counts; locked before the plan, in the order an apply locks them.
        Workspace.objects.select_for_update(no_key=True).values_list("pk").get(pk=plan.workspace_id)
        # The plan's row, and the policy read after the lock.
        locked = (
            Plan.objects.select_for_update(of=("self",))
            .select_related("workspace", "created_by", "taken_over_by")
            .get(pk=plan.pk)
        )
        checks = []
        if locked.status == Plan.State.PROPOSED:
            _refuse_if_undecided(locked)
            checks = policy_checks(locked, approver=actor, role=Membership.Role.OWNER)
            refuse_if_blocked(locked, checks)
        moved = Plan.objects.filter(pk=plan.pk, status=Plan.State.PROPOSED).update(
            status=Plan.State.APPROVED,
            decided_by=actor,
            decided_at=timezone.now(),
            policy=[check.as_dict() for check in checks],
        )
        if moved != 1:
            current = Plan.objects.get(pk=plan.pk)
            raise StateError(
                f"Plan #{plan.pk} is already {current.get_status_display().lower()}; "
                "it can be approved only once, while proposed.",
                code=f"already_{current.status}",
            )
        plan.refresh_from_db()
        reversion.add_to_revision(plan)
        transaction.on_commit(lambda: apply_plan.delay(plan.pk))
    return plan


def undecided_forks(plan: Plan) -> list[dict]:
    """The plan's forks that wait for the owner's choice (none in a plan made before the
    choice could wait)."""
    return [s for s in plan.steps if s["type"] == "skill.fork" and not s.get("decided", True)]


def _refuse_if_undecided(plan: Plan) -> None:
    waiting = undecided_forks(plan)
    if waiting:
        named = ", ".join(f"@{s['slug']} (recommended: {s['recommended']})" for s in waiting)
        raise ValidationFailed(
            f"Plan #{plan.pk} waits for your choice for {named}: keep your text, take the "
            "new one, or merge where offered. Choose, and the plan is computed again for "
            "you to read before approving.",
            code=ErrorCode.FORK_UNDECIDED,
        )


def plan_reject(*, plan: Plan, actor, reason: str) -> Plan:
    require_owner(user=actor, workspace=plan.workspace)
    reason = (reason or "").strip()
    if not reason:
        raise ValidationFailed("Say why the plan is rejected")
    with audited(actor=actor, comment=f"Rejected plan #{plan.pk}: {reason}", plan=plan):
        moved = Plan.objects.filter(pk=plan.pk, status=Plan.State.PROPOSED).update(
            status=Plan.State.REJECTED,
            decided_by=actor,
            decided_at=timezone.now(),
            finished_at=timezone.now(),
            reject_reason=reason[:400],
        )
        if moved != 1:
            current = Plan.objects.get(pk=plan.pk)
            raise StateError(
                f"Plan #{plan.pk} is {current.get_status_display().lower()}; only a proposed "
                "plan can be rejected.",
                code=f"already_{current.status}",
            )
        plan.refresh_from_db()
        reversion.add_to_revision(plan)
    return plan
