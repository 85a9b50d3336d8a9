"""Invitations: how a person who may already have a login joins a workspace.

An owner never names an existing login. They invite an email address with a role and
get a one-time link (shown once, kept only as its SHA-256; Pixie sends nothing) to give
the person, who opens it and either joins with the login they are signed in with, or
makes a login of their own, choosing its username and password. So an owner cannot pull
another tenant's owner, an operator or the superuser into a workspace, nor hand anyone a
workspace they did not accept; and nothing an owner is answered tells whether a login,
a username or an email address exists. Making a new login for someone (pixie.core.people.members)
still says when its username is taken, which making one cannot avoid.

A link works once, for INVITATION_DAYS, until an owner revokes it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError
from django.urls import reverse
from django.utils import timezone

from pixie.core.audit.records import audited
from pixie.core.errors import ErrorCode, StateError, ValidationFailed
from pixie.core.models import Invitation, Membership, Workspace
from pixie.core.people.members import owner_added_notify, username_problems
from pixie.core.people.permissions import require_owner
from pixie.core.people.tokens import key_hash

PREFIX = "pixie_inv_"
INVITATION_DAYS = 7
MAX_WAITING = 100  # a workspace's open invitations; a script inviting in a loop stops here
NOT_VALID = (
    "This invitation link is not valid: it may have been used, revoked by an owner, or "
    "have expired. Ask an owner of the workspace for a new one."
)


class InvitationNotValid(StateError):
    code = ErrorCode.INVITATION_NOT_VALID

    def __init__(self):
        super().__init__(NOT_VALID)


@dataclass
class Invited:
    invitation: Invitation
    link: str  # shown once


def invitation_link(secret: str, site_url: str = "") -> str:
    return f"{site_url or settings.PIXIE_SITE_URL}{reverse('invitation-accept', args=[secret])}"


def _waiting(workspace: Workspace):
    return Invitation.objects.filter(
        workspace=workspace, accepted_at=None, revoked_at=None, expires_at__gt=timezone.now()
    )


def invitations_waiting(workspace: Workspace):
    return _waiting(workspace).select_related("invited_by")


def invitation_make(
    *, workspace: Workspace, actor, email: str, role: str, site_url: str = ""
) -> Invited:
    """An invitation and its one-time link (starting with ``site_url``, else the
    setting's), shown once."""
    require_owner(user=actor, workspace=workspace)
    email = (email or "").strip()
    problems = []
    try:
        validate_email(email)
    except ValidationError:
        problems.append(f"email: {email[:60]!r} is not an email address")
    if role not in Membership.Role.values:
        problems.append(
            f"role: must be one of {', '.join(Membership.Role.values)}; got {str(role)[:20]!r}"
        )
    if problems:
        raise ValidationFailed(problems)
    secret = PREFIX + secrets.token_urlsafe(32)
    with audited(actor=actor, comment=f"Invited {email} to {workspace.name} as {role}"):
        # The workspace row is every writer's lock: two owners inviting at once count right.
        Workspace.objects.select_for_update().get(pk=workspace.pk)
        waiting = _waiting(workspace)
        if waiting.filter(email__iexact=email).exists():
            raise StateError(
                f"{email} has an invitation to {workspace.name} waiting already; revoke it "
                "to make a new link",
                code=ErrorCode.ALREADY_INVITED,
            )
        if waiting.count() >= MAX_WAITING:
            raise StateError(
                f"{workspace.name} has {MAX_WAITING} invitations waiting, the most it may; "
                "revoke some first",
                code=ErrorCode.TOO_MANY_INVITATIONS,
            )
        invitation = Invitation.objects.create(
            workspace=workspace, email=email, role=role, key_hash=key_hash(secret),
            invited_by=actor, expires_at=timezone.now() + timedelta(days=INVITATION_DAYS),
        )  # fmt: skip
    return Invited(invitation, invitation_link(secret, site_url))


def invitation_revoke(*, workspace: Workspace, actor, invitation_id: int) -> Invitation:
    require_owner(user=actor, workspace=workspace)
    with audited(actor=actor, comment=f"Revoked an invitation to {workspace.name}"):
        invitation = _waiting(workspace).select_for_update().filter(pk=invitation_id).first()
        if invitation is None:
            raise ValidationFailed(
                f"No invitation to {workspace.name} waiting with id {invitation_id}",
                code=ErrorCode.NO_SUCH_INVITATION,
            )
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
    return invitation


def invitation_by_secret(secret: str) -> Invitation | None:
    """The waiting invitation this secret opens, or None."""
    if not isinstance(secret, str) or not secret.startswith(PREFIX) or len(secret) > 100:
        return None
    invitation = (
        Invitation.objects.select_related("workspace", "invited_by")
        .filter(key_hash=key_hash(secret))
        .first()
    )
    return invitation if invitation is not None and invitation.state == "waiting" else None


def invitation_accept(*, secret: str, user) -> Membership:
    """``user`` (signed in: their consent) joins the workspace with the invited role."""
    with audited(actor=user, comment="Accepted an invitation"):
        invitation = (
            Invitation.objects.select_for_update()
            .filter(key_hash=key_hash(secret) if isinstance(secret, str) else "")
            .first()
        )
        if invitation is None or invitation.state != "waiting":
            raise InvitationNotValid()
        workspace = Workspace.objects.select_for_update().get(pk=invitation.workspace_id)
        if Membership.objects.filter(workspace=workspace, user=user).exists():
            raise StateError(
                f"You are already a member of {workspace.name}; this link is left for "
                "whoever it was meant for",
                code=ErrorCode.ALREADY_MEMBER,
            )
        if not user.is_staff:  # the workspace's pages are the admin's: let them sign in
            user.is_staff = True
            user.save(update_fields=["is_staff"])
        membership = Membership.objects.create(workspace=workspace, user=user, role=invitation.role)
        invitation.accepted_at = timezone.now()
        invitation.accepted_by = user
        invitation.save(update_fields=["accepted_at", "accepted_by"])
        if invitation.role == Membership.Role.OWNER:
            owner_added_notify(workspace=workspace, username=user.username, actor=user)
    return membership


def invitation_accept_new(*, secret: str, username: str, password: str) -> Membership:
    """Make the login the invitee chose and join with it, in one transaction: a taken
    username or a refused password makes nothing."""
    invitation = invitation_by_secret(secret)
    if invitation is None:
        raise InvitationNotValid()
    User = get_user_model()
    username = (username or "").strip()
    problems = username_problems(username)
    candidate = User(username=username, email=invitation.email)
    try:
        password_validation.validate_password(password or "", candidate)
    except ValidationError as exc:
        problems += [f"password: {message}" for message in exc.messages]
    if problems:
        raise ValidationFailed(problems)
    taken = ValidationFailed(
        f"username: {username!r} is taken; choose another", code=ErrorCode.USERNAME_TAKEN
    )
    with audited(actor=None, comment=f"Made the login {username} to accept an invitation"):
        if User.objects.filter(username__iexact=username).exists():
            raise taken
        try:
            user = User.objects.create_user(
                username=username, email=invitation.email, password=password, is_staff=True
            )
        except IntegrityError as exc:  # made at the same moment by someone else
            raise taken from exc
        return invitation_accept(secret=secret, user=user)
