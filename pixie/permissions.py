"""Who may see and change a workspace's data. Every page and endpoint asks here.

A workspace's data is visible only to its members (others get 404, so ids of
other workspaces reveal nothing); changing it needs the owner role.
"""

from django.http import Http404

from .errors import PermissionRefused
from .models import Membership, Workspace


def role_in(*, user, workspace) -> str | None:
    if not user.is_authenticated or not user.is_active:
        return None
    return (
        Membership.objects.filter(workspace=workspace, user=user)
        .values_list("role", flat=True)
        .first()
    )


def workspace_for_member(*, user, slug: str) -> tuple[Workspace, str]:
    """The workspace and the user's role in it, or 404 for anyone not a member."""
    if not user.is_authenticated or not user.is_active:
        raise Http404("No such workspace.")
    membership = (
        Membership.objects.select_related("workspace")
        .filter(workspace__slug=slug, user=user)
        .first()
    )
    if membership is None:
        raise Http404("No such workspace.")
    return membership.workspace, membership.role


def require_owner(*, user, workspace, role: str | None = None) -> None:
    role = role if role is not None else role_in(user=user, workspace=workspace)
    if role is None:
        raise Http404("No such workspace.")
    if role != Membership.Role.OWNER:
        raise PermissionRefused(
            f"Only an owner of {workspace.name} can do this; you are a member.",
            code="owner_required",
        )
