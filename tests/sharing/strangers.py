"""Envelopes from senders nobody here knows: fresh key pairs, genuinely signed and sealed.

What a stranger with a workspace's contact card (or just its box key) can post
to the public inbox; the inbox opens and accepts these as well-formed.
"""

import uuid
from dataclasses import dataclass

from django.test import Client
from django.utils import timezone

from pixie.core.models import Workspace
from pixie.sharing import crypto
from pixie.sharing import services as sharing
from pixie.sharing.envelopes import envelope_dump


@dataclass(frozen=True)
class Stranger:
    name: str
    keys: crypto.KeyPairs

    @property
    def card(self) -> dict[str, str]:
        return {
            "name": self.name,
            "workspace": "elsewhere",
            "boxKey": crypto.b64(self.keys.box_public),
            "signingKey": crypto.b64(self.keys.signing_public),
            "inboxUrl": "https://elsewhere.example/api/inbox/",
        }


def stranger(name: str = "Stranger") -> Stranger:
    return Stranger(name=name, keys=crypto.new_key_pairs())


def envelope(to: Workspace, *, sender: Stranger | None = None, body: str = "Hello!") -> bytes:
    """A valid envelope for ``to`` from ``sender`` (a fresh stranger if none)."""
    sender = sender or stranger()
    box_key = sharing.identity_ensure(workspace=to).box_public_key
    message_id = uuid.uuid4()
    sealed = crypto.seal(
        message_id=str(message_id),
        recipient_box_public=crypto.key_from_b64(box_key),
        sender=sender.card,
        signing_seed=sender.keys.signing_seed,
        sent_at=timezone.now().isoformat(),
        body=body,
    )
    return envelope_dump(message_id=message_id, to=box_key, sealed=sealed)


def post(raw: bytes, client: Client | None = None, **headers):
    return (client or Client()).generic(
        "POST", "/api/inbox/", raw, content_type="application/json", **headers
    )
