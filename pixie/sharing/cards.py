"""Hard validation of contact cards, which arrive from outside like any other input."""

from __future__ import annotations

import json

from django.conf import settings

from pixie.core.errors import ValidationFailed
from pixie.core.namespace.engine import is_slug
from pixie.sharing import crypto

from .destinations import inbox_url_problems
from .identities import CARD_SENTINEL

MAX_CARD_BYTES = 4096
MAX_NAME = 80


def card_problems(fields: object) -> list[str]:
    """Everything wrong with a card's fields (empty when it is well-formed)."""
    if not isinstance(fields, dict) or fields.keys() != crypto.SENDER_FIELDS:
        expected = ", ".join(sorted(crypto.SENDER_FIELDS))
        return [f"a contact card must have exactly the fields {expected}"]
    problems = []
    name = fields["name"]
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
        problems.append(f"name must be text of 1 to {MAX_NAME} characters")
    elif any(ord(ch) < 32 for ch in name):
        problems.append("name must not contain control characters")
    if not is_slug(fields["workspace"]):
        problems.append("workspace must be a workspace slug")
    for field in ("boxKey", "signingKey"):
        if crypto.key_from_b64(fields[field]) is None:
            problems.append(f"{field} must be a 32-byte public key in base64")
    # Shape only: whether this server will connect there is decided when the card
    # is added (contacts.py) and at each delivery, by looking the host up.
    problems.extend(
        inbox_url_problems(fields["inboxUrl"], allow_http=settings.PIXIE_ALLOW_HTTP_INBOX)
    )
    return problems


def card_parse(card: object) -> dict[str, str]:
    """The fields of a contact card given as JSON text or as parsed JSON."""
    if isinstance(card, str | bytes):
        if len(card) > MAX_CARD_BYTES:
            raise ValidationFailed(f"a contact card is at most {MAX_CARD_BYTES} bytes")
        try:
            card = json.loads(card)
        except (ValueError, RecursionError):
            raise ValidationFailed("the contact card is not JSON") from None
    if not isinstance(card, dict) or card.keys() != {CARD_SENTINEL}:
        raise ValidationFailed(f"a contact card is a JSON object with one key, {CARD_SENTINEL}")
    fields = card[CARD_SENTINEL]
    problems = card_problems(fields)
    if problems:
        raise ValidationFailed([f"contact card: {problem}" for problem in problems])
    return {key: value.strip() if key == "name" else value for key, value in fields.items()}
