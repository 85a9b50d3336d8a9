"""Egress rules and credential requirements: an owner confirms a credential's value is
supplied, outside Pixie; an apply writes the rules and requirements its plan approved."""

import operator
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import reduce

from django.db.models import Q
from django.utils import timezone

from pixie.core.audit.records import audited
from pixie.core.errors import ErrorCode, ValidationFailed
from pixie.core.people.permissions import require_owner

from .models import CredentialRequirement, EgressRule


def credential_confirm(*, workspace, name: str, actor) -> CredentialRequirement:
    """Record that the owner supplied the credential. Pixie never sees the value."""
    require_owner(user=actor, workspace=workspace)
    requirement = CredentialRequirement.objects.filter(workspace=workspace, name=name).first()
    if requirement is None:
        raise ValidationFailed(
            f"{workspace.name} needs no credential named {name!r}", code=ErrorCode.UNKNOWN
        )
    if requirement.confirmed:
        return requirement
    with audited(actor=actor, comment=f"Confirmed credential {name} is supplied"):
        requirement.confirmed = True
        requirement.confirmed_by = actor
        requirement.confirmed_at = timezone.now()
        requirement.save(update_fields=["confirmed", "confirmed_by", "confirmed_at"])
    return requirement


# --- what an apply writes (pixie.installer.plan_apply) -----------------------------------
# In bulk, inside the apply's one transaction under the workspace's lock; the apply
# records the rows in its own history entry.


@dataclass(frozen=True)
class HostWanted:
    host: str
    port: int
    purpose: str
    credential_name: str


@dataclass(frozen=True)
class CredentialWanted:
    name: str
    host: str
    purpose: str


def egress_rules_apply(
    *,
    workspace,
    plan,
    approver,
    now: datetime,
    add: Iterable[HostWanted],
    remove: Iterable[tuple[str, int]],
) -> list[EgressRule]:
    """The hosts an approved plan lets the workspace reach, and those it no longer needs;
    each new rule names the plan and the owner who approved it."""
    rules = EgressRule.objects.bulk_create(
        EgressRule(
            workspace=workspace,
            host=wanted.host,
            port=wanted.port,
            purpose=wanted.purpose,
            credential_name=wanted.credential_name,
            approved_by=approver,
            approved_at=now,
            plan=plan,
        )
        for wanted in add
    )
    gone = [Q(host=host, port=port) for host, port in remove]
    if gone:  # one DELETE however many hosts the plan drops
        EgressRule.objects.filter(reduce(operator.or_, gone), workspace=workspace).delete()
    return rules


def credential_requirements_apply(
    *, workspace, add: Iterable[CredentialWanted], remove: list[str]
) -> list[CredentialRequirement]:
    """The credential names the workspace now needs supplied, and those it no longer does."""
    requirements = CredentialRequirement.objects.bulk_create(
        CredentialRequirement(
            workspace=workspace, name=wanted.name, host=wanted.host, purpose=wanted.purpose
        )
        for wanted in add
    )
    if remove:
        CredentialRequirement.objects.filter(workspace=workspace, name__in=remove).delete()
    return requirements
