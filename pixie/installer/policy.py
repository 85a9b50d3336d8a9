"""The approval policy: rules a workspace's owners set, each off, advisory or required.

- ``second_owner``: a plan that expands reach (a new host or credential) is approved by an
  owner other than its asker (the owner who took it over, when its asker left). A plan
  Pixie prepared itself has no asker: any owner satisfies it.
- ``expiry``: a plan waits at most N days for approval; past that, under *required*, it
  is stale (``plans_expire``, run by beat, and ``plan_approve`` when it finds one).
- ``findings``: a plan bringing findings of the chosen severity or worse.

*Advisory* shows a rule on the plan and never blocks; *required* blocks approval until
it is satisfied. ``policy_checks`` evaluates them for a would-be approver; the approval
stores what it evaluated in ``Plan.policy`` (docs/APPROVAL_POLICY.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import TypedDict

import reversion
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from catalog.findings import SEVERITIES
from catalog.models import Plan
from pixie.core.audit.records import audited
from pixie.core.errors import ErrorCode, PermissionRefused, ValidationFailed
from pixie.core.models import Membership, Notification, PolicyLevel, Workspace
from pixie.core.notifications.service import Notice, notify
from pixie.core.people.permissions import require_owner

from .plan_notices import notify_plan_ended

SECOND_OWNER, EXPIRY, FINDINGS = "second_owner", "expiry", "findings"
LABELS = {
    SECOND_OWNER: "A plan that expands reach needs a second owner",
    EXPIRY: "Plans expire",
    FINDINGS: "Findings block approval",
}
SEVERITY_WORDS = {"warning": "a warning or worse", "refuse": "refused at publish"}
DAYS_RANGE = (1, 365)
# Plans one run of the beat task marks stale at most; the next run takes the rest.
EXPIRE_BATCH = 500


class PolicyRule(TypedDict):
    """One rule as evaluated for an approver (and stored with the plan at approval)."""

    id: str  # second_owner, expiry, findings
    label: str
    level: str  # off, advisory, required
    applies: bool  # the rule is on and concerns this plan
    satisfied: bool  # true when it does not apply
    by: str | None  # the username that satisfied it
    sentence: str


@dataclass(frozen=True)
class RuleCheck:
    id: str
    level: str
    applies: bool
    satisfied: bool
    by: str | None
    sentence: str

    @property
    def label(self) -> str:
        return LABELS[self.id]

    @property
    def blocks(self) -> bool:
        return self.level == PolicyLevel.REQUIRED and self.applies and not self.satisfied

    def as_dict(self) -> PolicyRule:
        return {"label": self.label, **asdict(self)}  # type: ignore[typeddict-item]


def _name(user) -> str:
    return user.username if user is not None else "Pixie"


def asker_of(plan: Plan):
    """Who asked for the plan: the owner who took it over, else its creator (None when
    Pixie prepared it)."""
    return plan.taken_over_by if plan.taken_over_by_id else plan.created_by


STRICTNESS = [PolicyLevel.OFF, PolicyLevel.ADVISORY, PolicyLevel.REQUIRED]


def second_owner_level(plan: Plan, workspace: Workspace) -> str:
    """The stricter of the rule's level when the plan was asked and its level now: turning
    the rule off never frees a waiting plan, turning it on still binds it."""
    now = workspace.policy_second_owner
    asked = plan.second_owner_asked or now
    return max(asked, now, key=STRICTNESS.index)


def _owner_since(plan: Plan, approver):
    return (
        Membership.objects.filter(workspace_id=plan.workspace_id, user_id=approver.pk)
        .values_list("owner_since", flat=True)
        .first()
    )


def _second_owner(plan: Plan, workspace: Workspace, approver, role) -> RuleCheck:
    level = second_owner_level(plan, workspace)
    if level == PolicyLevel.OFF or not plan.expands_reach:
        why = "off in this workspace" if level == PolicyLevel.OFF else "the plan adds no reach"
        return RuleCheck(SECOND_OWNER, level, False, True, None, f"Does not apply: {why}.")
    asker_id = plan.taken_over_by_id or plan.created_by_id
    is_owner = role == Membership.Role.OWNER
    if is_owner and (asker_id is None or asker_id != approver.pk):
        since = _owner_since(plan, approver)
        if since is not None and since > plan.created_at:
            needs = "must" if level == PolicyLevel.REQUIRED else "should"
            return RuleCheck(
                SECOND_OWNER, level, True, False, None,
                f"{approver.username} became an owner after this plan was asked, so cannot "
                f"be its second owner: an owner who was one when it was asked {needs} approve "
                "it, or ask for the plan again.",
            )  # fmt: skip
        why = (
            "Pixie prepared this plan, so any owner may approve it"
            if asker_id is None
            else f"{approver.username} is an owner other than its asker, {_name(asker_of(plan))}"
        )
        return RuleCheck(SECOND_OWNER, level, True, True, approver.username, f"Satisfied: {why}.")
    needs = "must" if level == PolicyLevel.REQUIRED else "should"
    # In words that read the same to anyone: the sentence is kept with the plan.
    if asker_id is None:
        asked, other = "Pixie prepared it", "an owner"
    else:
        name = _name(asker_of(plan))
        asked, other = f"{name} asked for it", f"an owner other than {name}"
    return RuleCheck(
        SECOND_OWNER, level, True, False, None,
        f"This plan expands reach and {asked}: {other} {needs} approve it. "
        + _who_can(plan, asker_id, workspace),
    )  # fmt: skip


def _who_can(plan: Plan, asker_id, workspace: Workspace) -> str:
    """Who can be the plan's second owner, or, where nobody can, how to unblock it (one
    query: the owners who were owners when it was asked)."""
    eligible = sorted(
        Membership.objects.filter(
            workspace_id=plan.workspace_id,
            role=Membership.Role.OWNER,
            owner_since__lte=plan.created_at,
        )
        .exclude(user_id=asker_id)
        .values_list("user__username", flat=True)
    )
    if eligible:
        return f"Who can: {', '.join(eligible)}."
    return (
        f"Nobody can now: {workspace.name} has no other owner who was one when it was asked. "
        "Add an owner on People, then ask for the plan again (an owner added after a plan "
        "was asked cannot be its second owner)."
    )


def policy_warnings(workspace: Workspace) -> list[str]:
    """What the policy as it stands means for this workspace that its owners should know:
    a second owner required where there is one owner (one query)."""
    if workspace.policy_second_owner != PolicyLevel.REQUIRED:
        return []
    owners = Membership.objects.filter(workspace=workspace, role=Membership.Role.OWNER).count()
    if owners > 1:
        return []
    return [
        f"{workspace.name} has one owner: no plan that adds a host or a credential can be "
        "approved until a second owner joins. Add one on People, or make the rule advisory."
    ]


def _expiry(plan: Plan, workspace: Workspace, now) -> RuleCheck:
    level, days = workspace.policy_expiry, workspace.policy_expiry_days
    if level == PolicyLevel.OFF:
        return RuleCheck(EXPIRY, level, False, True, None, "Does not apply: off in this workspace.")
    ends = plan.created_at + timedelta(days=days)
    if plan.status != Plan.State.PROPOSED or now <= ends:
        return RuleCheck(
            EXPIRY, level, False, True, None,
            f"Within the {days} days a plan may wait (until {ends:%Y-%m-%d %H:%M}).",
        )  # fmt: skip
    then = "it is stale" if level == PolicyLevel.REQUIRED else "plan again if in doubt"
    return RuleCheck(EXPIRY, level, True, False, None, f"{_cap(expiry_reason(days))}: {then}.")


def expiry_reason(days: int) -> str:
    """Why an expired plan is stale, in the words its page shows."""
    plural = "s" if days != 1 else ""
    return f"it waited more than {days} day{plural} for approval (the workspace's policy)"


def _cap(words: str) -> str:
    return words[:1].upper() + words[1:]


def _at_or_above(severity: str, chosen: str) -> bool:
    order = {name: rank for rank, name in enumerate(SEVERITIES)}  # refuse first
    return order.get(severity, len(order)) <= order[chosen]


def _findings(plan: Plan, workspace: Workspace) -> RuleCheck:
    level, chosen = workspace.policy_findings, workspace.policy_findings_severity
    if level == PolicyLevel.OFF:
        return RuleCheck(
            FINDINGS, level, False, True, None, "Does not apply: off in this workspace."
        )
    found = [
        s for s in plan.steps if s["type"] == "finding" and _at_or_above(s["severity"], chosen)
    ]
    if not found:
        return RuleCheck(
            FINDINGS, level, False, True, None,
            f"Does not apply: the plan brings no finding {SEVERITY_WORDS[chosen]}.",
        )  # fmt: skip
    first = found[0]
    where = f"@{first['slug']} {first['file']}: " if first.get("slug") else ""
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    then = "approval is blocked" if level == PolicyLevel.REQUIRED else "read them before approving"
    return RuleCheck(
        FINDINGS, level, True, False, None,
        f"The plan brings {len(found)} finding{'s' if len(found) != 1 else ''} "
        f"{SEVERITY_WORDS[chosen]} ({where}{first['message']}{more}): {then}.",
    )  # fmt: skip


def policy_checks(plan: Plan, *, approver, role, workspace=None, now=None) -> list[RuleCheck]:
    """Every rule of the plan's workspace, evaluated for ``approver`` (whose ``role`` there
    the caller knows). Reads nothing beyond the plan, its workspace and their users."""
    workspace = workspace or plan.workspace
    now = now or timezone.now()
    return [
        _second_owner(plan, workspace, approver, role),
        _expiry(plan, workspace, now),
        _findings(plan, workspace),
    ]


def refuse_if_blocked(plan: Plan, checks: list[RuleCheck]) -> None:
    """The first required rule not satisfied, as a refusal naming it."""
    for check in checks:
        if check.blocks:
            raise PermissionRefused(
                f"Plan #{plan.pk} cannot be approved: {check.label.lower()} (the workspace's "
                f"policy). {check.sentence}",
                code=f"policy_{check.id}",
            )


def plan_policy(plan: Plan, *, viewer, role, workspace=None) -> list[PolicyRule]:
    """What a page or the API shows: for a proposed plan, the rules as they stand for this
    viewer; for a decided one, the rules as they were evaluated at its approval."""
    if plan.status != Plan.State.PROPOSED:
        return list(plan.policy or [])
    checks = policy_checks(plan, approver=viewer, role=role, workspace=workspace)
    return [check.as_dict() for check in checks]


def blocking(rules: list[PolicyRule]) -> list[PolicyRule]:
    """The rules that refuse an approval now: required, applying, not satisfied."""
    return [
        rule
        for rule in rules
        if rule["level"] == PolicyLevel.REQUIRED and rule["applies"] and not rule["satisfied"]
    ]


# --- changing the policy --------------------------------------------------------------

FIELDS = {
    "second_owner": "policy_second_owner",
    "expiry": "policy_expiry",
    "expiry_days": "policy_expiry_days",
    "findings": "policy_findings",
    "findings_severity": "policy_findings_severity",
}
LEVEL_FIELDS = ("second_owner", "expiry", "findings")


def policy_settings(workspace: Workspace) -> dict:
    """The workspace's policy as the API and the page name it."""
    return {key: getattr(workspace, field) for key, field in FIELDS.items()}


