"""A workspace's identity (its key pairs) and the contact card that publishes it."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.urls import reverse

from pixie.core.models import Workspace
from pixie.sharing import crypto
from pixie.sharing.models import Identity

CARD_SENTINEL = "pixie_contact_card"


def inbox_url() -> str:
    """Where other servers deliver envelopes for this server's workspaces."""
    return settings.PIXIE_PUBLIC_URL + reverse("sharing-inbox")


def identity_ensure(*, workspace: Workspace) -> Identity:
    """The workspace's identity, made on first use. Safe when two requests race."""
    identity = Identity.objects.filter(workspace=workspace).first()
    if identity is not None:
        return identity
    keys = crypto.new_key_pairs()
    try:
        with transaction.atomic():
            return Identity.objects.create(
                workspace=workspace,
                box_public_key=crypto.b64(keys.box_public),
                signing_public_key=crypto.b64(keys.signing_public),
                box_private_wrapped=crypto.wrap_private(keys.box_private),
                signing_private_wrapped=crypto.wrap_private(keys.signing_seed),
            )
    except IntegrityError:
        return Identity.objects.get(workspace=workspace)


@dataclass(frozen=True)
class PrivateKeys:
    box_public: bytes
    box_private: bytes
    signing_public: bytes
    signing_seed: bytes


def private_keys(identity: Identity) -> PrivateKeys:
    return PrivateKeys(
        box_public=crypto.key_from_b64(identity.box_public_key),
        box_private=crypto.unwrap_private(identity.box_private_wrapped),
        signing_public=crypto.key_from_b64(identity.signing_public_key),
        signing_seed=crypto.unwrap_private(identity.signing_private_wrapped),
    )


def card_fields(*, workspace: Workspace, identity: Identity) -> dict[str, str]:
    """The card's fields, as they also travel inside every letter as its sender."""
    return {
        "name": workspace.name,
        "workspace": workspace.slug,
        "boxKey": identity.box_public_key,
        "signingKey": identity.signing_public_key,
        "inboxUrl": inbox_url(),
    }


def card_fingerprint(fields: dict[str, str]) -> str:
    """The fingerprint of a card's two keys: what both sides read out to compare."""
    signing, box = crypto.key_from_b64(fields["signingKey"]), crypto.key_from_b64(fields["boxKey"])
    return crypto.fingerprint(signing or b"", box or b"")


def contact_card_export(*, workspace: Workspace) -> dict:
    """The JSON another workspace imports to add this one as a contact."""
    identity = identity_ensure(workspace=workspace)
    return {CARD_SENTINEL: card_fields(workspace=workspace, identity=identity)}
