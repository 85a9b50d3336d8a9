"""API tokens: a person's own, named, each maybe limited to one workspace and to reading.

The secret is shown once, when the token is made; Pixie keeps only its SHA-256, so a
copy of the database holds no usable token. A request presents it as
``Authorization: Token pixie_…`` (or ``Bearer``); the lookup is one indexed query, made
on every request, so a revoked token fails on the very next one (nothing caches it).

Tokens made before these (``manage.py drf_create_token``, Django REST framework's own,
one per login) still authenticate through DRF's class after this one; deactivating a
login deletes them too (pixie.installer.offboarding).
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

import reversion
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions, permissions

from pixie.core.audit.records import audited
from pixie.core.errors import ErrorCode, PermissionRefused, ValidationFailed
from pixie.core.models import ApiToken, Membership, Workspace
from pixie.core.names import name_problem
from pixie.core.people.permissions import require_owner
from pixie.core.plain_reads import token_with_user

PREFIX = "pixie_"
SHOWN_CHARS = 12  # "pixie_" and six characters of the secret: enough to tell tokens apart
# last_used_at is written at most this often a token: reads stay reads.
LAST_USED_EVERY = timedelta(minutes=1)
MAX_ACTIVE_TOKENS = 50  # a person's live tokens; a script minting them in a loop stops here


def key_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_create(
    *,
    user,
    actor,
    name: str,
    workspace: Workspace | None = None,
    read_only: bool = False,
    via: ApiToken | None = None,
) -> tuple[ApiToken, str]:
    """A new token for ``user`` (made by themselves): the row and the secret, which is
    never stored and never shown again. ``via``: the token the request came with, if
    any; a limited one cannot mint a wider token."""
    if via is not None and (via.workspace_id or via.read_only):
        raise PermissionRefused(
            "A token limited to a workspace or to reading cannot make tokens; sign in, or "
            "use an unlimited token.",
            code=ErrorCode.TOKEN_LIMITED,
        )
    name = (name or "").strip()
    problems = []
    if not name:
        problems.append("name: give the token a name (what or who uses it)")
    elif len(name) > 80:
        problems.append("name: at most 80 characters")
    elif problem := name_problem(name):
        problems.append(f"name: {problem}")
    if (
        workspace is not None
        and not Membership.objects.filter(user=user, workspace=workspace).exists()
    ):
        problems.append(f"workspace: you are not a member of {workspace.slug}")
    if problems:
        raise ValidationFailed(problems)
    if actor.pk != user.pk:
        raise PermissionRefused("A token is made by the person it acts for.")
    secret = PREFIX + secrets.token_urlsafe(32)
    with audited(actor=actor, comment=f"Made API token {name!r}"):
        if ApiToken.objects.filter(user=user, revoked_at=None).count() >= MAX_ACTIVE_TOKENS:
            raise ValidationFailed(
                f"You have {MAX_ACTIVE_TOKENS} live tokens already; revoke one first",
                code=ErrorCode.TOO_MANY_TOKENS,
            )
        token = ApiToken.objects.create(
            user=user,
            name=name,
            prefix=secret[:SHOWN_CHARS],
            key_hash=key_hash(secret),
            workspace=workspace,
            read_only=read_only,
        )
    return token, secret


def tokens_of_workspace(workspace: Workspace):
    """The live tokens limited to a workspace: the ones its owners see and revoke. A
    person's tokens limited to no workspace, or to others, are theirs alone (an owner who
    could list them would learn of, and cut off, the person's work elsewhere); removing
    the person from the workspace is what stops those reaching it."""
    return (
        ApiToken.objects.filter(revoked_at=None, workspace=workspace)
        .select_related("user", "workspace")
        .order_by("user__username", "-created_at")
    )


def token_revoke(*, token: ApiToken, actor, workspace: Workspace | None = None) -> ApiToken:
    """Revoke a token: its person may revoke it, and an owner of the workspace it is
    limited to (``workspace``: the one the owner acts for). It fails on the next request."""
    if token.user_id != actor.pk:
        if workspace is None or not tokens_of_workspace(workspace).filter(pk=token.pk).exists():
            raise PermissionRefused("Only its person, or an owner of the workspace it is limited "
                                    "to, can revoke this token.")  # fmt: skip
        require_owner(user=actor, workspace=workspace)
    with audited(actor=actor, comment=f"Revoked API token {token.name!r} of {token.user}"):
        ApiToken.objects.filter(pk=token.pk, revoked_at=None).update(
            revoked_at=timezone.now(), revoked_by=actor
        )
        token.refresh_from_db()
        reversion.add_to_revision(token)
    return token


def tokens_revoke_all(*, user, actor) -> int:
    """Every live token of ``user``, revoked in one statement (offboarding)."""
    with transaction.atomic():
        return ApiToken.objects.filter(user=user, revoked_at=None).update(
            revoked_at=timezone.now(), revoked_by=actor
        )


class ApiTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Token pixie_…`` or ``Bearer pixie_…``. Keys without the prefix
    are left to DRF's own TokenAuthentication (tokens from drf_create_token)."""

    keywords = ("token", "bearer")

    def authenticate(self, request):
        words = authentication.get_authorization_header(request).split()
        if len(words) != 2 or words[0].lower().decode(errors="replace") not in self.keywords:
            return None
        try:
            secret = words[1].decode()
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Invalid token.") from None
        if not secret.startswith(PREFIX):
            return None
        token = token_with_user(
            ApiToken, column="key_hash", value=key_hash(secret), related=("workspace",)
        )
        if token is None or token.revoked_at is not None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at > LAST_USED_EVERY:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request):
        return "Token"


class LoginTokenAuthentication(authentication.TokenAuthentication):
    """DRF's one-per-login tokens (``manage.py drf_create_token``), after
    ApiTokenAuthentication, which leaves them alone: refused as DRF refuses them, read
    in one statement as Pixie's own are."""

    def authenticate_credentials(self, key):
        token = token_with_user(self.get_model(), column="key", value=key)
        if token is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return token.user, token


class TokenLimits(permissions.BasePermission):
    """What a limited token may not do, whatever its person may: a read-only token
    changes nothing; a token limited to a workspace reaches that workspace's endpoints
    and reads the catalog, nothing else."""

    def has_permission(self, request, view):
        token = request.auth
        if not isinstance(token, ApiToken):
            return True
        safe = request.method in permissions.SAFE_METHODS
        if token.read_only and not safe:
            raise PermissionRefused(
                f"The token {token.name!r} is read-only: it cannot change anything.",
                code=ErrorCode.TOKEN_READ_ONLY,
            )
        if token.workspace_id is None:
            return True
        slug = view.kwargs.get("workspace") if hasattr(view, "kwargs") else None
        if slug is not None:
            if slug != token.workspace.slug:
                # As for a workspace one is not a member of: nothing says it exists.
                raise exceptions.NotFound("No such workspace.")
            return True
        if safe and request.path.startswith(CATALOG_READS):
            return True
        raise PermissionRefused(
            f"The token {token.name!r} is limited to the workspace {token.workspace.slug}.",
            code=ErrorCode.TOKEN_WORKSPACE_LIMITED,
        )


# What a workspace-limited token reads outside its workspace: the catalog it installs from.
CATALOG_READS = ("/api/bundles/",)