def _problems(changes: dict) -> list[str]:
    problems = [
        f"{key}: not a setting of the approval policy" for key in changes if key not in FIELDS
    ]
    levels = ", ".join(PolicyLevel.values)
    for key in LEVEL_FIELDS:
        if key in changes and changes[key] not in PolicyLevel.values:
            problems.append(f"{key}: must be one of {levels}; got {changes[key]!r}")
    if "expiry_days" in changes:
        days = changes["expiry_days"]
        low, high = DAYS_RANGE
        if isinstance(days, bool) or not isinstance(days, int) or not low <= days <= high:
            problems.append(f"expiry_days: must be a whole number of days from {low} to {high}; "
                            f"got {days!r}")  # fmt: skip
    severities = ", ".join(SEVERITY_WORDS)
    if "findings_severity" in changes and changes["findings_severity"] not in SEVERITY_WORDS:
        problems.append(
            f"findings_severity: must be one of {severities}; got {changes['findings_severity']!r}"
        )
    return problems


def policy_update(*, workspace: Workspace, actor, changes: dict) -> Workspace:
    """Set some of the workspace's rules (owners only); each change is named in history.
    Nothing changes unless every setting given is valid."""
    require_owner(user=actor, workspace=workspace)
    problems = _problems(changes)
    if problems:
        raise ValidationFailed(problems, code=ErrorCode.INVALID_POLICY)
    with transaction.atomic():
        locked = Workspace.objects.select_for_update().get(pk=workspace.pk)
        said = [
            f"{key} {getattr(locked, FIELDS[key])} → {value}"
            for key, value in changes.items()
            if getattr(locked, FIELDS[key]) != value
        ]
        if said:
            comment = f"Approval policy of {workspace.name}: {'; '.join(said)}"
            loosened = [
                f"{LABELS[key].lower()}: {getattr(locked, FIELDS[key])} → {value}"
                for key, value in changes.items()
                if key in LEVEL_FIELDS
                and STRICTNESS.index(value) < STRICTNESS.index(getattr(locked, FIELDS[key]))
            ]
            with audited(actor=actor, comment=comment):
                for key, value in changes.items():
                    setattr(locked, FIELDS[key], value)
                locked.save(update_fields=[FIELDS[key] for key in changes])
                reversion.add_to_revision(locked)
                if loosened:
                    _tell_loosened(locked, loosened, actor)
    for field in FIELDS.values():  # the caller's copy reads as saved
        setattr(workspace, field, getattr(locked, field))
    return locked


