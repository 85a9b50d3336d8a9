"""Which clients run what: a client is one token from one user agent at one network; each
archive it fetched is one row (first and last seen), however often it fetches it again.
Index reads keep the client's last_seen (at most once a minute) and, when the ``skills``
CLI marks them as an update check (X-Skills-Update-Check: 1), when it last checked: an
archive fetched just after one came from ``skills update``."""

from __future__ import annotations

import time
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from pixie.core.web.addresses import client_address, network_of

from .memo import Memo
from .models import ClientFetch, DeliveryClient

SEEN_EVERY = timedelta(minutes=1)
# `skills update` reads the index with its header, then runs `skills add`, which reads the
# index again and fetches the archives: a fetch this soon after an update check is its.
UPDATE_WINDOW = timedelta(minutes=2)
# A token's clients kept; past it, newcomers are counted as one row.
MAX_CLIENTS_A_TOKEN = 500
OVERFLOW = ("(more clients than Pixie keeps apart)", "various")
USER_AGENT_MAX = 200
# What this process recorded lately: (what, token, user agent, network[, digest]) -> when.
RECORDED = Memo(entries=10_000)


def _who(token, request) -> tuple[str, str]:
    user_agent = (request.headers.get("User-Agent") or "")[:USER_AGENT_MAX]
    address = client_address(request.META, behind_proxy=settings.BEHIND_TLS_PROXY)
    return user_agent, network_of(address)


def _recently(*key) -> bool:
    """Whether this process recorded ``key`` less than SEEN_EVERY ago (and note it now if
    not): a client reading again within a minute costs no write."""
    now = time.monotonic()
    last = RECORDED.get(key)
    if last is not None and now - last < SEEN_EVERY.total_seconds():
        return True
    RECORDED.put(key, now)
    return False


def client_for(token, request) -> DeliveryClient:
    user_agent, network = _who(token, request)
    now = timezone.now()
    client = DeliveryClient.objects.filter(
        token=token, user_agent=user_agent, network=network
    ).first()
    if client is not None:
        return client
    if DeliveryClient.objects.filter(token=token).count() >= MAX_CLIENTS_A_TOKEN:
        user_agent, network = OVERFLOW
    with transaction.atomic():
        client, _ = DeliveryClient.objects.get_or_create(
            token=token,
            user_agent=user_agent,
            network=network,
            defaults={"first_seen": now, "last_seen": now},
        )
    return client


def record_index_read(token, request) -> None:
    update_check = request.headers.get("X-Skills-Update-Check") == "1"
    if not update_check and _recently("read", token.key_hash, *_who(token, request)):
        return
    client = client_for(token, request)
    now = timezone.now()
    changes = {}
    if now - client.last_seen > SEEN_EVERY:
        changes["last_seen"] = now
    if update_check:
        changes["last_update_check"] = now
    if changes:
        DeliveryClient.objects.filter(pk=client.pk).update(**changes)


def record_fetch(token, request, entry) -> None:
    """A skill's archive fetched (the skills CLI)."""
    if not _recently("fetch", token.key_hash, *_who(token, request), entry.digest):
        _record(token, request, [entry])


def record_plugin_fetch(token, request, plugin) -> None:
    """A Claude Code plugin's archive fetched: the client now holds each of its skills."""
    if not _recently("plugin", token.key_hash, *_who(token, request), plugin.digest):
        _record(token, request, plugin.skills)


def _record(token, request, entries) -> None:
    client = client_for(token, request)
    now = timezone.now()
    checked = client.last_update_check
    from_update = checked is not None and now - checked <= UPDATE_WINDOW
    ClientFetch.objects.bulk_create(
        [
            ClientFetch(
                client=client,
                digest=entry.digest,
                skill_id=entry.skill_id,
                revision_id=entry.revision_id,
                override_id=entry.override_id,
                first_seen=now,
                last_seen=now,
                update_check=from_update,
            )
            for entry in entries
        ],
        update_conflicts=True,
        unique_fields=["client", "digest"],
        update_fields=["last_seen", "update_check"],
    )
    if now - client.last_seen > SEEN_EVERY:
        DeliveryClient.objects.filter(pk=client.pk).update(last_seen=now)
