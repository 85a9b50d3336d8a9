"""Credential requirements: the owner confirms a value is supplied, outside Pixie."""

from django.utils import timezone

from pixie.core.audit.records import audited
from pixie.core.errors import ErrorCode, ValidationFailed
from pixie.core.people.permissions import require_owner

from .models import CredentialRequirement


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
