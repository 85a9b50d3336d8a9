"""A workspace's members, run by its owners: make a login for someone new, change a role,
remove someone. A workspace always keeps at least one owner; every change is recorded.
Someone who may have a login already joins by invitation (pixie.core.people.invitations): an owner
never names an existing login, so adding people tells nothing about who has one.

A login made here has no password: the owner is shown a one-time link (Django's password
reset token, which stops working once a password is set) and gives it to the person.
Pixie sends nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import reversion
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from pixie.core.audit.records import audited
from pixie.core.errors import ErrorCode, StateError, ValidationFailed
from pixie.core.models import ApiToken, Membership, Notification, Workspace
from pixie.core.notifications.service import Notice, notify
from pixie.core.people.permissions import require_owner

ROLES = [choice for choice, _ in Membership.Role.choices]


@dataclass
class Added:
    membership: Membership
    # The one-time link to set a password, for a login made here; shown once.
    password_link: str = ""


def site_url_for(request) -> str:
    """Where a link shown on a page starts: PIXIE_SITE_URL (or PIXIE_PUBLIC_URL) when set,
    else the address the page was asked at (Django checks its Host against ALLOWED_HOSTS)."""
    from django.conf import settings

    if settings.PIXIE_SITE_URL_GIVEN or request is None:
        return settings.PIXIE_SITE_URL
    return request.build_absolute_uri("/").rstrip("/")


def password_link(user, *, site_url: str = "") -> str:
    """A link that lets ``user`` set a password once (it stops working when one is set,
    and after PASSWORD_RESET_TIMEOUT)."""
    from django.conf import settings

    uid = urlsafe_base64_encode(force_bytes(user.pk))
    path = reverse("password-set", args=[uid, default_token_generator.make_token(user)])
    return f"{site_url or settings.PIXIE_SITE_URL}{path}"


def username_problems(username: str) -> list[str]:
    """What is wrong with a new login's username (Django's own rule), as problems."""
    try:
        UnicodeUsernameValidator()(username)
        if not username or len(username) > 150:
            raise ValidationError("empty")
    except ValidationError:
        return [
            "username: 1 to 150 letters, digits and @/./+/-/_ only"
            + (f"; got {username[:40]!r}" if username else "")
        ]
    return []


def _role(role: str) -> str:
    if role not in ROLES:
        raise ValidationFailed(f"role: must be one of {', '.join(ROLES)}; got {role[:20]!r}")
    return role


def _locked(workspace: Workspace) -> Workspace:
    # The workspace row is the lock every writer of the workspace takes (as plans do):
    # two owners demoting each other at once cannot leave it with none.
    return Workspace.objects.select_for_update().get(pk=workspace.pk)


def member_add(
    *,
    workspace: Workspace,
    actor,
    username: str,
    role: str = Membership.Role.MEMBER,
    create: bool = True,
    email: str = "",
    site_url: str = "",
) -> Added:
    """Make a login and add it, returning its password link. (``create`` False, the old
    way to add an existing login, is refused: that is an invitation now.)"""
    require_owner(user=actor, workspace=workspace)
    User = get_user_model()
    username = (username or "").strip()
    problems = username_problems(username)
    try:
        _role(role)
    except ValidationFailed as exc:
        problems += exc.problems
    email = (email or "").strip()
    if create and email:
        try:
            validate_email(email)
        except ValidationError:
            problems.append(f"email: {email[:60]!r} is not an email address")
    if problems:
        raise ValidationFailed(problems)
    if not create:  # refused before any lookup: the answer is the same for every username
        raise ValidationFailed(
            "username: Pixie does not add an existing login; invite the person by email "
            "address instead, and they join with their own login when they accept",
            code=ErrorCode.INVITE_INSTEAD,
        )
    with audited(actor=actor, comment=f"Added {username} to {workspace.name} as {role}"):
        _locked(workspace)
        # Making a login cannot avoid saying that its username is taken; that is all
        # this answer tells (not who has it, nor whether they are active).
        if User.objects.filter(username__iexact=username).exists():
            raise ValidationFailed(
                f"username: {username!r} is taken; choose another (to add the person who "
                "may have it, invite them by email address)",
                code=ErrorCode.USERNAME_TAKEN,
            )
        user = User.objects.create_user(username=username, email=email, is_staff=True)
        user.set_unusable_password()
        user.save(update_fields=["password"])
        link = password_link(user, site_url=site_url)
        membership = Membership.objects.create(workspace=workspace, user=user, role=role)
        if role == Membership.Role.OWNER:
            owner_added_notify(workspace=workspace, username=username, actor=actor)
    return Added(membership, link)


def owner_added_notify(*, workspace: Workspace, username: str, actor) -> None:
    """Tell the workspace's other owners that someone became an owner (inside the writing
    transaction: a change rolled back tells nobody)."""
    notify(
        kind=Notification.Kind.OWNERS_AND_RULES,
        notices=[
            Notice(
                workspace_id=workspace.pk,
                event=f"owner:{workspace.pk}:{username}:{timezone.now().isoformat()}",
                title=f"{username} is now an owner of {workspace.name} (made so by "
                f"{actor.username})",
                url=reverse("admin:pixie_workspace_members", args=[workspace.pk]),
                asker_id=actor.pk,
            )
        ],
    )


def _membership(workspace: Workspace, username: str) -> Membership:
    membership = (
        Membership.objects.select_related("user")
        .filter(workspace=workspace, user__username=username)
        .first()
    )
    if membership is None:
        raise ValidationFailed(
            f"{username[:60]!r} is not a member of {workspace.name}", code=ErrorCode.NOT_A_MEMBER
        )
    return membership


def _keeps_an_owner(workspace: Workspace, leaving: Membership) -> None:
    _owners_remain(workspace, [leaving])


def _owners_remain(workspace: Workspace, leaving: list[Membership]) -> None:
    others = (
        Membership.objects.filter(workspace=workspace, role=Membership.Role.OWNER)
        .exclude(pk__in=[membership.pk for membership in leaving])
        .exists()
    )
    if not others:
        names = sorted(membership.user.username for membership in leaving)
        who = (
            f"{names[0]} is the last owner"
            if len(names) == 1
            else f"{', '.join(names[:-1])} and {names[-1]} are the last owners"
        )
        raise StateError(
            f"{who} of {workspace.name}; make someone else an owner first",
            code=ErrorCode.LAST_OWNER,
        )


def memberships_keep_an_owner(
    *, workspace: Workspace, leaving_ids: list[int], owners_arriving: bool
) -> None:
    """For a change of several memberships at once, the workspace's admin form (its
    members inline): refused (StateError) if the owners among ``leaving_ids`` (removed,
    or no longer owners) are all the workspace has and no one becomes an owner with them.
    Call it inside the change's transaction: the workspace row stays locked until the
    change is written, as for member_role_change."""
    if not leaving_ids or owners_arriving:
        return
    workspace = _locked(workspace)
    leaving = list(
        Membership.objects.select_related("user").filter(
            workspace=workspace, pk__in=leaving_ids, role=Membership.Role.OWNER
        )
    )
    if leaving:
        _owners_remain(workspace, leaving)


def member_role_change(*, workspace: Workspace, actor, username: str, role: str) -> Membership:
    require_owner(user=actor, workspace=workspace)
    _role(role)
    with audited(actor=actor, comment=f"Made {username} {role} of {workspace.name}"):
        _locked(workspace)
        membership = _membership(workspace, username)
        if membership.role == role:
            return membership
        if membership.role == Membership.Role.OWNER:
            _keeps_an_owner(workspace, membership)
        membership.role = role
        membership.save(update_fields=["role"])
        if role == Membership.Role.OWNER:
            owner_added_notify(workspace=workspace, username=username, actor=actor)
    return membership


def member_remove(*, workspace: Workspace, actor, username: str) -> None:
    """Remove a member; their tokens limited to this workspace are revoked with it."""
    require_owner(user=actor, workspace=workspace)
    with audited(actor=actor, comment=f"Removed {username} from {workspace.name}"):
        _locked(workspace)
        membership = _membership(workspace, username)
        if membership.role == Membership.Role.OWNER:
            _keeps_an_owner(workspace, membership)
        _revoke_workspace_tokens(membership, actor)
        membership.delete()
        # A deleted row has no version of its own: the workspace's history records it.
        reversion.add_to_revision(workspace)


def _revoke_workspace_tokens(membership: Membership, actor) -> None:
    from django.utils import timezone

    ApiToken.objects.filter(
        user=membership.user_id, workspace=membership.workspace_id, revoked_at=None
    ).update(revoked_at=timezone.now(), revoked_by=actor)


def members_of(workspace: Workspace):
    return (
        Membership.objects.filter(workspace=workspace)
        .select_related("user")
        .order_by("-role", "user__username")  # owners first ("owner" > "member")
    )
