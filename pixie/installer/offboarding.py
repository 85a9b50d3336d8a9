"""A person leaves: their login is deactivated, never deleted, so every change they made
stays attributed to them.

Deactivating revokes their API tokens (Pixie's and DRF's older ones), removes their
memberships, and marks the plans they asked for that still wait (proposed) so another
owner takes them over or rejects them. It is refused while they are the last owner of
a workspace: someone else must be made an owner first.

The admin's user page runs the same on saving "Active" unchecked (a signal), so no path
that deactivates a login leaves its tokens working.
"""

from __future__ import annotations

import reversion
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone
from rest_framework.authtoken.models import Token

from catalog.models import Plan
from pixie.core.audit.records import audited
from pixie.core.errors import ErrorCode, StateError
from pixie.core.models import Membership
from pixie.core.people.tokens import tokens_revoke_all


def last_owned(user) -> list[str]:
    """The names of the workspaces ``user`` is the only owner of."""
    owned = Membership.objects.filter(user=user, role=Membership.Role.OWNER).values("workspace_id")
    return list(
        Membership.objects.filter(workspace_id__in=owned)
        .values("workspace_id", "workspace__name")
        .annotate(owners=Count("id", filter=Q(role=Membership.Role.OWNER)))
        .filter(owners=1)
        .values_list("workspace__name", flat=True)
        .order_by("workspace__name")
    )


def login_deactivate(*, user, actor) -> dict:
    """Deactivate ``user`` and undo what the login could still do. Returns what was
    done, in counts."""
    alone = last_owned(user)
    if alone:
        raise StateError(
            f"{user.username} is the last owner of {', '.join(alone)}; make someone else an "
            "owner there first",
            code=ErrorCode.LAST_OWNER,
        )
    with audited(actor=actor, comment=f"Deactivated {user.username}"):
        done = offboard(user=user, actor=actor)
        if user.is_active:
            user.is_active = False
            user.save(update_fields=["is_active"])  # the signal's offboard finds nothing left
    return done


def offboard(*, user, actor) -> dict:
    """Revoke, remove and mark, for a login already inactive (idempotent)."""
    with transaction.atomic():
        tokens = tokens_revoke_all(user=user, actor=actor)
        Token.objects.filter(user=user).delete()
        memberships = list(Membership.objects.filter(user=user).select_related("workspace"))
        Membership.objects.filter(pk__in=[m.pk for m in memberships]).delete()
        if reversion.is_active():  # each workspace's history records who left it
            for membership in memberships:
                reversion.add_to_revision(membership.workspace)
        plans = Plan.objects.filter(
            Q(created_by=user, taken_over_by=None) | Q(taken_over_by=user),
            status=Plan.State.PROPOSED,
            asker_left_at=None,
        ).update(asker_left_at=timezone.now())
    return {"tokens": tokens, "memberships": len(memberships), "plans": plans}


def user_deactivated(sender, instance, **kwargs):
    """post_save of a login: one saved inactive (the admin's user page, a shell) loses
    its tokens and memberships as login_deactivate would take them."""
    if instance.is_active or kwargs.get("raw"):
        return
    update_fields = kwargs.get("update_fields")
    if update_fields is not None and "is_active" not in update_fields:
        return
    offboard(user=instance, actor=None)