def _tell_loosened(workspace: Workspace, loosened: list[str], actor) -> None:
    """The other owners hear of a rule loosened (a waiting plan is still judged by the
    stricter level, but what comes next is not)."""
    notify(
        kind=Notification.Kind.OWNERS_AND_RULES,
        notices=[
            Notice(
                workspace_id=workspace.pk,
                event=f"policy:{workspace.pk}:{timezone.now().isoformat()}",
                title=f"{actor.username} loosened the approval policy of {workspace.name}: "
                + "; ".join(loosened),
                url=reverse("admin:pixie_workspace_policy", args=[workspace.pk]),
                asker_id=actor.pk,
            )
        ],
    )


# --- expiry -----------------------------------------------------------------------------


def _expire(plan_ids: list[int], workspace: Workspace, *, found_by=None) -> list[int]:
    """Mark the still-proposed plans among ``plan_ids`` (all of ``workspace``) stale with
    the expiry's reason; one history entry for them. Returns the ids it marked."""
    reason = expiry_reason(workspace.policy_expiry_days)
    with transaction.atomic():
        ids = list(
            Plan.objects.select_for_update()
            .filter(pk__in=plan_ids, workspace=workspace, status=Plan.State.PROPOSED)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        if not ids:  # approved, rejected or expired by another run meanwhile
            return []
        who = f" (found when {found_by.username} tried to approve it)" if found_by else ""
        numbers = ", ".join(f"#{pk}" for pk in ids)
        comment = f"Plan{'s' if len(ids) > 1 else ''} {numbers} went stale: {reason}{who}"
        with audited(actor=None, comment=comment):
            finished = timezone.now()
            for plan_id in ids:  # each in its own words, as every stale plan is (plan_apply)
                Plan.objects.filter(pk=plan_id).update(
                    status=Plan.State.STALE,
                    error=f"Plan #{plan_id} is stale: {reason}. Create a new plan if it is "
                    "still wanted.",
                    finished_at=finished,
                )
            for plan in Plan.objects.filter(pk__in=ids):
                reversion.add_to_revision(plan)
        notify_plan_ended(ids)  # its owners are told, with the reason
    return ids


def plan_expire_if_due(*, plan: Plan, actor) -> str:
    """Under a required expiry, a proposed plan past it becomes stale now; its reason, or
    '' when it is not due. (Approving one calls this first.)"""
    workspace = Workspace.objects.get(pk=plan.workspace_id)  # the policy as it stands
    if workspace.policy_expiry != PolicyLevel.REQUIRED:
        return ""
    current = Plan.objects.filter(pk=plan.pk).values_list("status", "created_at").first()
    if current is None or current[0] != Plan.State.PROPOSED:
        return ""
    if timezone.now() <= current[1] + timedelta(days=workspace.policy_expiry_days):
        return ""
    if not _expire([plan.pk], workspace, found_by=actor):
        return ""
    return expiry_reason(workspace.policy_expiry_days)


def plans_expire(*, now=None, limit: int = EXPIRE_BATCH) -> list[int]:
    """Proposed plans past their workspace's required expiry become stale, at most
    ``limit`` a run, oldest first. Safe to run twice or in two workers at once."""
    now = now or timezone.now()
    days = set(
        Workspace.objects.filter(policy_expiry=PolicyLevel.REQUIRED).values_list(
            "policy_expiry_days", flat=True
        )
    )
    if not days:
        return []
    # One query however many workspaces: a condition for each number of days in use.
    due = Q()
    for n in days:
        due |= Q(workspace__policy_expiry_days=n, created_at__lt=now - timedelta(days=n))
    rows = (
        Plan.objects.filter(due, status=Plan.State.PROPOSED,
                            workspace__policy_expiry=PolicyLevel.REQUIRED)
        .order_by("created_at")
        .values_list("pk", "workspace_id")[:limit]
    )  # fmt: skip
    by_workspace: dict[int, list[int]] = {}
    for plan_id, workspace_id in rows:
        by_workspace.setdefault(workspace_id, []).append(plan_id)
    marked: list[int] = []
    for workspace in Workspace.objects.filter(pk__in=list(by_workspace)):
        marked += _expire(by_workspace[workspace.pk], workspace)
    return marked
