"""Delivery tokens: a workspace's, not a person's. An owner makes one for an agent or for
the whole workspace; it reads that workspace's delivery URLs and nothing else (API tokens
do not read delivery URLs; a delivery token authenticates nowhere else), is shown once,
stored as its SHA-256, and survives its maker leaving. Revoking it ends it on the next
request: nothing caches the lookup."""

from __future__ import annotations

import datetime
import hashlib
import secrets
from datetime import timedelta

import reversion
from django.db import connection
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

from agents.models import Agent
from pixie.core.audit.records import audited
from pixie.core.errors import ErrorCode, ValidationFailed
from pixie.core.names import name_problem
from pixie.core.people.permissions import require_owner

from .index import token_with_state_sql
from .models import DeliveryToken

# A prefix of its own: never mistaken for an API token (pixie_), in a log or by a scanner.
PREFIX = "pxd_"
SHOWN_CHARS = 10
LAST_USED_EVERY = timedelta(minutes=1)
MAX_LIVE_TOKENS = 200  # a workspace's live delivery tokens


def key_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@sensitive_variables("secret")
def delivery_token_create(*, workspace, actor, name: str, agent: Agent | None = None):
    """A new token of ``workspace`` (its owners make them): the row and the secret, which
    is never stored and never shown again."""
    require_owner(user=actor, workspace=workspace)
    name = (name or "").strip()
    problems = []
    if not name:
        problems.append("name: give the token a name (the machine or team that uses it)")
    elif len(name) > 80:
        problems.append("name: at most 80 characters")
    elif problem := name_problem(name):
        problems.append(f"name: {problem}")
    if agent is not None and agent.workspace_id != workspace.pk:
        problems.append(f"agent: {workspace.name} has no such agent")
    if problems:
        raise ValidationFailed(problems)
    secret = PREFIX + secrets.token_urlsafe(32)
    scope = f"agent {agent.name}" if agent else "the workspace"
    with audited(actor=actor, comment=f"Made delivery token {name!r} for {scope}"):
        if live_tokens(workspace).count() >= MAX_LIVE_TOKENS:
            raise ValidationFailed(
                f"{workspace.name} has {MAX_LIVE_TOKENS} live delivery tokens already; "
                "revoke one first",
                code=ErrorCode.TOO_MANY_TOKENS,
            )
        token = DeliveryToken.objects.create(
            workspace=workspace,
            agent=agent,
            name=name,
            prefix=secret[:SHOWN_CHARS],
            key_hash=key_hash(secret),
            created_by=actor,
        )
    return token, secret


def delivery_token_revoke(*, token: DeliveryToken, actor) -> DeliveryToken:
    require_owner(user=actor, workspace=token.workspace)
    with audited(actor=actor, comment=f"Revoked delivery token {token.name!r}"):
        DeliveryToken.objects.filter(pk=token.pk, revoked_at=None).update(
            revoked_at=timezone.now(), revoked_by=actor
        )
        token.refresh_from_db()
        reversion.add_to_revision(token)
    return token


def delivery_token_rotate(*, token: DeliveryToken, actor) -> tuple[DeliveryToken, str]:
    """Revoke ``token`` and make its replacement, same name and scope, in one transaction:
    what an owner does when a URL was seen where it should not be."""
    with audited(actor=actor, comment=f"Rotated delivery token {token.name!r}"):
        delivery_token_revoke(token=token, actor=actor)
        return delivery_token_create(
            workspace=token.workspace, actor=actor, name=token.name, agent=token.agent
        )


def live_tokens(workspace):
    return DeliveryToken.objects.filter(workspace=workspace, revoked_at=None)


@sensitive_variables("secret")
def token_for_secret(secret: str) -> DeliveryToken | None:
    """The live token with this secret, or None (a wrong and a revoked one alike), read
    with the state of what its index is computed from (``token.state``, index.py), in one
    statement written once (index.token_with_state_sql): every client request starts here, and
    building the same query through the ORM cost more than the rest of the request."""
    if not secret.startswith(PREFIX) or len(secret) > 100:
        return None
    with connection.cursor() as cursor:
        cursor.execute(token_with_state_sql(), [key_hash(secret)])
        row = cursor.fetchone()
    if row is None:
        return None
    pk, workspace_id, agent_id, hashed, last_used_at, state = row
    token = DeliveryToken(
        pk=pk, workspace_id=workspace_id, agent_id=agent_id, key_hash=hashed,
        last_used_at=_moment(last_used_at),
    )  # fmt: skip
    token.state = state
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_EVERY:
        DeliveryToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


def _moment(value):
    """A time read with a plain cursor: PostgreSQL's is aware; SQLite's is its text, in UTC."""
    value = DeliveryToken._meta.get_field("last_used_at").to_python(value)
    if value is not None and timezone.is_naive(value):
        value = timezone.make_aware(value, datetime.UTC)
    return value
